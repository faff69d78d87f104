"""The real models ``dhc-bench models`` builds (kept apart so listing them loads no torch)."""

MODELS = ("resnet50", "vgg19", "bert_base", "lstm", "ncf")

"""Bytes and time per worker for real models' gradients (``models``): the model list
(``model_names``) and the models built from torch/transformers configs (``models_zoo``)."""

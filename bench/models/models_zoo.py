"""Real architectures, instantiated locally with random weights (nothing is downloaded), and one
training step on generated inputs: ResNet-50 and VGG19 (written with ``torch.nn``, the
torchvision layouts: 25.6 M and 143.7 M parameters), BERT-base (``transformers``'
``BertForMaskedLM`` from a default ``BertConfig``, 110 M), a 2-layer LSTM language model
(PTB-medium sizes, 20 M; its embedding gradients are sparse) and NCF (NeuMF on
MovieLens-20M-sized tables, 138 k users x 27 k items; embedding gradients naturally sparse).

``gradient(name, rank)`` returns the flat float32 gradient of one step of rank ``rank`` (each
rank draws its own batch) and the step's wall time.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from bench.models.model_names import MODELS


class Bottleneck(nn.Module):
    def __init__(self, cin: int, width: int, stride: int) -> None:
        super().__init__()
        out = width * 4
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, out, 1, bias=False), nn.BatchNorm2d(out))
        self.skip = (nn.Sequential(nn.Conv2d(cin, out, 1, stride, bias=False), nn.BatchNorm2d(out))
                     if stride != 1 or cin != out else nn.Identity())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.skip(x))


def resnet50(classes: int = 1000) -> nn.Module:
    layers: list[nn.Module] = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                               nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for b in range(blocks):
            layers.append(Bottleneck(cin, width, stride if b == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def vgg19(classes: int = 1000) -> nn.Module:
    layers: list[nn.Module] = []
    cin = 3
    for v in (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
              512, 512, 512, 512, "M"):
        if v == "M":
            layers.append(nn.MaxPool2d(2))
        else:
            layers += [nn.Conv2d(cin, v, 3, padding=1), nn.ReLU(inplace=True)]
            cin = v
    layers += [nn.AdaptiveAvgPool2d(7), nn.Flatten(), nn.Linear(512 * 49, 4096), nn.ReLU(inplace=True),
               nn.Dropout(), nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(),
               nn.Linear(4096, classes)]
    return nn.Sequential(*layers)


class LSTMLM(nn.Module):
    def __init__(self, vocab: int = 10_000, hidden: int = 650) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, 2, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.out(self.lstm(self.embed(tokens))[0])


class NCF(nn.Module):
    """NeuMF: GMF and MLP towers over user/item embeddings."""

    def __init__(self, users: int = 138_493, items: int = 26_744, dim: int = 64) -> None:
        super().__init__()
        self.gu, self.gi = nn.Embedding(users, dim), nn.Embedding(items, dim)
        self.mu, self.mi = nn.Embedding(users, dim), nn.Embedding(items, dim)
        self.mlp = nn.Sequential(nn.Linear(2 * dim, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                                 nn.Linear(128, 64), nn.ReLU())
        self.head = nn.Linear(dim + 64, 1)

    def forward(self, u: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        gmf = self.gu(u) * self.gi(i)
        mlp = self.mlp(torch.cat([self.mu(u), self.mi(i)], dim=1))
        return self.head(torch.cat([gmf, mlp], dim=1)).squeeze(1)


def _bert() -> nn.Module:
    from transformers import BertConfig, BertForMaskedLM
    return BertForMaskedLM(BertConfig())


def build(name: str) -> nn.Module:
    """The model ``name`` with seeded random weights."""
    torch.manual_seed(0)
    builders = {"resnet50": resnet50, "vgg19": vgg19, "bert_base": _bert, "lstm": LSTMLM, "ncf": NCF}
    if name not in builders:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODELS)}")
    return builders[name]()


def _loss(name: str, model: nn.Module, g: torch.Generator) -> torch.Tensor:
    if name in ("resnet50", "vgg19"):
        x = torch.randn(2, 3, 64, 64, generator=g)
        return nn.functional.cross_entropy(model(x), torch.randint(0, 1000, (2,), generator=g))
    if name == "bert_base":
        tokens = torch.randint(0, 30522, (2, 64), generator=g)
        return model(input_ids=tokens, labels=tokens).loss
    if name == "lstm":
        tokens = torch.randint(0, 10_000, (4, 35), generator=g)
        logits = model(tokens[:, :-1])
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
    users = torch.randint(0, 138_493, (256,), generator=g)
    items = torch.randint(0, 26_744, (256,), generator=g)
    labels = torch.randint(0, 2, (256,), generator=g).float()
    return nn.functional.binary_cross_entropy_with_logits(model(users, items), labels)


def gradient(name: str, rank: int, model: nn.Module | None = None) -> tuple[np.ndarray, float, int]:
    """(flat float32 gradient, seconds of the forward+backward step, parameter count)."""
    model = model or build(name)
    model.train()
    model.zero_grad(set_to_none=False)
    g = torch.Generator().manual_seed(1000 + rank)
    start = time.perf_counter()
    _loss(name, model, g).backward()
    step_s = time.perf_counter() - start
    params = [p for p in model.parameters() if p.requires_grad]
    flat = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in params])
    return flat.detach().numpy().astype(np.float32, copy=False), step_s, sum(p.numel() for p in params)

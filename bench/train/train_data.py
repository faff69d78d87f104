"""Data and models of the training benchmarks: scikit-learn's bundled digits, two CNNs.

The data set ships inside scikit-learn (1,797 8x8 grey images of the digits 0-9), so nothing is
downloaded at run time.  ``digits_split`` is deterministic: the same train/test split and the
same per-rank shards on every worker.  Models: ``small`` (~52 k parameters, compute-bound, the
codec benchmark's) and ``large`` (~4.3 M parameters, where communication matters: 17 MB of
float32 gradient per step).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

#: images held out for the test accuracy
TEST_SHARE = 0.25
SPLIT_SEED = 7


@dataclass(frozen=True)
class Split:
    """Train and test tensors: images (n, 1, 8, 8) scaled to [0, 1], labels (n,)."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor


def digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """(images (1797, 8, 8) float64, target (1797,) int): ``load_digits()``'s, read from the CSV
    file scikit-learn ships without importing scikit-learn (seconds per process that every rank of
    a torchrun job pays at each start), else through ``load_digits``."""
    spec = importlib.util.find_spec("sklearn")
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = Path(root) / "datasets" / "data" / "digits.csv.gz"
        if path.is_file():
            data = np.loadtxt(path, delimiter=",")
            return data[:, :-1].reshape(-1, 8, 8), data[:, -1].astype(int)
    from sklearn.datasets import load_digits
    bunch = load_digits()
    return bunch.images, bunch.target


def digits_split() -> Split:
    """The digits data set, shuffled once with a fixed seed and split train/test."""
    images, target = digits_arrays()
    x = torch.tensor(images / 16.0, dtype=torch.float32).unsqueeze(1)
    y = torch.tensor(target, dtype=torch.long)
    order = torch.from_numpy(np.random.default_rng(SPLIT_SEED).permutation(len(y)))
    x, y = x[order], y[order]
    n_test = int(len(y) * TEST_SHARE)
    return Split(x[n_test:], y[n_test:], x[:n_test], y[:n_test])


def batch_for(
    split: Split, rank: int, world: int, step: int, batch: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Worker ``rank``'s mini-batch of step ``step``: disjoint shards of the training set,
    walked in a fixed per-step order (data-parallel SGD with a global batch of world * batch)."""
    n = len(split.y_train)
    g = torch.Generator().manual_seed(1000 * step + 17)
    idx = torch.randperm(n, generator=g)[: world * batch].view(world, batch)[rank]
    return split.x_train[idx], split.y_train[idx]


def make_model(name: str) -> nn.Module:
    """A CNN for 8x8 digits; the same initial weights on every rank (seeded)."""
    torch.manual_seed(1234)
    if name == "small":        # ~52 k parameters
        return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(),
                             nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(64 * 16, 32), nn.ReLU(), nn.Linear(32, 10))
    if name == "large":        # ~4.3 M parameters, most in the first dense layer
        return nn.Sequential(nn.Conv2d(1, 64, 3, padding=1), nn.ReLU(),
                             nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(),
                             nn.Flatten(), nn.Linear(128 * 64, 512), nn.ReLU(),
                             nn.Linear(512, 10))
    raise ValueError(f"unknown model {name!r}: choose small or large")


MODELS = ("small", "large")


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@torch.no_grad()
def accuracy(model: nn.Module, split: Split) -> float:
    """Share of the test images classified correctly."""
    model.eval()
    pred = model(split.x_test).argmax(dim=1)
    model.train()
    return float((pred == split.y_test).float().mean())

"""Real gradient-like data: a small numpy MLP trained a few SGD steps, then each worker's gradient
on its own mini-batch (data parallelism), flattened to one float32 vector per worker.

The task is a synthetic 10-class problem (Gaussian class centres in ``n_inputs`` dimensions
plus noise), so no dataset download is needed; what matters is that the gradients come from real
backpropagation through ReLU layers and softmax cross-entropy: heavy-tailed magnitudes, layer
structure, supports correlated across workers after top-k.  torch is not required.

``python -m bench.codec.gradients --out bench/out/gradients.npz`` dumps the workers' gradients.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class MLPGradients:
    """Per-worker flat gradients and how the model got there."""

    grads: list[np.ndarray]             # one float32 vector per worker
    layer_sizes: list[int]              # parameters per tensor, in flat order
    losses: list[float] = field(default_factory=list)   # training loss per SGD step

    @property
    def dim(self) -> int:
        return int(self.grads[0].size)


class MLP:
    """ReLU MLP with softmax cross-entropy; parameters in a list [W1, b1, W2, b2, ...]."""

    def __init__(self, sizes: list[int], rng: np.random.Generator) -> None:
        self.params: list[np.ndarray] = []
        for a, b in zip(sizes[:-1], sizes[1:], strict=True):
            self.params.append((rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32))
            self.params.append(np.zeros(b, dtype=np.float32))

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
        acts = [x]
        h = x
        n_layers = len(self.params) // 2
        for i in range(n_layers):
            z = h @ self.params[2 * i] + self.params[2 * i + 1]
            h = np.maximum(z, 0) if i < n_layers - 1 else z
            acts.append(h)
        logits = acts[-1] - acts[-1].max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        loss = float(-np.log(p[np.arange(y.size), y] + 1e-12).mean())
        delta = p
        delta[np.arange(y.size), y] -= 1
        delta /= y.size
        grads: list[np.ndarray] = [np.empty(0)] * len(self.params)
        for i in reversed(range(n_layers)):
            grads[2 * i] = (acts[i].T @ delta).astype(np.float32)
            grads[2 * i + 1] = delta.sum(axis=0).astype(np.float32)
            if i:
                delta = (delta @ self.params[2 * i].T) * (acts[i] > 0)
        return loss, grads


#: noise-to-signal ratio of the task: high enough that 20 steps do not solve it
_NOISE = 6.0


def _task(rng: np.random.Generator, n_inputs: int, n_classes: int) -> np.ndarray:
    return rng.standard_normal((n_classes, n_inputs)).astype(np.float32)


def _batch(rng: np.random.Generator, centres: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    y = rng.integers(0, centres.shape[0], size=size)
    noise = rng.standard_normal((size, centres.shape[1])).astype(np.float32)
    x = (centres[y] + _NOISE * noise) / np.float32(np.sqrt(1 + _NOISE**2))   # unit variance
    return x.astype(np.float32), y


def mlp_gradients(n_workers: int, hidden: tuple[int, ...] = (512, 256), n_inputs: int = 784,
                  n_classes: int = 10, steps: int = 20, batch: int = 32, lr: float = 0.05,
                  seed: int = 0) -> MLPGradients:
    """Train ``steps`` SGD steps on one stream of batches, then return each worker's gradient on
    its own batch at the trained weights.  Default size: 784-512-256-10, 535,818 parameters."""
    if n_workers < 1:
        raise ValueError(f"n_workers must be >= 1, got {n_workers}")
    rng = np.random.default_rng(seed)
    centres = _task(rng, n_inputs, n_classes)
    model = MLP([n_inputs, *hidden, n_classes], rng)
    losses = []
    for _ in range(steps):
        loss, grads = model.loss_and_grads(*_batch(rng, centres, batch))
        losses.append(loss)
        for p, g in zip(model.params, grads, strict=True):
            p -= lr * g
    out = []
    for rank in range(n_workers):
        wrng = np.random.default_rng([seed, 1 + rank])
        _, grads = model.loss_and_grads(*_batch(wrng, centres, batch))
        out.append(np.concatenate([g.ravel() for g in grads]).astype(np.float32))
    return MLPGradients(out, [p.size for p in model.params], losses)


def sparsify_topk(x: np.ndarray, density: float) -> np.ndarray:
    """Keep the ceil(density*d) largest |x| (the sparsifier DHC runs before HG-Sketch)."""
    if not 0 < density <= 1:
        raise ValueError(f"density must be in (0, 1], got {density!r}")
    k = int(np.ceil(density * x.size))
    out = np.zeros_like(x)
    if k >= x.size:
        return x.copy()
    idx = np.argpartition(np.abs(x), x.size - k)[x.size - k:]
    out[idx] = x[idx]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("bench/out/gradients.npz"))
    args = ap.parse_args(argv)
    res = mlp_gradients(args.workers, steps=args.steps, seed=args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, grads=np.stack(res.grads), layer_sizes=np.array(res.layer_sizes),
                        losses=np.array(res.losses))
    print(f"wrote {args.out}: {args.workers} workers x {res.dim} parameters, "
          f"loss {res.losses[0]:.3f} -> {res.losses[-1]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

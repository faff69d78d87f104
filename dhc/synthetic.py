"""Reproducible synthetic sparse gradients for tests, benchmarks and the demo.

A worker's tensor depends only on (dim, density, seed, rank, clustered), so any process
(a worker in a network namespace, the orchestrator checking exactness) can rebuild it.
``clustered`` puts most nonzeros into a few hot blocks shared by the whole job (the seed picks
them), as top-k of real layers and embedding rows do; otherwise supports are uniform.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import InputError


def synthetic_gradient(dim: int, density: float, seed: int = 0, rank: int = 0,
                       clustered: bool = False, block: int = 256, hot_fill: float = 0.5,
                       scattered: float = 0.02) -> np.ndarray:
    """A float32 vector of ``dim`` elements with about ``density * dim`` N(0,1) nonzeros."""
    if not isinstance(dim, int) or dim < 1:
        raise InputError(f"dim must be a positive int, got {dim!r}")
    if not 0.0 < density <= 1.0:
        raise InputError(f"density must be in (0, 1], got {density!r}")
    k = max(1, int(density * dim))
    rng = np.random.default_rng([seed, rank])
    x = np.zeros(dim, dtype=np.float32)
    if not clustered or dim < block:
        idx = rng.choice(dim, size=k, replace=False)
    else:
        shared = np.random.default_rng([seed, 0x607])  # the job's hot blocks: same for all ranks
        n_blocks = dim // block
        hot_k = int(round(k * (1 - scattered)))
        n_hot = min(n_blocks, max(1, math.ceil(hot_k / (hot_fill * block))))
        hot = shared.choice(n_blocks, size=n_hot, replace=False)
        hot_elems = (hot[:, None] * block + np.arange(block)[None, :]).ravel()
        idx = np.unique(np.concatenate([
            rng.choice(hot_elems, size=min(hot_k, hot_elems.size), replace=False),
            rng.choice(dim, size=k - min(hot_k, hot_elems.size), replace=False)]))
    x[idx] = rng.standard_normal(idx.size).astype(np.float32)
    return x


def synthetic_job(n_workers: int, dim: int, density: float, seed: int = 0,
                  clustered: bool = False) -> list[np.ndarray]:
    """The tensors of ranks 0..n_workers-1."""
    return [synthetic_gradient(dim, density, seed, r, clustered) for r in range(n_workers)]

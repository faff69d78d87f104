"""Shared generators and the reference the codec must match bit for bit."""

from __future__ import annotations

import numpy as np

from dhc import quantize as qz


def sparse_tensors(rng: np.random.Generator, n: int, d: int, density: float,
                   magnitude: float = 1.0, clustered: bool = False,
                   dtype: type = np.float32) -> list[np.ndarray]:
    """n tensors of size d with about density*d nonzeros each (random or block-clustered)."""
    out = []
    k = int(round(density * d))
    for _ in range(n):
        x = np.zeros(d, dtype=dtype)
        if k:
            if clustered:
                start = int(rng.integers(0, max(1, d - 4 * k)))
                idx = np.unique(rng.integers(start, min(d, start + 2 * k), size=k))
            else:
                idx = rng.choice(d, size=min(k, d), replace=False)
            x[idx] = (rng.standard_normal(idx.size) * magnitude).astype(dtype)
        out.append(x)
    return out


def exact_quantized_sum(tensors: list[np.ndarray], scale_exp: int) -> np.ndarray:
    """Reference: sum over workers of rint(x * 2**scale_exp), in Python-exact int64."""
    n = len(tensors)
    total = np.zeros(tensors[0].size, dtype=np.int64)
    for x in tensors:
        total += qz.quantize(x.reshape(-1), scale_exp, n)
    return total.reshape(tensors[0].shape)


def expected_scale_exponent(tensors: list[np.ndarray]) -> int:
    """The scale the protocol must pick: L - E from the global max magnitude."""
    peak = max(float(np.max(np.abs(x.astype(np.float64)))) for x in tensors)
    if peak == 0.0:
        return 0
    e = max(int(np.frexp(peak)[1]), qz.EXP_MIN)
    return qz.precision_bits(len(tensors)) - e

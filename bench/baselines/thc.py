"""THC-style (Li et al., "THC: Accelerating Distributed Deep Learning Using Tensor Homomorphic
Compression", NSDI'24): randomized Hadamard rotation + b-bit lookup-table quantization whose
table values the aggregator adds as integers.

Per worker: pad to d' = next power of two, rotate with the shared randomized Hadamard transform
R = H D / sqrt(d') (D: random signs from a seed every worker knows), so the coordinates become
near-Gaussian and bounded.  A first tiny round agrees on the range: M = max over workers of
max|R x| (one float32 each).  Each rotated coordinate is mapped to [0, g] (g = granularity) and
stochastically rounded to one of the 2**b table values (the table is a sorted subset of 0..g),
so the expectation is unbiased; the worker sends the b-bit *table index*.  The aggregator
looks each index up and adds the integer table values (homomorphic: the sum of table values is a
plain integer sum, no decompression), and returns the integer sums, ceil(log2(N*g + 1)) bits
each.  Workers undo the affine map and the rotation.

Sends per worker: 4 (range) + d' * b / 8 bytes; receives 4 + d' * ceil(log2(N*g+1)) / 8.
Error: per worker and rotated coordinate |e| < step = 2M/g * (largest gap between adjacent table
values); the rotation is orthonormal, so ||error||_2 <= N * step_max * sqrt(d') (hard bound,
``error_bound`` in notes).  This implements THC's uniform table (table = 0, g/(2^b-1), ...,
rounded to integers); THC's optimised non-uniform table and its outlier truncation are not
implemented (with truncation the bound above would not hold for clipped coordinates).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .common import CodecRun, check_tensors, timed

NAME = "thc"


def fwht(x: np.ndarray) -> np.ndarray:
    """Unnormalised fast Walsh-Hadamard transform along the last axis (length a power of two)."""
    a = np.array(x, dtype=np.float64, copy=True)
    n = a.shape[-1]
    if n & (n - 1):
        raise ValueError(f"FWHT needs a power-of-two length, got {n}")
    h = 1
    while h < n:
        v = a.reshape(-1, n // (2 * h), 2, h)
        top = v[:, :, 0, :] + v[:, :, 1, :]
        bot = v[:, :, 0, :] - v[:, :, 1, :]
        v[:, :, 0, :] = top
        v[:, :, 1, :] = bot
        h *= 2
    return a.reshape(x.shape)


class Rotation:
    """The shared randomized Hadamard transform of length d' (orthonormal)."""

    def __init__(self, d: int, seed: int) -> None:
        self.d = d
        self.dp = 1 << max(0, math.ceil(math.log2(d)))
        self.signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=self.dp)

    def forward(self, x: np.ndarray) -> np.ndarray:
        p = np.zeros(self.dp, dtype=np.float64)
        p[: self.d] = x
        return fwht(p * self.signs) / math.sqrt(self.dp)

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return (fwht(y) / math.sqrt(self.dp) * self.signs)[: self.d]


def uniform_table(bits: int, granularity: int) -> np.ndarray:
    """2**bits distinct integers spread evenly over 0..granularity."""
    levels = 1 << bits
    if granularity < levels - 1:
        raise ValueError(f"granularity {granularity} < 2**bits - 1 = {levels - 1}")
    table = np.unique(np.rint(np.linspace(0, granularity, levels)).astype(np.int64))
    if table.size != levels:
        raise ValueError("table values collide; raise the granularity")
    return table


def quantize(u: np.ndarray, table: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Stochastically round u in [0, g] to an adjacent table value; returns table indices."""
    hi = np.clip(np.searchsorted(table, u, side="left"), 1, table.size - 1)
    lo = hi - 1
    a, b = table[lo].astype(np.float64), table[hi].astype(np.float64)
    p_hi = np.clip((u - a) / (b - a), 0.0, 1.0)
    return np.where(rng.random(u.size) < p_hi, hi, lo).astype(np.uint8)


def run(tensors: Sequence[object], bits: int = 4, granularity: int = 30,
        seed: int = 0x7C) -> CodecRun:
    if not 1 <= bits <= 8:
        raise ValueError(f"bits must be in 1..8, got {bits}")
    xs = check_tensors(tensors)
    n, d = len(xs), xs[0].size
    rot = Rotation(d, seed)
    table = uniform_table(bits, granularity)
    g = float(granularity)

    rotated0, enc0 = timed(lambda: rot.forward(xs[0]))
    rotated = [rotated0] + [rot.forward(x) for x in xs[1:]]
    big_m = max(float(np.abs(r).max()) for r in rotated) or 1.0   # range round (max of N floats)

    def encode(r: np.ndarray, rank: int) -> np.ndarray:
        u = (r + big_m) * (g / (2 * big_m))                           # [-M, M] -> [0, g]
        return quantize(u, table, np.random.default_rng([seed, rank]))

    idx0, enc1 = timed(lambda: encode(rotated[0], 0))
    idxs = [idx0] + [encode(r, i) for i, r in enumerate(rotated[1:], start=1)]
    agg = np.sum(np.stack([table[i] for i in idxs]), axis=0)          # aggregator: lookup + add

    def decode_sum(ints: np.ndarray, count: int) -> np.ndarray:
        y = ints.astype(np.float64) * (2 * big_m / g) - count * big_m
        return rot.inverse(y)

    total, dec = timed(lambda: decode_sum(agg, n))
    qsum = np.sum(np.stack([decode_sum(table[i], 1) for i in idxs]), axis=0)
    step = float(np.max(np.diff(table))) * 2 * big_m / g
    down_bits = math.ceil(math.log2(n * granularity + 1))
    up = 4 + -(-rot.dp * bits // 8)
    down = 4 + -(-rot.dp * down_bits // 8)
    return CodecRun(NAME, total, qsum, up, down, enc0 + enc1, dec, lossless_claim=False,
                    notes={"bits": bits, "granularity": granularity, "padded_dim": rot.dp,
                           "down_bits": down_bits, "step": step,
                           "error_bound_l2": n * step * math.sqrt(rot.dp)})


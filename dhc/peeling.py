"""Vectorised peeling of an aggregated invertible count sketch, and its residual check.

Every candidate (element of the aggregated support) sits in one bucket of each row.  A bucket
holding exactly one unrecovered candidate is *pure*: its value, times that candidate's sign, is
the candidate's sum (mod 2**32, read as int32).  Each iteration recovers every candidate that is
pure somewhere, subtracts it from all its buckets and looks for new pure buckets among the
buckets it touched.  Counts and candidate positions per bucket are computed locally from the
exact candidate list, so they are never corrupted; only the values can be, and the caller's
checks catch that.  Work per iteration is proportional to what it peels (np.add.at), not to m.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_TWO31 = 1 << 31
_MASK32 = (1 << 32) - 1


def as_int32(v: np.ndarray) -> np.ndarray:
    """int64 values reduced mod 2**32 and read as signed int32 (still int64 dtype)."""
    return ((v + _TWO31) & _MASK32) - _TWO31


@dataclass
class PeelResult:
    """Outcome of peeling: per-candidate sums, which were recovered, and the residual sketch."""

    values: np.ndarray      # int64 per candidate (0 where not recovered)
    recovered: np.ndarray   # bool per candidate
    residual: np.ndarray    # int64 sketch after subtracting every recovered candidate
    iterations: int

    @property
    def stuck(self) -> np.ndarray:
        """Candidate positions peeling could not recover (the 2-core)."""
        return np.flatnonzero(~self.recovered)


def peel(buckets: np.ndarray, signs: np.ndarray, sketch: np.ndarray) -> PeelResult:
    """Peel ``sketch`` (m uint32 lanes) given each candidate's ``buckets``/``signs`` (k x rows,
    bucket of row j in [j*m/rows, (j+1)*m/rows))."""
    k, rows = buckets.shape
    m = sketch.shape[0]
    y = sketch.astype(np.int64)
    values = np.zeros(k, dtype=np.int64)
    recovered = np.zeros(k, dtype=bool)
    if k == 0:
        return PeelResult(values, recovered, y, 0)
    signs = signs.astype(np.int8, copy=False)        # small gathers, fast broadcasting
    flat = buckets.ravel()
    sflat = signs.ravel()
    count = np.bincount(flat, minlength=m)
    possum = np.zeros(m, dtype=np.int64)
    np.add.at(possum, flat, np.repeat(np.arange(k, dtype=np.int64), rows))
    row_len = m // rows
    mark = np.empty(k, dtype=np.int64)
    pure = np.flatnonzero(count == 1)
    iterations = 0
    while pure.size:
        iterations += 1
        pos = possum[pure]
        # keep one bucket per candidate (a candidate may be pure in several rows at once)
        order = np.arange(pos.size, dtype=np.int64)
        mark[pos] = order
        keep = mark[pos] == order
        if not keep.all():
            pos, pure = pos[keep], pure[keep]
        v = as_int32(y[pure]) * sflat[pos * rows + pure // row_len]
        values[pos] = v
        recovered[pos] = True
        tflat = np.take(buckets, pos, axis=0).ravel()      # n*rows, candidate-major
        np.subtract.at(count, tflat, 1)
        np.subtract.at(possum, tflat, np.repeat(pos, rows))
        np.subtract.at(y, tflat, (np.take(signs, pos, axis=0) * v[:, None]).ravel())
        pure = tflat[count[tflat] == 1]
    return PeelResult(values, recovered, y, iterations)


def subtract_known(residual: np.ndarray, buckets: np.ndarray, signs: np.ndarray,
                   values: np.ndarray) -> None:
    """Remove candidates with known ``values`` from ``residual`` in place."""
    np.subtract.at(residual, buckets.ravel(),
                   (signs.astype(np.int8, copy=False) * values[:, None]).ravel())


def residual_is_zero(residual: np.ndarray) -> bool:
    """True iff every bucket is 0 mod 2**32 (what a consistent, fully decoded sketch leaves)."""
    return not np.any(residual & _MASK32)

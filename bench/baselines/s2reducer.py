"""S2 Reducer-style (Ge et al., "S2 Reducer: High-Performance Sparse Communication to
Accelerate Distributed Deep Learning", ICASSP 2022): bitmap + count sketch, median estimate.

Each worker compresses its sparse gradient into a d-bit bitmap of the nonzero positions and a
float32 count sketch of the nonzero values (r rows, m buckets); both are summed by an ordinary
allreduce (the sketch is linear; the bitmap aggregate gives the union of supports).  The
receiver queries the sketch for every position in the union with the count-sketch estimator,
the median over rows of sign_j * Y[h_j(i)].  There is no peeling: colliding elements leave an
estimation error, which is the price of the small sketch.  Sends per worker:
4*ceil(d/32) + 4*m bytes; receives the same.  m = m_factor * size_hint (default: the largest
per-worker nonzero count, i.e. sized from what a worker knows locally).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .common import CodecRun, bitmap_bytes, check_tensors, exact_sum, timed
from .sketch import CountSketch

NAME = "s2reducer"


def run(tensors: Sequence[object], size_hint: int | None = None, m_factor: float = 1.23,
        buckets: int | None = None, rows: int = 3, seed: int = 0x52) -> CodecRun:
    xs = check_tensors(tensors)
    d = xs[0].size
    if buckets is None:
        hint = size_hint if size_hint is not None else max(int(np.count_nonzero(x)) for x in xs)
        buckets = max(rows, int(np.ceil(m_factor * max(1, hint))))
    cs = CountSketch(buckets, rows, seed)

    def encode(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mask = x != 0
        idx = np.flatnonzero(mask)
        return np.packbits(mask), cs.encode(idx, x[idx]).astype(np.float32)

    first, enc = timed(lambda: encode(xs[0]))
    parts = [first] + [encode(x) for x in xs[1:]]
    agg_bitmap = np.bitwise_or.reduce(np.stack([p[0] for p in parts]), axis=0)
    agg_sketch = np.sum(np.stack([p[1] for p in parts]), axis=0, dtype=np.float32)  # fp32 allreduce

    def decode() -> tuple[np.ndarray, int]:
        cand = np.flatnonzero(np.unpackbits(agg_bitmap)[:d])
        b, s = cs.locate(cand)
        out = np.zeros(d, dtype=np.float64)
        out[cand] = CountSketch.median_estimate(agg_sketch, b, s)
        return out, int(cand.size)

    (total, union), dec = timed(decode)
    nbytes = bitmap_bytes(d) + 4 * cs.m
    return CodecRun(NAME, total, exact_sum(xs), nbytes, nbytes, enc, dec, lossless_claim=False,
                    notes={"buckets": cs.m, "rows": rows, "union_nnz": union,
                           "m_over_union": round(cs.m / max(1, union), 4)})

"""LHC layout (Li et al., "Accelerating Distributed Deep Learning using Lossless Homomorphic
Compression", arXiv 2402.07529): a d-bit index bitmap plus an invertible count sketch, both
aggregated in the network, decoded by peeling.

Per worker: the values are fixed-point int32 (same global power-of-two scale as DHC, exchanged
first: SCALE_LANES lanes); the *index* is a plain d-bit bitmap of the worker's nonzeros (OR in
the switch, so the aggregate is the exact union); the *value sketch* has r = 3 partitioned rows
and m buckets, with m fixed before aggregation from a size hint (LHC sizes it ~1.23x the expected
number of nonzeros; the aggregated union is not known when the sketch is built).  Sends per
worker: 4*SCALE_LANES + 4*ceil(d/32) + 4*m bytes; receives the same.

Decoding peels the aggregated sketch over the union's candidates.  When peeling stalls (m too
small for the union: the 2-core is non-empty) the remaining coordinates are filled with the
count-sketch median estimate, *silently*: the caller gets a result that looks like the others.
This module reproduces that behaviour on purpose (the benchmark counts the fallback elements in
``notes`` only so the plots can show where it goes wrong; LHC itself reports nothing).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dhc import quantize as qz
from dhc.peeling import as_int32, peel

from .common import CodecRun, bitmap_bytes, check_tensors, global_scale_exponent, timed
from .sketch import CountSketch

NAME = "lhc"
M_FACTOR = 1.23


def run(tensors: Sequence[object], size_hint: int | None = None, m_factor: float = M_FACTOR,
        buckets: int | None = None, rows: int = 3, seed: int = 0x1AC) -> CodecRun:
    """``buckets`` forces m; otherwise m = m_factor * size_hint (default: the largest number of
    nonzeros of one worker, all a worker knows before aggregation)."""
    xs = check_tensors(tensors)
    n, d = len(xs), xs[0].size
    t = global_scale_exponent(xs)
    if buckets is None:
        hint = size_hint if size_hint is not None else max(int(np.count_nonzero(x)) for x in xs)
        buckets = max(rows, int(np.ceil(m_factor * max(1, hint))))
    cs = CountSketch(buckets, rows, seed)

    def encode(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        mask = x != 0
        idx = np.flatnonzero(mask)
        q = qz.quantize(x[idx], t, n)
        return np.packbits(mask), q, cs.encode(idx, q)

    (bm0, q0, sk0), enc = timed(lambda: encode(xs[0]))
    parts = [(bm0, q0, sk0)] + [encode(x) for x in xs[1:]]
    agg_bitmap = np.bitwise_or.reduce(np.stack([p[0] for p in parts]), axis=0)   # OR in switch
    agg_sketch = np.sum(np.stack([p[2] for p in parts]), axis=0) & 0xFFFFFFFF   # int32 SUM, wraps

    def decode() -> tuple[np.ndarray, int, int]:
        cand = np.flatnonzero(np.unpackbits(agg_bitmap)[:d])
        b, s = cs.locate(cand)
        res = peel(b, s, agg_sketch.astype(np.uint32))
        values = res.values.astype(np.float64)
        stuck = res.stuck
        if stuck.size:                                          # LHC's silent fallback
            values[stuck] = CountSketch.median_estimate(as_int32(res.residual), b[stuck], s[stuck])
        out = np.zeros(d, dtype=np.float64)
        out[cand] = np.ldexp(values, -t)
        return out, int(stuck.size), int(cand.size)

    (total, stuck, union), dec = timed(decode)
    qsum = np.zeros(d, dtype=np.float64)
    for x, (_, q, _) in zip(xs, parts, strict=True):
        qsum[np.flatnonzero(x)] += np.ldexp(q.astype(np.float64), -t)
    nbytes = 4 * qz.SCALE_LANES + bitmap_bytes(d) + 4 * cs.m
    return CodecRun(
        NAME,
        total,
        qsum,
        nbytes,
        nbytes,
        enc,
        dec,
        lossless_claim=True,
        notes={
            "buckets": cs.m,
            "union_nnz": union,
            "m_over_union": round(cs.m / max(1, union), 4),
            "silent_fallback_elements": stuck,
            "reported_to_caller": False,
        },
    )

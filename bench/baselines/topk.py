"""Top-k sparsification (Aji & Heafield 2017; Deep Gradient Compression): index + value lists.

Each worker keeps its k largest-magnitude elements and sends (int32 index, float32 value) pairs:
8*k bytes up.  Supports differ between workers, so the lists cannot be added in a switch or by a
plain allreduce; they must be all-gathered and every worker receives the other N-1 lists:
(N-1)*8*k bytes down, growing with N.  Exact for what it keeps (float32 values are summed in
float64); what it drops is the error (in training, error feedback carries it to the next step).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .common import CodecRun, check_tensors, exact_sum, timed

NAME = "topk"


def select(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(sorted int32 indices, float32 values) of the k largest |x| (nonzeros only)."""
    nz = np.count_nonzero(x)
    k = min(k, nz)
    if k == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.float32)
    if k == nz:                                   # keeps every nonzero: no selection needed
        idx = np.flatnonzero(x).astype(np.int32)
    else:
        idx = np.sort(np.argpartition(np.abs(x), x.size - k)[x.size - k:]).astype(np.int32)
    return idx, x[idx]


def run(tensors: Sequence[object], density: float | None = None) -> CodecRun:
    """``density``: keep ceil(density * d) elements per worker; None keeps every nonzero."""
    xs = check_tensors(tensors)
    n, d = len(xs), xs[0].size
    if density is not None and not 0 < density <= 1:
        raise ValueError(f"density must be in (0, 1], got {density!r}")

    def k_of(x: np.ndarray) -> int:
        return np.count_nonzero(x) if density is None else int(np.ceil(density * d))

    first, enc = timed(lambda: select(xs[0], k_of(xs[0])))
    lists = [first] + [select(x, k_of(x)) for x in xs[1:]]

    def gather() -> np.ndarray:
        out = np.zeros(d, dtype=np.float64)
        for idx, val in lists:                                 # every worker's list, received
            np.add.at(out, idx, val.astype(np.float64))
        return out

    total, dec = timed(gather)
    kept = []
    for idx, val in lists:
        v = np.zeros(d, dtype=np.float32)
        v[idx] = val
        kept.append(v)
    sizes = [8 * idx.size for idx, _ in lists]
    up = max(sizes)
    down = sum(sizes) - min(sizes)                              # the other N-1 lists
    return CodecRun(NAME, total, exact_sum(kept), up, down, enc, dec, lossless_claim=True,
                    notes={"k_per_worker": int(max(idx.size for idx, _ in lists)),
                           "aggregatable": False, "workers": n})

"""Count sketch with r partitioned rows, as LHC and S2 Reducer use it (shared helper).

Row j holds ``m / r`` buckets; element i adds ``sign_j(i) * v_i`` to bucket ``h_j(i)`` in every
row.  The sketch is linear, so the element-wise sum of the workers' sketches is the sketch of
the summed vector; that is what makes it aggregatable in a switch or by allreduce.  Hashes are the
project's seeded multiply-shift (dhc.hashing.SketchHash) with a baseline-specific seed.
"""

from __future__ import annotations

import numpy as np

from dhc.hashing import SketchHash


class CountSketch:
    """Hashing of element indices into an r-row sketch of m buckets (m rounded to rows)."""

    def __init__(self, m: int, rows: int = 3, seed: int = 0xC0FFEE) -> None:
        if rows < 1:
            raise ValueError(f"rows must be >= 1, got {rows}")
        row_len = max(1, -(-int(m) // rows))
        self.rows = rows
        self.hash = SketchHash(seed, rows, row_len, checks=0)
        self.m = rows * row_len

    def locate(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(buckets, signs), each len(idx) x rows, int64."""
        keys = self.hash.keys(idx.astype(np.uint64))
        parts = [self.hash.row(keys, j) for j in range(self.rows)]
        return (np.stack([b for b, _ in parts], axis=1), np.stack([s for _, s in parts], axis=1))

    def encode(self, idx: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Sketch of the sparse vector (idx, values); int64 values stay exact, floats float64."""
        buckets, signs = self.locate(idx)
        if np.issubdtype(values.dtype, np.integer):
            out = np.zeros(self.m, dtype=np.int64)
            np.add.at(out, buckets.ravel(), (signs * values.astype(np.int64)[:, None]).ravel())
            return out
        w = (signs * values.astype(np.float64)[:, None]).ravel()
        return np.bincount(buckets.ravel(), weights=w, minlength=self.m)

    @staticmethod
    def median_estimate(sketch: np.ndarray, buckets: np.ndarray, signs: np.ndarray) -> np.ndarray:
        """Classic count-sketch query: median over rows of sign_j * Y[h_j(i)] (float64)."""
        est = signs * sketch[buckets].astype(np.float64)
        return np.median(est, axis=1)

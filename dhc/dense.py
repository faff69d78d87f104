"""Dense baseline in the same round protocol (SwitchML-style: one SUM level of all values).

A  SCALE[2 + EXP_LANES] (OR): fingerprint + one-hot max exponent, the scale round every codec
   shares (``dhc/rounds.py``).
B  DENSE[d + 7] (SUM): every quantized value, then check lanes (sum q and six sums w_j(i)*q,
   mod 2**32) that detect lanes changed in flight.
Same scale and overflow bound as HG-Sketch, so comparisons are like for like.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

from dhcwire.lanes import Level

from . import quantize as qz
from .errors import DecodeError, InputError, ProtocolError
from .hashing import HASHED_CHECKS, SketchHash
from .protocol import Segment
from .rounds import Handler, RoundWorker, ScaleRound

#: check lanes after the values: sum q, then sums of w_j(i) * q for HASHED_CHECKS weights
CHECK_LANES = 1 + HASHED_CHECKS
_HASH = SketchHash(0xD15C0DE5, rows=1, row_len=1, checks=HASHED_CHECKS)


def _dense_checks(q: np.ndarray) -> np.ndarray:
    qu = q.astype(np.int64, copy=False).view(np.uint64)
    keys = _HASH.keys(np.arange(q.size, dtype=np.uint64))
    with np.errstate(over="ignore"):
        c = [qu.sum(dtype=np.uint64)]
        c += [(_HASH.weights(keys, j) * qu).sum(dtype=np.uint64) for j in range(HASHED_CHECKS)]
    return np.array([int(v) & 0xFFFFFFFF for v in c], dtype=np.uint32)


class DenseWorker(RoundWorker):
    """One worker of the dense baseline; same API as HGSketchWorker."""

    codec = "dense"

    def __init__(self, x: object, n_workers: int, **params: object) -> None:
        if params:
            raise InputError(f"the dense codec takes no parameters, got {sorted(params)}")
        super().__init__(x, n_workers)
        self._scale_round: ScaleRound | None = None
        self._sum_int: np.ndarray | None = None
        self.encode_seconds = 0.0
        self.decode_seconds = 0.0

    def _handlers(self) -> Mapping[str, Handler]:
        return {"A": self._after_a, "B": self._after_b}

    def _start(self) -> list[Segment]:
        t0 = time.perf_counter()
        fp = qz.fingerprint(self.codec, self.d, str(self._x.dtype), self.n_workers)
        self._scale_round = ScaleRound.of(self._x, fp, self.n_workers)
        segs = self._emit("A", [self._scale_round.segment()])
        self.encode_seconds += time.perf_counter() - t0
        return segs

    def _after_a(self, agg: list[np.ndarray]) -> list[Segment]:
        t0 = time.perf_counter()
        assert self._scale_round is not None
        self._scale_exp = self._scale_round.scale_exponent(agg[0])
        q = qz.quantize(self._x, self._scale_exp, self.n_workers)
        lanes = np.concatenate([qz.to_lanes(q), _dense_checks(q)])
        segs = self._emit("B", [Segment(Level.DENSE, lanes)])
        self.encode_seconds += time.perf_counter() - t0
        return segs

    def _after_b(self, agg: list[np.ndarray]) -> list[Segment]:
        t0 = time.perf_counter()
        sums = qz.from_lanes(agg[0][: self.d])
        if not np.array_equal(_dense_checks(sums), agg[0][self.d:]):
            raise DecodeError("DENSE check lanes do not match the aggregated values: "
                              "a lane was changed in flight")
        self._sum_int = sums.reshape(self.shape)
        self.decode_seconds += time.perf_counter() - t0
        return self._emit("done", [])

    def result_int(self) -> np.ndarray:
        self._require_done()
        if self._sum_int is None:
            raise ProtocolError("result requested before the last round was fed")
        return self._sum_int

    def result(self) -> np.ndarray:
        return qz.dequantize(self.result_int(), self._scale_exp).reshape(self.shape)

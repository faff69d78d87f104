"""Dense baseline in the same round protocol (SwitchML-style: one SUM level of all values).

A  SCALE[2 + EXP_LANES] (OR): fingerprint + one-hot max exponent, exactly as HG-Sketch.
B  DENSE[d + 7] (SUM): every quantized value, then check lanes (sum q and six sums w_j(i)*q,
   mod 2**32) that detect lanes changed in flight.
Same scale and overflow bound as HG-Sketch, so comparisons are like for like.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from dhcwire.lanes import Level

from . import quantize as qz
from .errors import DecodeError, InputError, ProtocolError
from .hashing import SketchHash
from .protocol import Segment, check_aggregated

#: check lanes after the values: sum q, then sums of w_j(i) * q for HASHED_CHECKS weights
HASHED_CHECKS = 6
CHECK_LANES = 1 + HASHED_CHECKS
_HASH = SketchHash(0xD15C0DE5, rows=1, row_len=1, checks=HASHED_CHECKS)


def _dense_checks(q: np.ndarray) -> np.ndarray:
    qu = q.astype(np.int64, copy=False).view(np.uint64)
    keys = _HASH.keys(np.arange(q.size, dtype=np.uint64))
    with np.errstate(over="ignore"):
        c = [qu.sum(dtype=np.uint64)]
        c += [(_HASH.weights(keys, j) * qu).sum(dtype=np.uint64) for j in range(HASHED_CHECKS)]
    return np.array([int(v) & 0xFFFFFFFF for v in c], dtype=np.uint32)


class DenseWorker:
    """One worker of the dense baseline; same API as HGSketchWorker."""

    codec = "dense"

    def __init__(self, x: object, n_workers: int, **params: object) -> None:
        if params:
            raise InputError(f"the dense codec takes no parameters, got {sorted(params)}")
        self.n_workers = qz.check_worker_count(n_workers)
        self._x = qz.check_tensor(x)
        self.shape = np.shape(x)
        self.d = self._x.size
        self._phase = "new"
        self._sent: list[Segment] = []
        self._scale_exp = 0
        self._sum_int: np.ndarray | None = None
        self.encode_seconds = 0.0
        self.decode_seconds = 0.0

    @property
    def done(self) -> bool:
        return self._phase == "done"

    @property
    def scale(self) -> float:
        return float(np.ldexp(1.0, self._scale_exp))

    @property
    def scale_exponent(self) -> int:
        return self._scale_exp

    def first_round(self) -> list[Segment]:
        if self._phase != "new":
            raise ProtocolError("first_round() called twice")
        t0 = time.perf_counter()
        qz.check_finite(self._x)
        self._local_exp = qz.max_exponent(self._x)
        fp = qz.fingerprint(self.codec, self.d, str(self._x.dtype), self.n_workers)
        self._sent = [Segment(Level.SCALE, qz.scale_lanes(fp, self._local_exp))]
        self._phase = "A"
        self.encode_seconds += time.perf_counter() - t0
        return self._sent

    def feed(self, aggregated: Sequence[np.ndarray]) -> list[Segment]:
        if self._phase not in ("A", "B"):
            raise ProtocolError(f"feed() called in state {self._phase!r}")
        agg = check_aggregated(self._sent, aggregated)
        t0 = time.perf_counter()
        if self._phase == "A":
            self._scale_exp = qz.scale_exponent(qz.decode_scale(agg[0], self._local_exp),
                                                self.n_workers)
            q = qz.quantize(self._x, self._scale_exp, self.n_workers)
            lanes = np.concatenate([qz.to_lanes(q), _dense_checks(q)])
            self._sent = [Segment(Level.DENSE, lanes)]
            self._phase = "B"
            self.encode_seconds += time.perf_counter() - t0
            return self._sent
        sums = qz.from_lanes(agg[0][: self.d])
        if not np.array_equal(_dense_checks(sums), agg[0][self.d:]):
            raise DecodeError("DENSE check lanes do not match the aggregated values: "
                              "a lane was changed in flight")
        self._sum_int = sums.reshape(self.shape)
        self._sent = []
        self._phase = "done"
        self.decode_seconds += time.perf_counter() - t0
        return []

    def result_int(self) -> np.ndarray:
        if not self.done or self._sum_int is None:
            raise ProtocolError("result requested before the last round was fed")
        return self._sum_int

    def result(self) -> np.ndarray:
        return qz.dequantize(self.result_int(), self._scale_exp).reshape(self.shape)

"""What every codec worker shares: the phase machine of its rounds and round A's scale.

A worker is in one *phase* at a time: ``"new"`` before :meth:`RoundWorker.first_round`, then
the name of the round it sent last (whose aggregate :meth:`RoundWorker.feed` expects), then
``"done"``.  ``feed`` checks the aggregate against what was sent (segment count and lengths)
and hands it to the subclass's handler of the current phase, which returns the next round
through :meth:`RoundWorker._emit` (``[]`` and phase ``"done"`` after the last).  A subclass
implements ``_start`` (round A) and ``_handlers`` (phase -> handler); everything it keeps
between rounds is its own explicit state.

Every codec opens with the same scale round (:class:`ScaleRound`, ``dhc/quantize.py`` has the
overflow proof): round A's SCALE segment carries the fingerprint and the worker's one-hot max
exponent, and its OR aggregate gives every worker the same power-of-two scale.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dhcwire.lanes import Level

from . import quantize as qz
from .errors import ProtocolError
from .protocol import Segment, check_aggregated

Handler = Callable[[list[np.ndarray]], list[Segment]]


@dataclass(frozen=True)
class ScaleRound:
    """One worker's side of the scale round: its fingerprint and max exponent go out in
    round A's SCALE segment; the aggregate gives the scale exponent of every worker."""

    fingerprint: int
    local_exponent: int | None     # None: no nonzero value
    n_workers: int

    @classmethod
    def of(cls, values: np.ndarray, fingerprint: int, n_workers: int) -> ScaleRound:
        """The scale round of ``values`` (rejects non-finite values)."""
        return cls(fingerprint, qz.finite_max_exponent(values), n_workers)

    def segment(self) -> Segment:
        """Round A's SCALE segment: ``[fp, ~fp]`` and the one-hot exponent (OR)."""
        return Segment(Level.SCALE, qz.scale_lanes(self.fingerprint, self.local_exponent))

    def scale_exponent(self, aggregated: np.ndarray) -> int:
        """t with scale 2**t from the SCALE aggregate (checks the fingerprints agree and that
        the global exponent covers ours)."""
        return qz.scale_exponent(qz.decode_scale(aggregated, self.local_exponent),
                                 self.n_workers)


class RoundWorker(ABC):
    """The phase machine of a codec worker (see the module docstring)."""

    codec = ""

    def __init__(self, x: object, n_workers: int) -> None:
        self.n_workers = qz.check_worker_count(n_workers)
        self._x = qz.check_tensor(x)
        self.shape = np.shape(x)
        self.d = self._x.size
        self._phase = "new"
        self._sent: list[Segment] = []
        self._scale_exp = 0

    # -- public state ------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self._phase == "done"

    @property
    def scale_exponent(self) -> int:
        """t with scale = 2**t (valid after round A)."""
        return self._scale_exp

    @property
    def scale(self) -> float:
        """Quantization scale: q = rint(x * scale); per-element error <= 0.5/scale per worker."""
        return float(np.ldexp(1.0, self._scale_exp))

    # -- the phase machine -------------------------------------------------------------------
    def first_round(self) -> list[Segment]:
        if self._phase != "new":
            raise ProtocolError("first_round() called twice")
        return self._start()

    def feed(self, aggregated: Sequence[np.ndarray]) -> list[Segment]:
        handler = self._handlers().get(self._phase)
        if handler is None:
            raise ProtocolError(f"feed() called in state {self._phase!r}")
        return handler(check_aggregated(self._sent, aggregated))

    def _emit(self, phase: str, segs: list[Segment]) -> list[Segment]:
        """Send ``segs`` and expect their aggregate in ``phase``."""
        self._phase = phase
        self._sent = segs
        return segs

    def _require_done(self) -> None:
        if not self.done:
            raise ProtocolError("result requested before the last round was fed")

    # -- what a codec implements -------------------------------------------------------------
    @abstractmethod
    def _start(self) -> list[Segment]:
        """Round A."""

    @abstractmethod
    def _handlers(self) -> Mapping[str, Handler]:
        """Phase -> the handler of that round's aggregate."""

"""Entry points: build a codec worker, run an allreduce over a reducer, simulate N workers.

``simulate_allreduce(tensors, codec="hg", **params)`` runs every worker in this process in lock
step (aggregating each round exactly as the switch would: uint32 SUM with wraparound or OR) and
returns the decoded sum with per-round statistics.  ``tamper(round, segments, aggregated)`` may
modify the aggregated arrays in place before they are fed back (fault injection for tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dhcwire.lanes import LANE_BYTES

from . import quantize as qz
from .dense import DenseWorker
from .errors import DecodeError, InputError, ProtocolError
from .hgsketch import HGSketchWorker
from .protocol import CodecWorker, Reducer, Segment, aggregate_round, run_worker

CODECS: dict[str, type] = {"hg": HGSketchWorker, "dense": DenseWorker}

Tamper = Callable[[int, list[Segment], list[np.ndarray]], None]


def make_worker(x: object, n_workers: int, codec: str = "hg", **params: object) -> CodecWorker:
    """A codec worker for one tensor: the rounds it sends and the sum it decodes.

    Parameters
    ----------
    x : array_like
        This worker's tensor (float; any shape).
    n_workers : int
        Workers of the job (bounds the scale so the uint32 sum cannot wrap).
    codec : {"hg", "dense"}
        HG-Sketch (sparse, default) or the dense baseline.
    **params
        Codec parameters (e.g. ``HGSketchWorker``'s sketch sizes).

    Returns
    -------
    dhc.protocol.CodecWorker
        Drive it with :func:`dhc.protocol.run_worker`, or ``first_round``/``feed`` by hand.

    Raises
    ------
    InputError
        For an unknown codec or a tensor the codec refuses.

    Examples
    --------
    >>> import numpy as np
    >>> w = make_worker(np.array([1.0, 2.0], dtype=np.float32), n_workers=2, codec="dense")
    >>> [s.level.name for s in w.first_round()], w.done
    (['SCALE'], False)
    >>> make_worker([1.0], 2, codec="zip")
    Traceback (most recent call last):
    ...
    dhc.errors.InputError: unknown codec 'zip'; choose one of ['dense', 'hg']
    """
    if codec not in CODECS:
        raise InputError(f"unknown codec {codec!r}; choose one of {sorted(CODECS)}")
    return CODECS[codec](x, n_workers, **params)


def allreduce(x: object, reducer: Reducer, n_workers: int, codec: str = "hg",
              **params: object) -> np.ndarray:
    """Sum ``x`` over ``n_workers`` through ``reducer``: one worker's whole AllReduce.

    Parameters
    ----------
    x : array_like
        This worker's tensor.
    reducer : dhc.protocol.Reducer
        What aggregates each round over the workers (a ``ThreadGroup`` rank, the network's
        ``hostagent.reducer.NetworkReducer``, a ``torch.distributed`` reducer).
    n_workers : int
        Workers of the job.
    codec : {"hg", "dense"}
    **params
        Codec parameters.

    Returns
    -------
    numpy.ndarray
        The float32 sum over the workers (exact sum of the quantised inputs).

    Raises
    ------
    CodecError
        A subclass naming bad input, an inconsistent aggregate or a protocol mismatch; the
        reducer's ``abort()`` is called first so peers fail too.

    Examples
    --------
    Two workers as threads of one process:

    >>> import threading, numpy as np
    >>> from dhc.protocol import ThreadGroup
    >>> group, out = ThreadGroup(2), {}
    >>> def worker(rank):
    ...     out[rank] = allreduce(np.array([rank + 1.0, 0.5], np.float32), group.reducer(rank), 2)
    >>> threads = [threading.Thread(target=worker, args=(r,)) for r in range(2)]
    >>> for t in threads: t.start()
    >>> for t in threads: t.join()
    >>> out[0].tolist(), out[1].tolist()
    ([3.0, 1.0], [3.0, 1.0])
    """
    try:
        worker = make_worker(x, n_workers, codec, **params)
    except BaseException:
        abort = getattr(reducer, "abort", None)
        if callable(abort):
            abort()   # peers must not wait for a worker that never starts
        raise
    run_worker(worker, reducer)
    return worker.result()


@dataclass
class RoundStats:
    """Lanes one worker sent in one round, per level."""

    index: int
    levels: dict[str, int]   # level name -> lanes
    lanes: int
    bytes: int

    def as_dict(self) -> dict:
        return {"index": self.index, "levels": dict(self.levels), "lanes": self.lanes,
                "bytes": self.bytes}


@dataclass
class SimulationResult:
    """Decoded sum and what it cost on the wire (per worker; every worker sends the same)."""

    sum: np.ndarray          # float32
    sum_int: np.ndarray      # int64, exact sum of the quantized inputs
    scale: float
    scale_exponent: int
    rounds: list[RoundStats] = field(default_factory=list)
    peeling_iterations: int = 0
    stuck_size: int = 0
    union_nnz: int = 0
    sketch_buckets: int = 0

    @property
    def wire_bytes(self) -> int:
        """Payload bytes one worker sends over all rounds (lanes * 4)."""
        return sum(r.bytes for r in self.rounds)

    @property
    def dense_float32_bytes(self) -> int:
        return int(self.sum.size) * 4


def _check_group(tensors: Sequence[object]) -> list[np.ndarray]:
    if len(tensors) == 0:
        raise InputError("simulate_allreduce needs at least one tensor")
    arrs = [np.asarray(t) for t in tensors]
    first = arrs[0]
    for i, a in enumerate(arrs[1:], start=1):
        if a.shape != first.shape:
            raise InputError(f"worker {i} tensor shape {a.shape} differs from worker 0 {first.shape}")
        if a.dtype != first.dtype:
            raise InputError(f"worker {i} tensor dtype {a.dtype} differs from worker 0 {first.dtype}")
    return arrs


def simulate_allreduce(tensors: Sequence[object], *, codec: str = "hg",
                       tamper: Tamper | None = None, **params: object) -> SimulationResult:
    """Run ``len(tensors)`` workers in one process, in lock step, aggregating as a switch would.

    Parameters
    ----------
    tensors : sequence of array_like
        One tensor per worker, all of one shape and dtype.
    codec : {"hg", "dense"}
    tamper : callable, optional
        ``tamper(round, segments, aggregated)`` may modify the aggregates in place before they
        are fed back (fault injection for tests).
    **params
        Codec parameters.

    Returns
    -------
    SimulationResult
        Worker 0's decoded sum, its exact integer sum, the scale and per-round wire cost.

    Raises
    ------
    InputError, OverflowRisk
        For bad input (no tensors, shapes or dtypes that differ, values too large).
    DecodeError
        When an aggregate is inconsistent, or workers decode different sums (checked).

    Examples
    --------
    >>> import numpy as np
    >>> r = simulate_allreduce([np.array([1.5, 0.0, -2.0], np.float32),
    ...                         np.array([0.25, 0.0, 1.0], np.float32)])
    >>> r.sum.tolist(), len(r.rounds)
    ([1.75, 0.0, -1.0], 3)
    >>> simulate_allreduce([], codec="dense")
    Traceback (most recent call last):
    ...
    dhc.errors.InputError: simulate_allreduce needs at least one tensor
    """
    arrs = _check_group(tensors)
    n = qz.check_worker_count(len(arrs))
    workers = [make_worker(a, n, codec, **params) for a in arrs]
    segs = [w.first_round() for w in workers]
    rounds: list[RoundStats] = []
    while True:
        levels: dict[str, int] = {}
        for s in segs[0]:
            levels[s.level.name] = levels.get(s.level.name, 0) + int(s.lanes.size)
        lanes = sum(levels.values())
        rounds.append(RoundStats(len(rounds), levels, lanes, lanes * LANE_BYTES))
        aggregated = aggregate_round(segs)
        if tamper is not None:
            tamper(len(rounds) - 1, segs[0], aggregated)
        segs = [w.feed(aggregated) for w in workers]
        finished = [w.done for w in workers]
        if all(finished):
            break
        if any(finished):
            raise ProtocolError("workers disagree on the number of rounds")
    lead = workers[0]
    total = lead.result_int()
    for i, w in enumerate(workers[1:], start=1):
        if not np.array_equal(w.result_int(), total):
            raise DecodeError(f"worker {i} decoded a different sum than worker 0")
    stats = getattr(lead, "stats", None)
    return SimulationResult(
        sum=lead.result(), sum_int=total, scale=lead.scale, scale_exponent=lead.scale_exponent,
        rounds=rounds,
        peeling_iterations=stats.peeling_iterations if stats else 0,
        stuck_size=stats.stuck_size if stats else 0,
        union_nnz=stats.union_nnz if stats else int(np.count_nonzero(total)),
        sketch_buckets=stats.sketch_buckets if stats else 0)

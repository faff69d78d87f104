"""The round protocol every codec speaks, and reducers that aggregate rounds.

A codec worker turns one tensor into a sequence of *rounds*.  Each round is a list of
:class:`Segment` s: a 1-D uint32 lane array tagged with its :class:`~dhcwire.lanes.Level`; the op the
switch applies is ``LEVEL_OPS[level]`` (SUM = uint32 add with wraparound, OR = bitwise or).
A reducer returns, for every segment, the elementwise aggregate over all workers; the worker
consumes it and yields the next round, until ``done``::

    w = HGSketchWorker(x, n_workers, params)     # or DenseWorker
    segs = w.first_round()
    while not w.done:
        segs = w.feed(reducer.reduce(segs))       # reduce: list[Segment] -> list[np.ndarray]
    w.result()      # float32 sum;  w.result_int(): exact int64 sum;  w.scale: 2**scale_exp

Rules the workers guarantee, so switches can pair lanes by position:

* segment count, order, levels and lengths of a round depend only on the codec parameters, the
  tensor size and previous *aggregates* (which every worker receives identically);
* every worker of a job runs the same number of rounds; ``feed`` returns ``[]`` on the last.

Reducers: :class:`ThreadGroup` (N workers as threads of one process, one rendezvous per round)
here; ``simulate_allreduce`` drives N workers in lock step with :func:`aggregate_round`; a
``torch.distributed`` reducer or the in-network transport implement the same ``reduce``.  A
reducer may also offer ``abort()``: :func:`run_worker` calls it when its worker fails, so peers
blocked in ``reduce`` get an error instead of waiting for a round that will never complete.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from dhcwire.lanes import LEVEL_OPS, Level, Op

from .errors import CodecError, ProtocolError


@dataclass(frozen=True)
class Segment:
    """One typed run of lanes: what the switch aggregates with ``LEVEL_OPS[level]``.

    Parameters
    ----------
    level : dhcwire.lanes.Level
        What the lanes mean; decides the switch's op (:attr:`op`).
    lanes : numpy.ndarray
        1-D uint32.

    Raises
    ------
    ProtocolError
        For a level that is not a ``Level`` or lanes that are not a 1-D uint32 array.

    Examples
    --------
    >>> import numpy as np
    >>> Segment(Level.BLOCK_INDEX, np.array([1, 4], np.uint32)).op.name
    'OR'
    >>> Segment(Level.DENSE, np.array([1.0]))
    Traceback (most recent call last):
    ...
    dhc.errors.ProtocolError: segment lanes must be a 1-D uint32 numpy array
    """

    level: Level
    lanes: np.ndarray  # uint32, 1-D

    def __post_init__(self) -> None:
        if not isinstance(self.level, Level):
            raise ProtocolError(f"segment level must be a dhcwire.lanes.Level, got {self.level!r}")
        if not isinstance(self.lanes, np.ndarray) or self.lanes.dtype != np.uint32 \
                or self.lanes.ndim != 1:
            raise ProtocolError("segment lanes must be a 1-D uint32 numpy array")

    @property
    def op(self) -> Op:
        return LEVEL_OPS[self.level]


class Reducer(Protocol):
    def reduce(self, segments: list[Segment]) -> list[np.ndarray]:
        """Called by ONE worker with its round; returns the aggregated lanes of every segment
        (same lengths), i.e. the elementwise SUM (uint32 wrap) or OR over all workers."""
        ...


@runtime_checkable
class CodecWorker(Protocol):
    """Per-worker state machine (HGSketchWorker, DenseWorker)."""

    @property
    def done(self) -> bool: ...

    @property
    def scale(self) -> float: ...

    def first_round(self) -> list[Segment]: ...

    def feed(self, aggregated: Sequence[np.ndarray]) -> list[Segment]: ...

    def result(self) -> np.ndarray: ...

    def result_int(self) -> np.ndarray: ...


def combine(op: Op, arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Elementwise SUM (uint32 wraparound) or OR of equally long uint32 arrays: a switch's op.

    Parameters
    ----------
    op : dhcwire.lanes.Op
    arrays : sequence of numpy.ndarray
        One uint32 array per worker, all of one length.

    Returns
    -------
    numpy.ndarray
        uint32, the aggregate.

    Examples
    --------
    >>> import numpy as np
    >>> combine(Op.SUM, [np.array([2**32 - 1, 5], np.uint32), np.array([2, 1], np.uint32)]).tolist()
    [1, 6]
    >>> combine(Op.OR, [np.array([1], np.uint32), np.array([4], np.uint32)]).tolist()
    [5]
    """
    stack = np.stack(arrays)
    if op is Op.SUM:
        return np.sum(stack, axis=0, dtype=np.uint32)
    return np.bitwise_or.reduce(stack, axis=0)


def aggregate_round(rounds: Sequence[Sequence[Segment]]) -> list[np.ndarray]:
    """Aggregate one round of every worker, as a switch would.

    Parameters
    ----------
    rounds : sequence of sequence of Segment
        One round per worker; segment counts, levels and lengths must line up exactly.

    Returns
    -------
    list of numpy.ndarray
        The aggregate of each segment position (``combine`` with the level's op).

    Raises
    ------
    ProtocolError
        If there are no workers or their rounds do not line up (naming the segment).

    Examples
    --------
    >>> import numpy as np
    >>> a = [Segment(Level.DENSE, np.array([1, 2], np.uint32))]
    >>> b = [Segment(Level.DENSE, np.array([10, 20], np.uint32))]
    >>> [x.tolist() for x in aggregate_round([a, b])]
    [[11, 22]]
    """
    if not rounds:
        raise ProtocolError("no workers in the round")
    first = rounds[0]
    for w, segs in enumerate(rounds[1:], start=1):
        if len(segs) != len(first):
            raise ProtocolError(f"worker {w} sent {len(segs)} segments, worker 0 sent {len(first)}")
        for i, (a, b) in enumerate(zip(first, segs, strict=True)):
            if a.level != b.level or a.lanes.size != b.lanes.size:
                raise ProtocolError(
                    f"segment {i}: worker {w} sent {b.level.name}[{b.lanes.size}], "
                    f"worker 0 sent {a.level.name}[{a.lanes.size}]")
    return [combine(seg.op, [segs[i].lanes for segs in rounds]) for i, seg in enumerate(first)]


def check_aggregated(sent: Sequence[Segment], aggregated: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Validate a reducer's answer against what was sent (count, lengths); return uint32 arrays."""
    if len(aggregated) != len(sent):
        raise ProtocolError(f"reducer returned {len(aggregated)} segments for {len(sent)} sent")
    out = []
    for seg, agg in zip(sent, aggregated, strict=True):
        arr = np.asarray(agg)
        if arr.shape != seg.lanes.shape:
            raise ProtocolError(
                f"aggregated {seg.level.name} has shape {arr.shape}, sent {seg.lanes.shape}")
        if arr.dtype != np.uint32:
            raise ProtocolError(f"aggregated {seg.level.name} has dtype {arr.dtype}, not uint32")
        out.append(arr)
    return out


def run_worker(worker: CodecWorker, reducer: Reducer) -> CodecWorker:
    """Drive one worker through all its rounds with ``reducer``.

    Parameters
    ----------
    worker : CodecWorker
        From ``dhc.codec.make_worker``.
    reducer : Reducer
        Aggregates each round over the job's workers.

    Returns
    -------
    CodecWorker
        The finished worker (``result()``, ``result_int()``).

    Raises
    ------
    CodecError
        Whatever the worker or reducer raised; the reducer's ``abort()`` (if it has one) is
        called first, so peers blocked in ``reduce`` fail fast instead of waiting.

    Examples
    --------
    A job of one worker, whose aggregate is its own round:

    >>> import numpy as np
    >>> from dhc.codec import make_worker
    >>> w = run_worker(make_worker(np.array([0.5, -1.0], np.float32), 1, "dense"), ThreadGroup(1).reducer(0))
    >>> w.done, w.result().tolist()
    (True, [0.5, -1.0])
    """
    try:
        segs = worker.first_round()
        while not worker.done:
            segs = worker.feed(reducer.reduce(segs))
    except BaseException:
        abort = getattr(reducer, "abort", None)
        if callable(abort):
            abort()
        raise
    return worker


def run_workers(workers: Sequence[CodecWorker], reducer: Reducer) -> None:
    """Drive several workers of one job (e.g. the gradient buckets of one training step)
    through their rounds *together*: each reduce call carries the segments of every worker
    that is not done yet, in worker order, so a step costs as many reduce calls as its longest
    allreduce has rounds, not the sum over tensors.  Every rank must pass workers with the same
    shapes in the same order; their rounds then line up (a worker's round shapes depend only on
    parameters and aggregates).  Aborts the reducer on an error, like :func:`run_worker`."""
    try:
        segs = [w.first_round() for w in workers]
        while True:
            live = [i for i, w in enumerate(workers) if not w.done]
            if not live:
                return
            flat = [s for i in live for s in segs[i]]
            agg = reducer.reduce(flat)
            if len(agg) != len(flat):
                raise ProtocolError(f"reducer returned {len(agg)} segments for {len(flat)} sent")
            at = 0
            for i in live:
                n = len(segs[i])
                segs[i] = workers[i].feed(agg[at:at + n])
                at += n
    except BaseException:
        abort = getattr(reducer, "abort", None)
        if callable(abort):
            abort()
        raise


class ThreadGroup:
    """In-process reducer for N workers running as threads.

    The last rank to arrive in a round aggregates with :func:`aggregate_round` and wakes the
    others; ``abort()`` (called by :func:`run_worker` when its worker fails) releases every
    waiting rank with a ProtocolError instead of a hang.

    Parameters
    ----------
    n_workers : int
        Ranks in the group; ``group.reducer(rank)`` gives each thread its Reducer.
    timeout : float or None
        Seconds a rank waits for the others in one round before the group aborts.

    Examples
    --------
    >>> import threading, numpy as np
    >>> group, out = ThreadGroup(2), {}
    >>> def rank(r):
    ...     out[r] = group.reducer(r).reduce([Segment(Level.DENSE, np.array([r + 1], np.uint32))])
    >>> threads = [threading.Thread(target=rank, args=(r,)) for r in range(2)]
    >>> for t in threads: t.start()
    >>> for t in threads: t.join()
    >>> out[0][0].tolist(), out[1][0].tolist()
    ([3], [3])
    >>> group.reducer(2)
    Traceback (most recent call last):
    ...
    dhc.errors.ProtocolError: rank 2 outside 0..1
    """

    def __init__(self, n_workers: int, timeout: float | None = 60.0) -> None:
        self.n_workers = n_workers
        self.timeout = timeout
        self._cond = threading.Condition()
        self._pending: list[list[Segment] | None] = [None] * n_workers
        self._arrived = 0
        self._generation = 0
        self._result: list[np.ndarray] | CodecError | None = None
        self._aborted = False

    def abort(self) -> None:
        with self._cond:
            self._aborted = True
            self._cond.notify_all()

    def _reduce(self, rank: int, segments: list[Segment]) -> list[np.ndarray]:
        with self._cond:
            if self._aborted:
                raise ProtocolError(f"rank {rank}: another worker aborted the group")
            if self._pending[rank] is not None:
                raise ProtocolError(f"rank {rank} entered the same round twice")
            gen = self._generation
            self._pending[rank] = list(segments)
            self._arrived += 1
            if self._arrived == self.n_workers:
                try:
                    self._result = aggregate_round([p for p in self._pending if p is not None])
                except CodecError as exc:
                    self._result = exc
                self._pending = [None] * self.n_workers
                self._arrived = 0
                self._generation += 1
                self._cond.notify_all()
            else:
                finished = self._cond.wait_for(
                    lambda: self._generation != gen or self._aborted, self.timeout)
                if self._generation == gen:
                    self._aborted = True
                    self._cond.notify_all()
                    why = "timed out" if not finished else "another worker aborted the group"
                    raise ProtocolError(f"rank {rank}: {why} in round {gen}")
            result = self._result
        if isinstance(result, BaseException):
            raise result
        assert result is not None
        return [a.copy() for a in result]

    def reducer(self, rank: int) -> Reducer:
        if not 0 <= rank < self.n_workers:
            raise ProtocolError(f"rank {rank} outside 0..{self.n_workers - 1}")
        group = self

        class _Rank:
            def reduce(self, segments: list[Segment]) -> list[np.ndarray]:
                return group._reduce(rank, segments)

            def abort(self) -> None:
                group.abort()

        return _Rank()

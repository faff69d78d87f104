"""The round protocol: threaded reducer, allreduce(), state machine misuse, segment typing."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dhc import (
    DenseWorker,
    HGParams,
    HGSketchWorker,
    InputError,
    MismatchError,
    ProtocolError,
    Segment,
    ThreadGroup,
    allreduce,
    simulate_allreduce,
)
from dhc.codec import make_worker
from dhc.protocol import aggregate_round, combine, run_worker, run_workers
from dhcwire.lanes import Level, Op

from .helpers import exact_quantized_sum, sparse_tensors


def _threaded(xs: list[np.ndarray], codec: str, **params: object) -> list[np.ndarray]:
    group = ThreadGroup(len(xs))
    out: list[np.ndarray | None] = [None] * len(xs)
    errors: list[BaseException] = []

    def work(rank: int) -> None:
        try:
            out[rank] = allreduce(xs[rank], group.reducer(rank), len(xs), codec=codec, **params)
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(r,)) for r in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    return [o for o in out if o is not None]


@pytest.mark.parametrize("codec", ["hg", "dense"])
def test_threaded_allreduce_matches_simulation(codec: str) -> None:
    rng = np.random.default_rng(1)
    xs = sparse_tensors(rng, 4, 5000, 0.03)
    sim = simulate_allreduce(xs, codec=codec)
    results = _threaded(xs, codec)
    assert len(results) == 4
    for r in results:
        assert np.array_equal(r, sim.sum)


@pytest.mark.parametrize("d_other, error", [(20000, ProtocolError), (200, MismatchError)])
def test_threaded_group_reports_disagreeing_workers(d_other: int, error: type) -> None:
    """Different sizes: misaligned lanes (ProtocolError) or, when the lane counts happen to
    match, the SCALE fingerprint (MismatchError)."""
    a = HGSketchWorker(np.ones(100, np.float32), 2)
    b = HGSketchWorker(np.ones(d_other, np.float32), 2)
    group = ThreadGroup(2, timeout=10)
    errors: list[BaseException] = []

    def work(w: HGSketchWorker, rank: int) -> None:
        try:
            run_worker(w, group.reducer(rank))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w, r)) for r, w in enumerate((a, b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(errors) == 2 and all(isinstance(e, error) for e in errors)


def test_combine_wraps_and_ors() -> None:
    a = np.array([0xFFFFFFFF, 5, 0x80000000], dtype=np.uint32)
    b = np.array([2, 0xFFFFFFFB, 0x80000000], dtype=np.uint32)
    assert combine(Op.SUM, [a, b]).tolist() == [1, 0, 0]
    assert combine(Op.OR, [a, b]).tolist() == [0xFFFFFFFF, 0xFFFFFFFF, 0x80000000]


def test_segment_validation_and_op() -> None:
    seg = Segment(Level.VALUE_SKETCH, np.zeros(3, np.uint32))
    assert seg.op is Op.SUM
    assert Segment(Level.BLOCK_INDEX, np.zeros(1, np.uint32)).op is Op.OR
    with pytest.raises(ProtocolError):
        Segment(Level.DENSE, np.zeros(3, np.int32))
    with pytest.raises(ProtocolError):
        Segment(3, np.zeros(3, np.uint32))  # type: ignore[arg-type]


def test_state_machine_misuse() -> None:
    x = np.ones(64, np.float32)
    w = HGSketchWorker(x, 1)
    with pytest.raises(ProtocolError):
        w.feed([])
    with pytest.raises(ProtocolError):
        w.result()
    segs = w.first_round()
    with pytest.raises(ProtocolError):
        w.first_round()
    with pytest.raises(ProtocolError, match="segments"):
        w.feed([segs[0].lanes])
    with pytest.raises(ProtocolError, match="shape"):
        w.feed([segs[0].lanes, np.zeros(segs[1].lanes.size + 1, np.uint32)])
    with pytest.raises(ProtocolError, match="dtype"):
        w.feed([segs[0].lanes, segs[1].lanes.astype(np.int64)])
    while not w.done:
        segs = w.feed(aggregate_round([segs]))
    assert segs == []
    with pytest.raises(ProtocolError):
        w.feed([])
    assert np.array_equal(w.result(), x)


@pytest.mark.parametrize("codec", ["hg", "dense"])
def test_both_codecs_share_the_phase_machine_and_the_scale_round(codec: str) -> None:
    """One phase machine (``dhc.rounds.RoundWorker``): the same misuse errors for both codecs;
    one scale round: the same scale exponent from the same inputs; HG-Sketch's per-round state
    exists only while the rounds run."""
    xs = [np.array([0.0, 3.5, -0.25, 0.0], np.float32), np.array([1e-3, 0, 0, -7], np.float32)]
    ws = [make_worker(x, 2, codec) for x in xs]
    with pytest.raises(ProtocolError, match="state 'new'"):
        ws[0].feed([])
    with pytest.raises(ProtocolError, match="before the last round"):
        ws[0].result_int()
    if codec == "hg":
        assert ws[0].round_state is None
    segs = [w.first_round() for w in ws]
    with pytest.raises(ProtocolError, match="twice"):
        ws[0].first_round()
    while not ws[0].done:
        if codec == "hg":
            assert ws[0].round_state is not None
        agg = aggregate_round(segs)
        segs = [w.feed(agg) for w in ws]
    with pytest.raises(ProtocolError, match="state 'done'"):
        ws[0].feed([])
    if codec == "hg":
        assert ws[0].round_state is None
    other = simulate_allreduce(xs, codec="dense" if codec == "hg" else "hg")
    assert ws[0].scale_exponent == other.scale_exponent
    assert np.array_equal(ws[0].result_int(), other.sum_int)


def test_single_worker_is_identity_up_to_quantization() -> None:
    rng = np.random.default_rng(2)
    x = sparse_tensors(rng, 1, 4096, 0.1)[0].reshape(64, 64)
    for cls in (HGSketchWorker, DenseWorker):
        w = run_worker(cls(x, 1), _Identity())
        assert w.result().shape == (64, 64)
        assert np.array_equal(w.result_int(), exact_quantized_sum([x], w.scale_exponent))
        assert np.max(np.abs(w.result() - x)) <= 0.5 / w.scale


def test_result_into_caller_buffer() -> None:
    rng = np.random.default_rng(4)
    xs = sparse_tensors(rng, 2, 1000, 0.05)
    ws = [HGSketchWorker(x, 2, HGParams(block_size=64)) for x in xs]
    segs = [w.first_round() for w in ws]
    while not ws[0].done:
        agg = aggregate_round(segs)
        segs = [w.feed(agg) for w in ws]
    buf = np.full(1000, 7.0, dtype=np.float32)
    assert ws[0].result(out=buf) is buf
    assert np.array_equal(buf, ws[1].result())


class _Identity:
    """Reducer of a one-worker job: the aggregate is the worker's own lanes."""

    def reduce(self, segments: list[Segment]) -> list[np.ndarray]:
        return [s.lanes.copy() for s in segments]


@pytest.mark.parametrize("bad", [np.full(50, np.nan, np.float32), np.ones(50, np.int64)])
def test_failing_worker_releases_its_peers(bad: np.ndarray) -> None:
    """Rank 1 has bad input (NaN: fails in its first round; int: fails at construction);
    rank 0 must get a ProtocolError, not hang."""
    xs = [np.ones(50, np.float32), bad]
    group = ThreadGroup(2, timeout=30)
    errors: dict[int, BaseException] = {}

    def work(rank: int) -> None:
        try:
            allreduce(xs[rank], group.reducer(rank), 2)
        except BaseException as exc:
            errors[rank] = exc

    threads = [threading.Thread(target=work, args=(r,)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert isinstance(errors[1], InputError)
    assert isinstance(errors[0], ProtocolError) and "aborted" in str(errors[0])


def test_run_workers_shares_each_round_between_tensors() -> None:
    """Several tensors of one job (a training step's buckets) through one reduce call per
    round: the same sums as one allreduce per tensor, and as many calls as the longest one
    has rounds (HG 3, fused HG 2, dense 2, a stalled HG 4)."""
    n = 3
    rng = np.random.default_rng(11)
    specs = [("hg", {}, 5000, 0.01), ("dense", {}, 300, 1.0), ("hg", {"fuse_rounds": True}, 800, 0.1),
             ("hg", {"buckets": 30}, 2000, 0.05)]
    tensors = [[(rng.standard_normal(d) * (rng.random(d) < p)).astype(np.float32)
                for _ in range(n)] for _, _, d, p in specs]
    group = ThreadGroup(n)
    calls = [0] * n
    results: list = [None] * n

    def rank(r: int) -> None:
        red = group.reducer(r)

        class Counting:
            def reduce(self, segments):
                calls[r] += 1
                return red.reduce(segments)

        ws = [make_worker(t[r], n, codec, **params)
              for (codec, params, _, _), t in zip(specs, tensors, strict=True)]
        run_workers(ws, Counting())
        results[r] = [w.result_int() for w in ws]

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert calls == [4] * n                                  # the stalled HG has 4 rounds
    for i, (codec, params, _, _) in enumerate(specs):
        alone = simulate_allreduce(tensors[i], codec=codec, **params)
        for r in range(n):
            assert np.array_equal(results[r][i], alone.sum_int)

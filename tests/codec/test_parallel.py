"""The threaded whole-tensor passes and the packed peeling path change nothing."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from dhc import parallel, peeling
from dhc.codec import simulate_allreduce
from dhc.hashing import SketchHash
from dhc.synthetic import synthetic_job


@pytest.mark.parametrize("workers", [1, 3])
def test_one_or_two_threads_give_identical_lanes_and_results(workers):
    xs = synthetic_job(workers, (1 << 20) + 4097, 0.003, seed=7)
    before = parallel.threads()
    try:
        parallel.set_threads(1)
        one = simulate_allreduce(xs)
        parallel.set_threads(2)
        two = simulate_allreduce(xs)
    finally:
        parallel.set_threads(before)
    assert np.array_equal(one.sum_int, two.sum_int)
    assert np.array_equal(one.sum.view(np.uint32), two.sum.view(np.uint32))
    assert [r.as_dict() for r in one.rounds] == [r.as_dict() for r in two.rounds]


def test_both_runs_each_half_once_and_takes_back_an_unstarted_half():
    """Both halves run exactly once, on two threads when the pool thread is free; a half the
    pool thread has not started when the caller's half is done runs on the caller's thread."""
    parallel.both(lambda: None, lambda: None)              # the pool thread exists now
    started = threading.Event()
    release = threading.Event()

    def hold() -> str:                                     # occupies the pool thread
        started.set()
        release.wait(5)
        return "held"

    held = parallel._pool.submit(hold)
    started.wait(5)
    calls: list[str] = []
    a, b = parallel.both(lambda: calls.append("first") or threading.get_ident(),
                         lambda: calls.append("second") or threading.get_ident())
    release.set()
    assert held.result() == "held"
    assert sorted(calls) == ["first", "second"]
    assert a == b == threading.get_ident()                 # taken back by the caller
    running = threading.Event()

    def pooled() -> int:
        running.set()
        return threading.get_ident()

    a, b = parallel.both(lambda: (running.wait(5), threading.get_ident())[1], pooled)
    assert a == threading.get_ident() != b                 # a free pool thread runs its half


def test_both_waits_for_the_second_half_when_the_first_raises():
    done: list[int] = []

    def second() -> None:
        time.sleep(0.02)
        done.append(1)

    def first() -> None:
        time.sleep(0.005)
        raise ValueError("first")

    with pytest.raises(ValueError, match="first"):
        parallel.both(first, second)
    at_return = list(done)                                 # cancelled, or finished
    time.sleep(0.05)
    assert done == at_return                               # nothing ran on after the call


def _sketch(k: int, ratio: float, seed: int):
    rng = np.random.default_rng(seed)
    h = SketchHash(seed=seed, rows=3, row_len=max(1, int(ratio * k / 3)))
    buckets, negative = h.rows_of(h.keys(np.arange(k, dtype=np.uint64)))
    values = rng.integers(-(1 << 20), 1 << 20, size=k)
    signed = np.where(negative, -values[None, :], values[None, :])
    sketch = np.zeros(h.m, dtype=np.int64)
    np.add.at(sketch, buckets.reshape(-1), signed.reshape(-1))
    return buckets, negative, (sketch & 0xFFFFFFFF).astype(np.uint32), values


@pytest.mark.parametrize(("k", "ratio", "corrupt"), [(5000, 1.3, False), (5000, 1.15, False),
                                                     (20000, 1.25, True), (300, 1.5, True)])
def test_packed_peeling_equals_the_general_path(k, ratio, corrupt):
    buckets, negative, sketch, values = _sketch(k, ratio, seed=k)
    if corrupt:
        sketch[len(sketch) // 2] ^= np.uint32(1 << 7)
    count = np.bincount(buckets.reshape(-1), minlength=sketch.shape[0])
    shift = max(1, int(count.max()).bit_length())
    packed = peeling._peel_packed(buckets, negative, sketch, count, shift)
    general = peeling._peel_general(buckets, negative, sketch)
    assert np.array_equal(packed.values, general.values)
    assert np.array_equal(packed.recovered, general.recovered)
    assert np.array_equal(packed.residual, general.residual)
    assert packed.iterations == general.iterations
    if not corrupt and ratio >= 1.3:
        assert packed.recovered.all() and np.array_equal(packed.values, values)

"""Every bad input and every corrupted aggregate raises a clear CodecError, never garbage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dhc import (
    CodecError,
    DecodeError,
    HGSketchWorker,
    InputError,
    MismatchError,
    OverflowRisk,
    simulate_allreduce,
)
from dhc.protocol import aggregate_round
from dhcwire.lanes import LEVEL_OPS, Level, Op

from .helpers import exact_quantized_sum, sparse_tensors


@pytest.mark.parametrize("codec", ["hg", "dense"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values(codec: str, bad: float) -> None:
    xs = [np.zeros(100, np.float32) for _ in range(3)]
    xs[1][17] = bad
    with pytest.raises(InputError, match="non-finite"):
        simulate_allreduce(xs, codec=codec)


@pytest.mark.parametrize("codec", ["hg", "dense"])
def test_mismatched_shapes_and_dtypes(codec: str) -> None:
    with pytest.raises(InputError, match="shape"):
        simulate_allreduce([np.ones(10, np.float32), np.ones(11, np.float32)], codec=codec)
    with pytest.raises(InputError, match="shape"):
        simulate_allreduce([np.ones((2, 5), np.float32), np.ones(10, np.float32)], codec=codec)
    with pytest.raises(InputError, match="dtype"):
        simulate_allreduce([np.ones(10, np.float32), np.ones(10, np.float64)], codec=codec)


def test_disagreement_detected_in_band_by_fingerprint() -> None:
    """Workers driven separately (as over a network) with different params or dtypes."""
    for kw_a, kw_b, xa, xb in [
        ({}, {"block_size": 512}, np.ones(300, np.float32), np.ones(300, np.float32)),
        ({}, {"seed": 1}, np.ones(300, np.float32), np.ones(300, np.float32)),
        ({}, {}, np.ones(300, np.float32), np.ones(300, np.float64)),
    ]:
        a, b = HGSketchWorker(xa, 2, **kw_a), HGSketchWorker(xb, 2, **kw_b)
        agg = aggregate_round([a.first_round(), b.first_round()])
        with pytest.raises(MismatchError, match="disagree"):
            a.feed(agg)


@pytest.mark.parametrize("x, match", [
    (np.ones(10, np.int32), "dtype"), (np.array([], np.float32), "empty"),
    (np.array(["a"]), "dtype"), (np.ones(3, np.complex64), "dtype")])
def test_bad_tensors(x: np.ndarray, match: str) -> None:
    with pytest.raises(InputError, match=match):
        HGSketchWorker(x, 1)


@pytest.mark.parametrize("n", [0, -1, 2**16 + 1, 1.5, True])
def test_bad_worker_counts(n: object) -> None:
    with pytest.raises(InputError):
        HGSketchWorker(np.ones(4, np.float32), n)  # type: ignore[arg-type]
    if n == 2**16 + 1:
        with pytest.raises(OverflowRisk):
            HGSketchWorker(np.ones(4, np.float32), n)  # type: ignore[arg-type]


@pytest.mark.parametrize("params", [
    {"block_size": 100}, {"block_size": 16}, {"rows": 1}, {"m_factor": 0}, {"m_extra": -1},
    {"buckets": 0}, {"no_such": 1}])
def test_bad_params(params: dict) -> None:
    with pytest.raises(InputError, match=next(iter(params))):
        simulate_allreduce([np.ones(10, np.float32)], **params)


def test_too_large_magnitude() -> None:
    with pytest.raises(OverflowRisk, match="2\\*\\*128"):
        simulate_allreduce([np.array([1e39, 0.0], np.float64)])


def test_unknown_codec() -> None:
    with pytest.raises(InputError, match="codec"):
        simulate_allreduce([np.ones(3, np.float32)], codec="zip")


# --- corrupted aggregates --------------------------------------------------------------------

def _cases(stuck: bool) -> tuple[list[np.ndarray], dict]:
    rng = np.random.default_rng(21)
    xs = sparse_tensors(rng, 4, 6000, 0.02)
    if stuck:
        union = int(np.count_nonzero(np.any(np.stack(xs) != 0, axis=0)))
        return xs, {"buckets": int(0.8 * union)}
    return xs, {}


def _tamper_at(round_idx: int, seg_idx: int, lane: int, mode: str, value: int):
    hit = {"done": False, "level": None}

    def tamper(r: int, segs: list, agg: list) -> None:
        if r != round_idx or seg_idx >= len(agg):
            return
        a = agg[seg_idx]
        i = lane % a.size
        hit["level"] = segs[seg_idx].level
        if mode == "add":
            a[i] = np.uint32((int(a[i]) + value) & 0xFFFFFFFF)
        elif mode == "clear":
            a[i] = np.uint32(int(a[i]) & ~value & 0xFFFFFFFF)
        else:
            a[i] = np.uint32(int(a[i]) ^ value)
        hit["done"] = True

    return tamper, hit


@pytest.mark.parametrize("codec, stuck", [("hg", False), ("hg", True), ("dense", False)])
@given(data=st.data())
@settings(max_examples=150, deadline=None, database=None)
def test_any_changed_sum_lane_raises(codec: str, stuck: bool, data: st.DataObject) -> None:
    """A SUM lane changed in flight (any round, any lane, any nonzero delta) is detected."""
    xs, params = _cases(stuck)
    rounds = 2 if codec == "dense" else (4 if stuck else 3)
    r = data.draw(st.integers(0, rounds - 1))
    seg = data.draw(st.integers(0, 1))
    lane = data.draw(st.integers(0, 10**6))
    delta = data.draw(st.integers(1, 2**32 - 1))
    tamper, hit = _tamper_at(r, seg, lane, "add", delta)
    try:
        res = simulate_allreduce(xs, codec=codec, tamper=tamper, **params)
    except DecodeError:
        assert hit["done"]
        return
    # no error: the change must have hit an OR lane, and the sum must still be exact
    assert hit["level"] is None or LEVEL_OPS[hit["level"]] is Op.OR
    assert np.array_equal(res.sum_int, exact_quantized_sum(xs, res.scale_exponent))


@pytest.mark.parametrize("stuck", [False, True])
@given(data=st.data())
@settings(max_examples=200, deadline=None, database=None)
def test_flipped_or_bits_raise_or_stay_exact(stuck: bool, data: st.DataObject) -> None:
    """OR lanes: clearing a bit some worker set always raises; setting a spare bit either
    raises or leaves the result the exact sum of the quantized inputs (at the scale used)."""
    xs, params = _cases(stuck)
    r = data.draw(st.integers(0, 1))
    seg = data.draw(st.integers(0, 1))
    lane = data.draw(st.integers(0, 10**6))
    bit = 1 << data.draw(st.integers(0, 31))
    mode = data.draw(st.sampled_from(["xor", "clear"]))
    tamper, hit = _tamper_at(r, seg, lane, mode, bit)
    try:
        res = simulate_allreduce(xs, tamper=tamper, **params)
    except CodecError as exc:
        assert isinstance(exc, DecodeError), exc
        return
    assert np.array_equal(res.sum_int, exact_quantized_sum(xs, res.scale_exponent))


@pytest.mark.parametrize("level", [Level.SCALE, Level.BLOCK_INDEX, Level.ELEMENT_INDEX,
                                   Level.VALUE_SKETCH, Level.STUCK])
def test_clearing_all_of_a_level_raises(level: Level) -> None:
    xs, params = _cases(stuck=True)

    def wipe(r: int, segs: list, agg: list) -> None:
        for s, a in zip(segs, agg, strict=True):
            if s.level is level:
                a[:] = 0

    with pytest.raises(DecodeError):
        simulate_allreduce(xs, tamper=wipe, **params)


def test_swapped_sketch_lanes_raise() -> None:
    xs, params = _cases(stuck=False)

    def swap(r: int, segs: list, agg: list) -> None:
        if r == 2:
            a = agg[0]
            nz = np.flatnonzero(a)
            a[nz[0]], a[nz[1]] = a[nz[1]], a[nz[0]]

    with pytest.raises(DecodeError):
        simulate_allreduce(xs, tamper=swap, **params)


@pytest.mark.parametrize("codec, trials, max_escapes", [("hg", 40, 0), ("dense", 256, 12)])
def test_paired_high_bit_changes_raise(codec: str, trials: int, max_escapes: int) -> None:
    """Adding 2**31 to two SUM lanes leaves sum q unchanged mod 2**32; only the parities of the
    six hashed weights can see it (escape probability 2**-6 for dense: expected 4 of 256, a
    correlated-parity design would let ~128 through).  HG also has the residual sketch check."""
    xs, params = _cases(stuck=False)
    rng = np.random.default_rng(5)
    last = 1 if codec == "dense" else 2
    escapes = 0
    for _ in range(trials):
        picks = rng.choice(600, size=2, replace=False)

        def tamper(r: int, segs: list, agg: list, picks=picks) -> None:
            if r == last:
                a = agg[0]
                for i in picks % a.size:
                    a[i] = np.uint32((int(a[i]) + (1 << 31)) & 0xFFFFFFFF)

        try:
            simulate_allreduce(xs, codec=codec, tamper=tamper, **params)
            escapes += 1
        except DecodeError:
            pass
    assert escapes <= max_escapes


@pytest.mark.parametrize(("change", "match"), [(lambda a: a & ~np.uint32(2), "lacks block 1 "),
                                               (lambda a: a | np.uint32(1 << 5),
                                                "beyond its 4 items")])
def test_block_index_corruption_is_named(change, match: str) -> None:
    """A BLOCK_INDEX aggregate that lacks a worker's block, or has a padding bit set, raises
    and says which."""
    x = np.zeros(100, np.float32)
    x[[3, 40]] = 1.0                     # blocks 0 and 1 of 4

    def tamper(r: int, segs: list, agg: list) -> None:
        if r == 0:
            agg[1][0] = change(agg[1][0])

    with pytest.raises(DecodeError, match=match):
        simulate_allreduce([x, x], tamper=tamper)

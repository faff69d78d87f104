"""Property: simulate_allreduce equals the exact sum of the quantized inputs, bit for bit."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dhc import HGParams, simulate_allreduce
from dhc import quantize as qz
from dhc.hgsketch import CHECK_LANES
from dhcwire.lanes import LEVEL_OPS, Level

from .helpers import exact_quantized_sum, expected_scale_exponent, sparse_tensors

cases = st.fixed_dictionaries({
    "n": st.integers(1, 32),
    "d": st.integers(1, 6000),
    "density": st.sampled_from([0.0, 0.0005, 0.003, 0.01, 0.05, 0.2, 0.6, 1.0]),
    "log_mag": st.integers(-30, 30),
    "clustered": st.booleans(),
    "block": st.sampled_from([32, 64, 256, 1024]),
    "seed": st.integers(0, 2**32 - 1),
})


def _check(case: dict, **params: object) -> None:
    rng = np.random.default_rng(case["seed"])
    xs = sparse_tensors(rng, case["n"], case["d"], case["density"],
                        magnitude=10.0 ** case["log_mag"], clustered=case["clustered"])
    res = simulate_allreduce(xs, block_size=case["block"], seed=case["seed"] % 1000, **params)
    assert res.scale_exponent == expected_scale_exponent(xs)
    ref = exact_quantized_sum(xs, res.scale_exponent)
    assert res.sum_int.dtype == np.int64
    assert np.array_equal(res.sum_int, ref)
    assert np.array_equal(res.sum, qz.dequantize(ref, res.scale_exponent))
    dense = simulate_allreduce(xs, codec="dense")
    assert dense.scale_exponent == res.scale_exponent
    assert np.array_equal(dense.sum_int, ref)
    return res


@given(cases)
@settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
def test_sum_is_exact(case: dict) -> None:
    _check(case)


@given(cases, st.floats(0.2, 1.15))
@settings(max_examples=250, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
def test_sum_is_exact_below_peeling_threshold(case: dict, ratio: float) -> None:
    """Force m below the r=3 peeling threshold (~1.22 k): the stuck-set round must finish it."""
    rng = np.random.default_rng(case["seed"])
    xs = sparse_tensors(rng, case["n"], case["d"], case["density"],
                        magnitude=10.0 ** case["log_mag"], clustered=case["clustered"])
    union = int(np.count_nonzero(np.any(np.stack(xs) != 0, axis=0)))
    res = simulate_allreduce(xs, block_size=case["block"], buckets=max(1, int(ratio * union)))
    ref = exact_quantized_sum(xs, res.scale_exponent)
    assert np.array_equal(res.sum_int, ref)
    if union >= 50:
        assert res.stuck_size > 0
        assert res.rounds[-1].levels == {"STUCK": res.stuck_size}


def test_stuck_round_is_exercised_and_exact() -> None:
    rng = np.random.default_rng(7)
    xs = sparse_tensors(rng, 8, 20000, 0.01)
    union = int(np.count_nonzero(np.any(np.stack(xs) != 0, axis=0)))
    res = simulate_allreduce(xs, buckets=int(0.9 * union))
    assert res.stuck_size > union // 4
    assert [list(r.levels) for r in res.rounds] == [
        ["SCALE", "BLOCK_INDEX"], ["ELEMENT_INDEX"], ["VALUE_SKETCH"], ["STUCK"]]
    assert np.array_equal(res.sum_int, exact_quantized_sum(xs, res.scale_exponent))


def test_default_sizing_peels_without_stuck_round() -> None:
    rng = np.random.default_rng(3)
    xs = sparse_tensors(rng, 4, 200000, 0.01)
    res = simulate_allreduce(xs)
    assert res.stuck_size == 0 and len(res.rounds) == 3
    assert res.sketch_buckets <= 1.26 * res.union_nnz + 30
    assert np.array_equal(res.sum_int, exact_quantized_sum(xs, res.scale_exponent))


def test_round_sizes_and_ops() -> None:
    """Every segment's op is the switch's op for its level; sizes follow the sizing rules."""
    rng = np.random.default_rng(5)
    d, block = 10000, 256
    xs = sparse_tensors(rng, 3, d, 0.02, clustered=True)
    seen: list[tuple[int, Level, int]] = []

    def spy(r: int, segs: list, agg: list) -> None:
        for s, a in zip(segs, agg, strict=True):
            assert s.op is LEVEL_OPS[s.level] and a.dtype == np.uint32 and a.shape == s.lanes.shape
            seen.append((r, s.level, s.lanes.size))

    res = simulate_allreduce(xs, block_size=block, tamper=spy)
    union = np.any(np.stack(xs) != 0, axis=0)
    active_blocks = int(np.count_nonzero(np.pad(union, (0, -d % block)).reshape(-1, block).any(1)))
    assert seen[0] == (0, Level.SCALE, qz.SCALE_LANES)
    assert seen[1] == (0, Level.BLOCK_INDEX, math.ceil(math.ceil(d / block) / 32))
    assert seen[2] == (1, Level.ELEMENT_INDEX, active_blocks * block // 32)
    assert seen[3] == (2, Level.VALUE_SKETCH, res.sketch_buckets)
    assert seen[4] == (2, Level.VALUE_SKETCH, CHECK_LANES)
    assert res.union_nnz == int(np.count_nonzero(union))
    assert res.wire_bytes == 4 * sum(n for _, _, n in seen)


def test_float16_and_float64_inputs() -> None:
    rng = np.random.default_rng(11)
    for dtype in (np.float16, np.float64):
        xs = sparse_tensors(rng, 5, 3000, 0.05, dtype=dtype)
        res = simulate_allreduce(xs)
        assert res.sum.dtype == np.float32
        assert np.array_equal(res.sum_int, exact_quantized_sum(xs, res.scale_exponent))


def test_sketch_lanes_wrap_exactly_mod_2_32() -> None:
    """Per-worker bucket sums are uint32 and wrap mod 2**32 like the switch: the VALUE_SKETCH
    lanes equal a Python-int reference mod 2**32 even where the true sum leaves int32, and the
    decoded sum stays exact.  (m forced to 3: one bucket per row holds all ~1500 large values.)"""
    from dhc.hashing import SketchHash
    from dhc.hgsketch import HGParams

    rng = np.random.default_rng(9)
    xs = sparse_tensors(rng, 6, 5000, 0.3, magnitude=1e6)
    sent: dict[int, np.ndarray] = {}

    def capture(round_idx: int, segs0: list, agg: list) -> None:
        if round_idx == 2:
            sent[0] = segs0[0].lanes.copy()

    res = simulate_allreduce(xs, tamper=capture, buckets=3)
    assert np.array_equal(res.sum_int, exact_quantized_sum(xs, res.scale_exponent))
    p = HGParams(buckets=3)
    h = SketchHash(p.seed, p.rows, res.sketch_buckets // p.rows, 6)
    idx = np.flatnonzero(xs[0])
    q = np.rint(np.ldexp(xs[0][idx].astype(np.float64), res.scale_exponent)).astype(np.int64)
    keys = h.keys(idx)
    true = [0] * res.sketch_buckets
    for j in range(p.rows):
        b, s = h.row(keys, j)
        for bucket, value in zip(b.tolist(), (s * q).tolist(), strict=True):
            true[bucket] += value
    assert max(abs(v) for v in true) >= 2**31          # some bucket really wraps
    assert sent[0].tolist() == [v % 2**32 for v in true]


def test_tiny_float64_values_are_clamped_not_lost_in_scale() -> None:
    xs = [np.array([1e-60, -3e-61, 0.0, 2e-70]) for _ in range(3)]
    res = simulate_allreduce(xs)
    assert res.scale_exponent == qz.precision_bits(3) - qz.EXP_MIN
    assert np.array_equal(res.sum_int, exact_quantized_sum(xs, res.scale_exponent))


@given(cases, st.sampled_from([None, 0.5, 1.0]))
@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
def test_sum_is_exact_with_fused_rounds(case: dict, ratio: float | None) -> None:
    """fuse_rounds: the element index and the sketch share a round; m is sized from the sum
    of the workers' nonzero counts (forced below the union: the stuck round finishes it)."""
    rng = np.random.default_rng(case["seed"])
    xs = sparse_tensors(rng, case["n"], case["d"], case["density"],
                        magnitude=10.0 ** case["log_mag"], clustered=case["clustered"])
    union = int(np.count_nonzero(np.any(np.stack(xs) != 0, axis=0)))
    extra = {} if ratio is None else {"buckets": max(1, int(ratio * union))}
    res = simulate_allreduce(xs, block_size=case["block"], fuse_rounds=True, **extra)
    assert np.array_equal(res.sum_int, exact_quantized_sum(xs, res.scale_exponent))
    levels = [list(r.levels) for r in res.rounds]
    if union:
        assert levels[:2] == [["SCALE", "BLOCK_INDEX", "VALUE_SKETCH"],
                              ["ELEMENT_INDEX", "VALUE_SKETCH"]]
        assert len(levels) == (3 if res.stuck_size else 2)
        if ratio is None:
            total = sum(int(np.count_nonzero(x)) for x in xs)
            b = case["block"]
            nz = np.any(np.stack(xs) != 0, axis=0)
            active = int(np.count_nonzero(np.add.reduceat(nz, np.arange(0, nz.size, b))))
            bound = min(total, active * b, case["d"])
            assert res.sketch_buckets == HGParams().sketch_buckets(bound)

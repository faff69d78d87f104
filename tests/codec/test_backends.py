"""The compiled backend (numba) and the numpy reference agree bit for bit.

Every lane of every round of every worker, the int64 and float32 sums, the peeling generation
count and the stuck set are compared on random inputs (Hypothesis), including all-zero and
single-element tensors, wrapping sketch lanes, forced stalls and corrupted aggregates.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dhc import backend, parallel
from dhc import quantize as qz
from dhc.errors import CodecError, InputError, OverflowRisk
from dhc.hashing import SketchHash
from dhc.hgsketch import HGSketchWorker
from dhc.index import LocalIndex
from dhc.peeling import peel_rows
from dhc.protocol import aggregate_round
from dhc.synthetic import synthetic_job

from .helpers import exact_quantized_sum, sparse_tensors

pytestmark = pytest.mark.skipif("numba" not in backend.available(), reason="numba missing")
native = backend.native      # None without numba (then every test here is skipped)
peel_kernels = native.peel_kernels if native is not None else None


def run_both(xs: list[np.ndarray], tamper_round: int | None = None, **params: object) -> dict:
    """Run the same job once per backend; returns per backend the lanes of every round of
    every worker, worker 0 and the exception (if any)."""
    out = {}
    for be in backend.BACKENDS:
        ws = [HGSketchWorker(x, len(xs), backend=be, **params) for x in xs]
        rounds, error = [], None
        try:
            segs = [w.first_round() for w in ws]
            while True:
                rounds.append([[s.lanes.copy() for s in ss] for ss in segs])
                agg = aggregate_round(segs)
                if tamper_round == len(rounds) - 1 and agg and agg[0].size:
                    agg[0][agg[0].size // 2] ^= np.uint32(1 << 9)
                segs = [w.feed(agg) for w in ws]
                if ws[0].done:
                    break
        except CodecError as exc:
            error = (type(exc), str(exc))
        out[be] = {"rounds": rounds, "worker": ws[0], "error": error}
    return out


def assert_identical(res: dict) -> None:
    a, b = res["numba"], res["numpy"]
    assert a["error"] == b["error"]
    assert len(a["rounds"]) == len(b["rounds"])
    for ra, rb in zip(a["rounds"], b["rounds"], strict=True):
        for wa, wb in zip(ra, rb, strict=True):
            assert len(wa) == len(wb)
            for la, lb in zip(wa, wb, strict=True):
                assert la.dtype == lb.dtype == np.uint32 and np.array_equal(la, lb)
    if a["error"] is None:
        wa, wb = a["worker"], b["worker"]
        assert np.array_equal(wa.result_int(), wb.result_int())
        assert np.array_equal(wa.result().view(np.uint32 if wa.result().dtype == np.float32
                                                else np.uint8),
                              wb.result().view(np.uint32 if wb.result().dtype == np.float32
                                               else np.uint8))
        assert wa.stats.peeling_iterations == wb.stats.peeling_iterations
        assert wa.stats.stuck_size == wb.stats.stuck_size
        assert wa.stats.union_nnz == wb.stats.union_nnz


cases = st.fixed_dictionaries({
    "n": st.integers(1, 6),
    "d": st.sampled_from([1, 2, 31, 64, 65, 1000, 4097, 20000]),
    "density": st.sampled_from([0.0, 0.001, 0.01, 0.1, 0.5, 1.0]),
    "log_mag": st.integers(-30, 30),
    "clustered": st.booleans(),
    "block": st.sampled_from([32, 64, 256]),
    "dtype": st.sampled_from([np.float16, np.float32, np.float64]),
    "stall": st.sampled_from([None, 0.3, 0.9, 1.1]),
    "fuse": st.booleans(),
    "seed": st.integers(0, 2**32 - 1),
})


def _tensors(case: dict) -> list[np.ndarray]:
    rng = np.random.default_rng(case["seed"])
    mag = 10.0 ** case["log_mag"] if case["dtype"] != np.float16 else 10.0 ** (case["log_mag"] % 4)
    return sparse_tensors(rng, case["n"], case["d"], case["density"], magnitude=mag,
                          clustered=case["clustered"], dtype=case["dtype"])


def _params(case: dict, xs: list[np.ndarray]) -> dict:
    params: dict = {"block_size": case["block"], "seed": case["seed"] % 997,
                    "fuse_rounds": case["fuse"]}
    if case["stall"] is not None:          # m below the peeling threshold: a stuck round
        union = int(np.count_nonzero(np.any(np.stack(xs) != 0, axis=0)))
        params["buckets"] = max(1, int(case["stall"] * union))
    return params


@given(cases)
@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
def test_backends_give_identical_lanes_sums_and_stuck_sets(case: dict) -> None:
    xs = _tensors(case)
    res = run_both(xs, **_params(case, xs))
    assert_identical(res)
    w = res["numba"]["worker"]
    assert np.array_equal(w.result_int(), exact_quantized_sum(xs, w.scale_exponent))


@given(cases, st.integers(0, 3))
@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
def test_backends_fail_the_same_way_on_a_corrupted_aggregate(case: dict, rnd: int) -> None:
    xs = _tensors(case)
    assert_identical(run_both(xs, tamper_round=rnd, **_params(case, xs)))


def test_all_zero_and_single_element_tensors() -> None:
    for xs in ([np.zeros(1000, np.float32)] * 3, [np.zeros(1, np.float32)],
               [np.array([2.5], np.float32)], [np.array([-1.0]), np.array([0.0])],
               [np.array([3.0], np.float16)] * 4):
        res = run_both(xs)
        assert_identical(res)
        assert res["numba"]["error"] is None


def test_wrapping_sketch_lanes_are_identical() -> None:
    """One worker keeps 30 bits per value, so buckets' true sums leave the int32 range and the
    lanes wrap; both backends give the same lanes, equal to the true sums mod 2**32."""
    x = np.zeros(5000, np.float32)
    x[::5] = 0.99
    res = run_both([x])
    assert_identical(res)
    w = HGSketchWorker(x, 1, backend="numpy")
    w.feed(aggregate_round([w.first_round()]))
    w.feed(aggregate_round([w._sent]))
    assert w.round_state is not None and w.round_state.rows is not None
    buckets, negative = w.round_state.rows
    q = np.full(buckets.shape[1], int(np.rint(float(x[0]) * 2.0 ** w.scale_exponent)), np.int64)
    true = np.zeros(w.round_state.hash.m, np.int64)
    np.add.at(true, buckets.reshape(-1), np.where(negative, -q, q).reshape(-1))
    assert np.any(np.abs(true) > 2**31)                       # wrapped as int32
    sketch = res["numba"]["rounds"][2][0][0]
    assert np.array_equal(sketch, (true & 0xFFFFFFFF).astype(np.uint32))
    assert np.array_equal(res["numba"]["worker"].result_int(),
                          exact_quantized_sum([x], res["numba"]["worker"].scale_exponent))


@pytest.mark.parametrize("prefetch", [False, True])
@pytest.mark.parametrize(("k", "ratio", "corrupt"), [(1, 3.0, False), (3000, 0.8, False),
                                                     (3000, 1.25, True), (40000, 1.22, False),
                                                     (70000, 0.01, False),
                                                     (70000, 0.01, True)])
def test_peeling_kernel_equals_the_reference(k: int, ratio: float, corrupt: bool,
                                             prefetch: bool, monkeypatch) -> None:
    """Values, recovered flags (the stuck set is the 2-core), residual and generation count,
    for random values, a stalled sketch, a corrupted one and counts too big for the 8-byte
    bucket record (ratio 0.01: the wide layout, values apart); with and without software prefetching
    (normally on only for large sketches)."""
    monkeypatch.setattr(native, "PREFETCH_BUCKETS", 1 if prefetch else 1 << 40)
    rng = np.random.default_rng(k)
    h = SketchHash(seed=k, rows=3, row_len=max(1, int(ratio * k / 3)))
    cand = np.sort(rng.choice(10 * k, size=k, replace=False)).astype(np.int64)
    keys = h.keys(cand)
    buckets, negative = h.rows_of(keys)
    values = rng.integers(-(1 << 31) + 1, 1 << 31, size=k)
    sketch = np.zeros(h.m, dtype=np.int64)
    np.add.at(sketch, buckets.reshape(-1),
              np.where(negative, -values[None, :], values[None, :]).reshape(-1))
    lanes = (sketch & 0xFFFFFFFF).astype(np.uint32)
    if corrupt:
        lanes[h.m // 3] ^= np.uint32(1 << 20)
    ref = peel_rows(buckets, negative, lanes)
    codes, nkeys = native.hash_union(h, cand)
    assert np.array_equal(nkeys, keys)
    assert np.array_equal(codes >> 1, buckets.T) and np.array_equal(codes & 1, negative.T)
    got = native.peel(codes, lanes, h.row_len)
    assert np.array_equal(got.recovered, ref.recovered)
    assert np.array_equal(got.values, ref.values)
    assert np.array_equal(got.residual, ref.residual)
    assert got.iterations == ref.iterations
    if ratio < 1.0 and k > 100:
        assert got.stuck.size > 0


def _random_sketch(k: int, ratio: float, seed: int, flips: int):
    rng = np.random.default_rng(seed)
    h = SketchHash(seed=seed, rows=3, row_len=max(1, int(ratio * k / 3)))
    cand = np.sort(rng.choice(4 * k, size=k, replace=False)).astype(np.int64)
    buckets, negative = h.rows_of(h.keys(cand))
    values = rng.integers(-(1 << 31) + 1, 1 << 31, size=k)
    sketch = np.zeros(h.m, dtype=np.int64)
    np.add.at(sketch, buckets.reshape(-1),
              np.where(negative, -values[None, :], values[None, :]).reshape(-1))
    lanes = (sketch & 0xFFFFFFFF).astype(np.uint32)
    for _ in range(flips):                   # lanes changed in flight
        lanes[rng.integers(h.m)] ^= np.uint32(1 << int(rng.integers(32)))
    return h, cand, buckets, negative, lanes


@given(st.integers(1, 3000), st.floats(0.5, 2.0), st.integers(0, 2**32 - 1),
       st.integers(0, 3), st.booleans())
@settings(max_examples=120, deadline=None, database=None)
def test_unordered_peel_with_fallback_equals_the_reference(k: int, ratio: float, seed: int,
                                                           flips: int, prefetch: bool) -> None:
    """``native.peel`` (the generation-set kernel, falling back to the ordered one when the
    order could matter) against ``peel_rows``: values, flags, residual and generation count,
    on consistent, stalled and corrupted sketches."""
    h, cand, buckets, negative, lanes = _random_sketch(k, ratio, seed, flips)
    ref = peel_rows(buckets, negative, lanes)
    before = native.PREFETCH_BUCKETS
    native.PREFETCH_BUCKETS = 1 if prefetch else 1 << 40
    try:
        got = native.peel(native.hash_union(h, cand)[0], lanes, h.row_len)
    finally:
        native.PREFETCH_BUCKETS = before
    assert np.array_equal(got.recovered, ref.recovered)
    assert np.array_equal(got.values, ref.values)
    assert np.array_equal(got.residual, ref.residual)
    assert got.iterations == ref.iterations


def test_unordered_peel_reports_when_the_order_matters() -> None:
    """A corrupted sketch where a twice-pure candidate reads differently from its two buckets
    makes the generation-set kernel return -2 (so the ordered kernel runs), and a consistent
    one never does."""
    outcomes = []
    for seed in range(40):
        for flips in (0, 1):
            h, cand, _, _, lanes = _random_sketch(300, 1.3, seed, flips)
            codes = native.hash_union(h, cand)[0]
            k, m = codes.shape[0], h.m
            shift = 32 - max(1, (k - 1).bit_length())
            it = peel_kernels.peel_sets(codes, lanes, shift, np.zeros(k, np.int64),
                                        np.zeros(k, bool), np.empty(m, np.int64),
                                        np.empty(m, np.uint64), np.empty(0, np.uint64),
                                        np.empty(m, np.int32), np.empty(k, np.int64),
                                        np.empty(k, np.int64), np.empty_like(codes), 0)
            outcomes.append((flips, it))
    assert all(it >= 0 for flips, it in outcomes if flips == 0)
    assert any(it == -2 for flips, it in outcomes if flips == 1)


def test_large_peel_with_prefetching_equals_the_reference() -> None:
    """A sketch above the prefetch threshold, as the codec sizes it, with a stall-free peel."""
    k = 110_000
    h = SketchHash(seed=7, rows=3, row_len=-(-(k * 5 // 4 + 24) // 3))
    assert native.prefetch_distance(h.m) > 0
    cand = np.arange(0, 3 * k, 3, dtype=np.int64)
    buckets, negative = h.rows_of(h.keys(cand))
    values = np.random.default_rng(7).integers(-(1 << 20), 1 << 20, size=k)
    sketch = np.zeros(h.m, dtype=np.int64)
    np.add.at(sketch, buckets.reshape(-1),
              np.where(negative, -values[None, :], values[None, :]).reshape(-1))
    lanes = (sketch & 0xFFFFFFFF).astype(np.uint32)
    ref = peel_rows(buckets, negative, lanes)
    got = native.peel(native.hash_union(h, cand)[0], lanes, h.row_len)
    assert np.array_equal(got.values, ref.values) and np.array_equal(got.values, values)
    assert np.array_equal(got.residual, ref.residual) and got.iterations == ref.iterations


@pytest.mark.parametrize("fuse", [False, True])
def test_split_union_passes_equal_the_numpy_reference(fuse: bool, monkeypatch) -> None:
    """Hashing and check sums of the union split over two threads (threshold lowered so a
    small job splits, at odd sizes) give the reference's lanes and sums, with 1 and 4 workers
    (own elements equal to the union or mapped into it), also when a lane is corrupted."""
    monkeypatch.setattr(parallel, "MIN_SPLIT_UNION", 64)
    before = parallel.threads()
    try:
        parallel.set_threads(2)
        for workers in (1, 4):
            xs = synthetic_job(workers, 50_001, 0.02, seed=workers)
            res = run_both(xs, fuse_rounds=fuse)
            assert_identical(res)
            assert np.array_equal(res["numba"]["worker"].result_int(),
                                  exact_quantized_sum(xs, res["numba"]["worker"].scale_exponent))
            assert_identical(run_both(xs, tamper_round=2, fuse_rounds=fuse))
    finally:
        parallel.set_threads(before)


@pytest.mark.parametrize("rows", [2, 3, 4, 5])
def test_compiled_hashes_equal_the_reference_for_every_row_count(rows: int) -> None:
    """The unrolled r = 3 path and the generic one give ``SketchHash.rows_of``'s buckets and
    signs, and a whole job with r rows gives the reference's lanes."""
    h = SketchHash(seed=rows, rows=rows, row_len=1009)
    cand = np.sort(np.random.default_rng(rows).choice(10**6, 5000, replace=False))
    codes, keys = native.hash_union(h, cand.astype(np.int64))
    buckets, negative = h.rows_of(h.keys(cand))
    assert np.array_equal(keys, h.keys(cand))
    assert np.array_equal(codes >> 1, buckets.T) and np.array_equal(codes & 1, negative.T)
    xs = sparse_tensors(np.random.default_rng(rows), 3, 4000, 0.05)
    assert_identical(run_both(xs, rows=rows))


def test_backend_choice_and_errors() -> None:
    x = np.ones(10, np.float32)
    assert HGSketchWorker(x, 1, backend="numpy").backend == "numpy"
    assert HGSketchWorker(x, 1).backend == backend.default()
    with pytest.raises(InputError, match="unknown codec backend"):
        HGSketchWorker(x, 1, backend="cuda")
    before = backend.default()
    try:
        backend.set_default("numpy")
        assert HGSketchWorker(x, 1).backend == "numpy"
    finally:
        backend.set_default(before)


@pytest.mark.parametrize(("value", "expect"), [("numpy", "numpy"), ("numba", "numba"),
                                               ("bogus", "unknown codec backend 'bogus'")])
def test_environment_variable_selects_the_backend(value: str, expect: str) -> None:
    code = "from dhc import backend; print(backend.default())"
    env = dict(os.environ, DHC_CODEC_BACKEND=value)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert expect in (out.stdout if out.returncode == 0 else out.stderr)


@pytest.mark.parametrize("seed", range(5))
def test_stuck_set_is_the_two_core_whatever_the_order(seed: int) -> None:
    """Peeling in a random order (one pure bucket at a time, plain Python) ends in the same
    stuck set as the kernel: the 2-core is a property of the hypergraph, not of the order."""
    rng = np.random.default_rng(seed)
    k = 400
    h = SketchHash(seed=seed, rows=3, row_len=int(0.38 * k))      # m = 1.14 k: stalls
    cand = np.arange(k, dtype=np.int64)
    codes, _ = native.hash_union(h, cand)
    got = native.peel(codes, np.zeros(h.m, np.uint32), h.row_len)
    members: dict[int, set[int]] = {b: set() for b in range(h.m)}
    for c in range(k):
        for b in (codes[c] >> 1).tolist():
            members[b].add(c)
    left = set(range(k))
    while True:
        pure = [b for b, s in members.items() if len(s) == 1]
        if not pure:
            break
        (c,) = members[int(rng.choice(pure))]
        left.discard(c)
        for b in (codes[c] >> 1).tolist():
            members[b].discard(c)
    assert set(got.stuck.tolist()) == left
    assert 0 < len(left) < k


@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_dense_write_equals_dequantize(threads: int) -> None:
    """``native.write_dense`` (zero-fill and scatter, in two halves on two threads above 2**20
    elements) writes the bits of ``dest.fill(0); dest[idx] = dequantize(values, t)`` for
    every scale, rounding included, and raises OverflowRisk before writing anything when a
    sum leaves the float32 range."""
    from dhc import quantize as qz
    from dhc.errors import OverflowRisk
    rng = np.random.default_rng(threads)
    before = parallel.threads()
    parallel.set_threads(threads)
    try:
        for d in (1, 1000, (1 << 20) + 37):
            idx = np.sort(rng.choice(d, size=max(1, d // 50), replace=False)).astype(np.int64)
            values = rng.integers(-(1 << 31) + 1, 1 << 31, size=idx.size)
            for t in (-100, -3, 0, 7, 29, 60, 190):
                ref = np.full(d, np.nan, np.float32)
                got = ref.copy()
                try:
                    want = qz.dequantize(values, t)
                except OverflowRisk:
                    with pytest.raises(OverflowRisk):
                        native.write_dense(got, idx, values, t)
                    assert np.isnan(got).all()            # nothing written
                    continue
                ref.fill(0)
                ref[idx] = want
                native.write_dense(got, idx, values, t)
                assert np.array_equal(got.view(np.uint32), ref.view(np.uint32))
    finally:
        parallel.set_threads(before)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_compiled_quantize_rounds_half_to_even_like_the_reference(dtype) -> None:
    """Ties, subnormal products, signs and the OverflowRisk message, against
    ``quantize.quantize``."""
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, -0.0, 3.25, 1e-30], np.float64)
    for scale_exp in (0, 1, -3, 20):
        values = (halves * 2.0 ** -scale_exp).astype(dtype)
        assert np.array_equal(native.quantize(values, scale_exp, 4),
                              qz.quantize(values, scale_exp, 4))
    big = np.array([1.0, -3.0], dtype)
    with pytest.raises(OverflowRisk) as ref:
        qz.quantize(big, 30, 4)
    with pytest.raises(OverflowRisk) as got:
        native.quantize(big, 30, 4)
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("d", [1, 63, 64, 65, 200, 4099, 70_001])
def test_compiled_scan_equals_the_reference(dtype, d: int) -> None:
    """The one-pass scan (vector compare of 64 items, tail word, padding to whole blocks)
    against numpy's ``x != 0``: the bitmap, the support and the value bits, with -0.0 (a
    zero), NaN and subnormals (nonzeros), at densities that outgrow the scan's first lists."""
    rng = np.random.default_rng(d)
    for density in (0.0, 0.05, 1.0):
        x = np.where(rng.random(d) < density, rng.standard_normal(d), 0.0).astype(dtype)
        x[rng.integers(d)] = -0.0
        if d > 10:
            x[3], x[7] = np.nan, np.finfo(dtype).smallest_subnormal
        for block in (32, 256):
            ref = LocalIndex(x, block)
            got = LocalIndex(x, block, native.scan)
            assert np.array_equal(got.nz, ref.nz)
            assert np.array_equal(got.values.view(np.uint8), ref.values.view(np.uint8))
            assert np.array_equal(got.block_words, ref.block_words)
            assert np.array_equal(got.block_lanes(), ref.block_lanes())


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_compiled_max_exponent_equals_the_reference(dtype) -> None:
    """Round A's exponent: zeros, subnormals, powers of two and their neighbours, the largest
    finite value (OverflowRisk) and NaN/Inf (InputError naming the value), same messages."""
    info = np.finfo(dtype)
    cases = [np.zeros(5), np.array([info.smallest_subnormal, -0.0]), np.array([1.0, -2.0]),
             np.array([np.nextafter(dtype(2), dtype(0)), 0.5]), np.array([info.max, 1.0]),
             np.array([1.0, np.nan]), np.array([-np.inf, 3.0]), np.zeros(0)]
    for values in cases:
        values = values.astype(dtype)
        try:
            want = qz.finite_max_exponent(values)
        except CodecError as exc:
            with pytest.raises(type(exc)) as got:
                native.max_exponent(values)
            assert str(got.value) == str(exc)
        else:
            assert native.max_exponent(values) == want

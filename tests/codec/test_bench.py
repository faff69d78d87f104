"""The codec benchmark runs end to end at small sizes and reports consistent figures."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest

from bench.codec import codec as bench_codec
from bench.codec import codec_compare
from dhc import simulate_allreduce


def test_bench_runs_small_and_is_consistent() -> None:
    parser = argparse.ArgumentParser()
    bench_codec.add_arguments(parser)
    args = parser.parse_args(["--dims", "20000", "--densities", "0.01,0.1", "--workers", "1,3",
                              "--wire-dim", "50000", "--wire-workers", "3", "--peel-ks", "500",
                              "--peel-ratios", "1.0,1.4", "--peel-trials", "3", "--repeats", "1",
                              "--block-sizes", "32,256", "--goal-cases", "20000:0.01:3",
                              "--flat-dims", "10000,40000"])
    out = bench_codec.run(args)
    json.dumps(out)  # JSON-able
    assert set(out) >= {"memcpy_gbps", "throughput", "wire", "peeling", "goals"}
    assert out["memcpy_gbps"]["20000"] > 0
    assert len(out["throughput"]) == 4
    for row in out["throughput"]:
        assert row["encode_gbps"] > 0 and row["decode_gbps"] > 0
        assert math.isclose(row["ratio_to_memcpy"],
                            row["encode_decode_gbps"] / out["memcpy_gbps"]["20000"], rel_tol=0.05)
    kinds = {r["sparsity"] for r in out["wire"]}
    assert kinds == {"random", "block_clustered_shared", "block_clustered_independent"}
    for row in out["wire"]:
        d, u = row["d"], row["union_nnz"]
        assert math.isclose(row["lhc_bytes"], d / 8 + 1.23 * u * 4, abs_tol=1)
        assert row["entropy_bound_bytes"] < row["lhc_bytes"]
        assert row["hg_bytes"] == sum(row["hg_bytes_by_level"].values())
        assert row["dense_codec_bytes"] > row["dense_float32_bytes"]
        assert set(row["hg_over_lhc_by_block_size"]) == {"32", "256"}
        assert row["hg_over_lhc_by_block_size"]["32"] == row["hg_over_lhc"]  # 32 is the default
    # m = 1.0 k is below the threshold, 1.4 k above: peeling success must reflect that
    by_ratio = {r["setting"]: r for r in out["peeling"]}
    assert by_ratio["1.0"]["success_rate"] == 0.0 and by_ratio["1.0"]["mean_stuck_fraction"] > 0.3
    assert by_ratio["1.4"]["success_rate"] == 1.0


def test_clustered_generator_is_clustered() -> None:
    rng = np.random.default_rng(0)
    xs = bench_codec.clustered_sparse(rng, 4, 100000, 0.01, shared=True)
    union = np.any(np.stack(xs) != 0, axis=0)
    per_block = np.sort(union[: 100000 // 256 * 256].reshape(-1, 256).sum(axis=1))[::-1]
    top = per_block[: int(0.05 * per_block.size)].sum()
    assert top >= 0.95 * union.sum()   # >= 95% of the nonzeros sit in 5% of the blocks
    res = simulate_allreduce(xs)
    assert res.union_nnz == int(union.sum())


def test_bench_compares_backends_side_by_side() -> None:
    parser = argparse.ArgumentParser()
    bench_codec.add_arguments(parser)
    args = parser.parse_args(["--dims", "20000", "--densities", "0.01", "--workers", "1",
                              "--wire-dim", "20000", "--wire-workers", "2", "--peel-ks", "300",
                              "--peel-trials", "1", "--repeats", "1", "--block-sizes", "32",
                              "--goal-cases", "1000000:0.01:4", "--flat-dims", "10000,40000",
                              "--backends", "numba,numpy"])
    out = bench_codec.run(args)
    case = out["backends"]["cases"][0]
    assert set(case["arms"]) == {"numba_1_threads", "numba_2_threads", "numpy_1_threads",
                                 "numpy_2_threads"}
    unions = {a["union_nnz"] for a in case["arms"].values()}
    assert len(unions) == 1 and 38_000 < unions.pop() < 41_000      # same job for every arm
    goal = out["goals"]["encode_decode_le_2.5ms_1M_1pct_4_workers_one_core"]
    assert set(goal["ms"]) == {"numba", "numpy"} and goal["met"] == (goal["ms"]["numba"] <= 2.5)
    flat = out["backends"]["decode_per_union_element"]
    assert [r["union_nnz"] for r in flat] == [100, 400]
    assert out["goals"]["decode_per_union_element_flat_within_1.5x"]["unions"] == [100, 400]
    assert all(set(r["peel_ns_per_element"]) == {"numba", "numpy"} for r in flat)


def test_bench_compares_with_a_previous_version_side_by_side() -> None:
    """``--baseline`` times a previous checkout in a child process taking turns with this one
    (here the previous version is this checkout's directory: both load the cached kernels),
    on the same inputs, and reports both, their ratios and the load."""
    xs = bench_codec.random_sparse(np.random.default_rng(1), 2, 20_000, 0.02)
    out = codec_compare.compare(xs, str(codec_compare.REPO), repeats=3, threads=1)
    json.dumps(out)
    assert out["turns"] == 3 and out["union_nnz"] > 0
    for name in ("current", "previous"):
        assert 0 < out[name]["encode_decode_ms"] <= out[name]["encode_decode_ms_median"]
    assert out["ratio_best"] > 0 and out["ratio_median_per_turn"] > 0


def test_bench_names_a_bad_baseline() -> None:
    with pytest.raises(codec_compare.CompareError, match="no-such-revision"):
        codec_compare.compare([np.ones(64, np.float32)], "no-such-revision", 1, 1)

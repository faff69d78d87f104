"""Each baseline round-trips where its design says it should, and fails where it says it may."""

from __future__ import annotations

import numpy as np
import pytest

from bench.baselines import CODECS, dense_fp32, hgsketch, lhc, s2reducer, switchml, thc, topk
from bench.baselines.common import check_tensors, exact_sum
from dhc import HGParams, simulate_allreduce
from dhc import quantize as qz
from dhc.synthetic import synthetic_job


@pytest.fixture(scope="module")
def job() -> list[np.ndarray]:
    return synthetic_job(4, 20_000, 0.02, seed=3)


def _union(xs: list[np.ndarray]) -> int:
    return int(np.count_nonzero(np.any(np.stack(xs) != 0, axis=0)))


def test_registry_lists_every_codec_once() -> None:
    assert list(CODECS) == ["dense_fp32", "switchml_int32", "topk", "lhc", "s2reducer", "thc",
                            "hgsketch"]


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="worker 1 has 3 elements"):
        check_tensors([np.zeros(4), np.zeros(3)])
    with pytest.raises(ValueError, match="NaN"):
        check_tensors([np.array([1.0, np.nan])])
    with pytest.raises(ValueError, match="density"):
        topk.run([np.ones(4)], density=0)


def test_dense_fp32_is_the_float32_sum(job: list[np.ndarray]) -> None:
    r = dense_fp32.run(job)
    assert r.bytes_up == r.bytes_down == 4 * job[0].size
    np.testing.assert_allclose(r.sum, exact_sum(job), rtol=0, atol=1e-6)
    assert r.sum.dtype == np.float64 and np.array_equal(r.sum.astype(np.float32), r.sum)


def test_switchml_exact_on_its_integers_and_within_rounding_bound(job: list[np.ndarray]) -> None:
    r = switchml.run(job, chunk=64)
    assert np.array_equal(r.sum, r.quantized_sum)
    n, L = len(job), qz.precision_bits(len(job))
    peak = np.abs(np.stack(job)).max(axis=0)
    chunk_peak = np.repeat(np.pad(peak, (0, (-peak.size) % 64)).reshape(-1, 64).max(axis=1), 64)
    bound = n * chunk_peak[: peak.size] / 2.0**L           # N * 0.5 / scale, scale >= 2**L / (2 peak)
    assert np.all(np.abs(r.sum - exact_sum(job)) <= bound)
    assert r.bytes_up == 4 * job[0].size + -(-job[0].size // 64)


def test_switchml_per_chunk_scale_keeps_small_chunks_precise() -> None:
    x = np.zeros(128, np.float32)
    x[:64] = 1000.0
    x[64:] = np.linspace(1e-3, 2e-3, 64)
    r = switchml.run([x, x], chunk=64)
    rel = np.abs(r.sum[64:] - 2 * x[64:].astype(np.float64)) / (2 * x[64:])
    assert rel.max() < 1e-7            # a single global scale would leave ~1e-3 here


def test_topk_exact_for_what_it_keeps_and_bytes_grow_with_workers() -> None:
    xs = synthetic_job(8, 10_000, 1.0, seed=1)              # dense: top-k must drop mass
    r = topk.run(xs, density=0.01)
    kept = []
    for x in xs:
        order = np.argsort(-np.abs(x), kind="stable")[:100]
        v = np.zeros_like(x)
        v[order] = x[order]
        kept.append(v)
    np.testing.assert_array_equal(r.sum, exact_sum(kept))
    assert np.abs(r.sum - exact_sum(xs)).max() > 0.1
    assert r.bytes_up == 8 * 100 and r.bytes_down == 7 * 8 * 100
    small = topk.run(xs[:2], density=0.01)
    assert small.bytes_down == 8 * 100 < r.bytes_down


def test_topk_keeps_every_nonzero_of_sparse_input(job: list[np.ndarray]) -> None:
    r = topk.run(job)
    np.testing.assert_array_equal(r.sum, exact_sum(job))


def test_lhc_exact_when_m_is_generous(job: list[np.ndarray]) -> None:
    r = lhc.run(job, size_hint=_union(job), m_factor=1.6)
    assert r.notes["silent_fallback_elements"] == 0
    assert np.array_equal(r.sum, r.quantized_sum)
    assert r.bytes_up == 4 * qz.SCALE_LANES + 4 * -(-job[0].size // 32) + 4 * r.notes["buckets"]


def test_lhc_silently_wrong_when_m_is_too_small(job: list[np.ndarray]) -> None:
    m = int(0.9 * _union(job))
    r = lhc.run(job, buckets=m)                              # no exception: that is the flaw
    wrong = np.count_nonzero(r.sum != r.quantized_sum)
    assert r.notes["silent_fallback_elements"] > 0 and wrong > 0
    assert r.notes["reported_to_caller"] is False
    hg = hgsketch.run(job, HGParams(buckets=3 * (m // 3)))   # same m: DHC stays exact
    assert hg.notes["stuck"] > 0 and np.array_equal(hg.sum, hg.quantized_sum)


def test_s2reducer_support_is_the_union_and_values_are_estimates(job: list[np.ndarray]) -> None:
    r = s2reducer.run(job, size_hint=_union(job))
    support = np.any(np.stack(job) != 0, axis=0)
    assert not np.any(r.sum[~support])
    assert np.abs(r.sum - exact_sum(job)).max() > 1e-3       # collisions leave estimation error
    one = np.zeros(1000, np.float32)
    one[17] = 1.5
    assert s2reducer.run([one], buckets=30).sum[17] == 1.5   # alone in its buckets: exact


def test_thc_rotation_is_orthonormal() -> None:
    rot = thc.Rotation(1000, seed=5)
    x = np.random.default_rng(0).standard_normal(1000)
    y = rot.forward(x)
    assert y.size == 1024
    np.testing.assert_allclose(np.linalg.norm(y), np.linalg.norm(x), rtol=1e-12)
    np.testing.assert_allclose(rot.inverse(y), x, atol=1e-12)


def test_thc_error_within_its_quantization_bound(job: list[np.ndarray]) -> None:
    r = thc.run(job)
    err = np.linalg.norm(r.sum - exact_sum(job))
    assert 0 < err <= r.notes["error_bound_l2"]
    # the per-coordinate bound in the rotated domain: |e| < N * step
    rot = thc.Rotation(job[0].size, seed=0x7C)
    e_rot = rot.forward(r.sum - exact_sum(job))
    assert np.abs(e_rot).max() < len(job) * r.notes["step"]
    np.testing.assert_allclose(r.sum, r.quantized_sum, atol=1e-9)   # integer sums: homomorphic
    assert r.bytes_up == 4 + 32768 * 4 // 8
    assert r.bytes_down == 4 + 32768 * r.notes["down_bits"] // 8


def test_thc_stochastic_rounding_is_unbiased() -> None:
    table = thc.uniform_table(4, 30)
    u = np.full(200_000, 7.3)
    idx = thc.quantize(u, table, np.random.default_rng(1))
    assert abs(table[idx].mean() - 7.3) < 0.01
    assert set(np.unique(table[idx])) <= {6, 8}


def test_hgsketch_exact_and_bytes_match_the_codec(job: list[np.ndarray]) -> None:
    r = hgsketch.run(job)
    assert np.array_equal(r.sum, r.quantized_sum)
    assert r.bytes_up == simulate_allreduce(job).wire_bytes

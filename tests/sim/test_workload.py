"""The rounds come from the codec itself, exactly."""

from __future__ import annotations

import numpy as np
import pytest

from dhc.codec import simulate_allreduce
from dhc.synthetic import synthetic_job
from sim.workload import codec_workload, group_gradient, representative_tensors


@pytest.mark.parametrize("codec", ["hg", "dense"])
def test_rounds_equal_the_codecs_own_simulation(codec: str) -> None:
    """With N <= representatives the tensors are dhc.synthetic's and the lanes per round are
    exactly those simulate_allreduce reports."""
    run = codec_workload(200_000, 0.01, 4, codec, seed=3, bucket=200_000)
    ref = simulate_allreduce(synthetic_job(4, 200_000, 0.01, seed=3), codec=codec)
    assert [r.lanes for r in run.rounds] == [r.lanes for r in ref.rounds]
    assert run.exact and run.reps == 4 and run.buckets == 1
    assert run.codec_s > 0


def test_buckets_add_up_round_by_round() -> None:
    whole = codec_workload(250_000, 0.01, 4, "hg", seed=2, bucket=100_000)
    full = codec_workload(100_000, 0.01, 4, "hg", seed=2, bucket=100_000)
    rest = codec_workload(50_000, 0.01, 4, "hg", seed=2, bucket=100_000)
    assert whole.buckets == 3
    pairs = zip(full.rounds, rest.rounds, strict=True)
    assert [r.lanes for r in whole.rounds] == [2 * a.lanes + b.lanes for a, b in pairs]
    assert whole.codec_s == pytest.approx(2 * full.codec_s + rest.codec_s)


def test_group_representatives_carry_the_union() -> None:
    """A representative of g workers holds about 1 - (1 - p)^g of the elements."""
    x = group_gradient(200_000, 0.01, 64, seed=1, rep=0, clustered=False)
    share = np.count_nonzero(x) / x.size
    assert share == pytest.approx(1 - 0.99 ** 64, rel=0.02)
    tensors = representative_tensors(100_000, 0.01, 1024, 4, seed=1, clustered=True)
    assert len(tensors) == 4
    union = np.count_nonzero(np.any(np.stack(tensors) != 0, axis=0))
    assert union < 0.5 * 100_000        # clustered: the hot blocks bound the union


def test_many_workers_grow_the_sketch_and_stay_exact() -> None:
    small = codec_workload(100_000, 0.01, 4, "hg", bucket=100_000)
    big = codec_workload(100_000, 0.01, 256, "hg", bucket=100_000)
    assert big.exact and big.reps == 2 and big.n_workers == 256
    assert big.union_nnz > 10 * small.union_nnz
    assert big.lanes > 10 * small.lanes

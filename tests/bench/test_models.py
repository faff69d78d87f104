"""``dhc-bench models``' building blocks, and one real model end to end (NCF, about 10 s)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.models.models import _bytes_per_worker, top_k


def test_top_k_keeps_the_largest_and_leaves_sparse_gradients_alone() -> None:
    x = np.array([0.1, -5.0, 0.0, 3.0, -0.2, 0.0, 0.01, 2.0], dtype=np.float32)
    kept = top_k(x, 0.25)
    assert np.flatnonzero(kept).tolist() == [1, 3] and kept[1] == -5.0
    sparse = np.zeros(1000, dtype=np.float32)
    sparse[[3, 500]] = 1.0
    assert top_k(sparse, 0.01) is sparse


def test_bytes_per_worker_follow_the_packet_layouts() -> None:
    b = _bytes_per_worker(params=1000, hg_lanes=[10, 100], n=4, lanes=32)
    assert b["dense_ina"] == 1000 * 4 + 32 * 56                # 32 packets of 56 header bytes
    assert b["dhc"] == (10 * 4 + 56) + (100 * 4 + 4 * 56)
    assert b["ring"] == 2 * 3 * (250 * 4 + 58)                # 2(N-1) steps of one packet


@pytest.mark.slow
def test_ncf_gradients_are_sparse_and_the_codec_is_exact() -> None:
    pytest.importorskip("torch")
    from bench.models.models import measure
    row = measure("ncf", 2, 0.01, 32)
    assert row["parameters"] == 21_224_641 and row["buckets"] == 4
    assert row["raw_density"] < 0.01 and row["exact"]
    assert row["hg_rounds"] == 3 and row["bytes_per_worker"]["dhc"] < row["bytes_per_worker"]["ring"] / 20

"""The MLP gradient source trains, is reproducible, and top-k keeps the largest entries."""

from __future__ import annotations

import numpy as np
import pytest

from bench.codec.gradients import mlp_gradients, sparsify_topk


def test_mlp_trains_and_is_reproducible() -> None:
    a = mlp_gradients(3, hidden=(64, 32), steps=30, seed=1)
    b = mlp_gradients(3, hidden=(64, 32), steps=30, seed=1)
    assert a.dim == sum(a.layer_sizes) == 784 * 64 + 64 + 64 * 32 + 32 + 32 * 10 + 10
    assert np.mean(a.losses[-5:]) < np.mean(a.losses[:5])
    for ga, gb in zip(a.grads, b.grads, strict=True):
        assert ga.dtype == np.float32 and np.array_equal(ga, gb)
    assert not np.array_equal(a.grads[0], a.grads[1])      # each worker has its own batch


def test_sparsify_topk_keeps_the_largest() -> None:
    x = np.array([0.1, -5.0, 0.3, 2.0, -0.2], np.float32)
    np.testing.assert_array_equal(sparsify_topk(x, 0.4), [0, -5.0, 0, 2.0, 0])
    with pytest.raises(ValueError, match="density"):
        sparsify_topk(x, 1.5)

"""The training benchmarks' data: read from scikit-learn's CSV without importing scikit-learn,
it is exactly what ``load_digits`` returns."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
datasets = pytest.importorskip("sklearn.datasets")

from bench.train.train_data import digits_arrays  # noqa: E402


def test_digits_arrays_equal_load_digits():
    images, target = digits_arrays()
    ref = datasets.load_digits()
    assert images.shape == ref.images.shape == (1797, 8, 8)
    assert np.array_equal(images, ref.images) and images.dtype == ref.images.dtype
    assert np.array_equal(target, ref.target)

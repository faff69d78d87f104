"""Scale selection and the overflow bound, including adversarial magnitudes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dhc import OverflowRisk, simulate_allreduce
from dhc import quantize as qz

from .helpers import exact_quantized_sum, expected_scale_exponent

F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).smallest_subnormal)


def _global_scale(values_per_worker: list[np.ndarray], n: int) -> int:
    """Run the SCALE round by hand: OR of every worker's lanes, then decode."""
    fp = qz.fingerprint("t")
    exps = [qz.max_exponent(v) for v in values_per_worker]
    agg = np.bitwise_or.reduce(np.stack([qz.scale_lanes(fp, e) for e in exps]), axis=0)
    return qz.scale_exponent(qz.decode_scale(agg, exps[0]), n)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 32, 1000, qz.MAX_WORKERS])
@pytest.mark.parametrize("peak", [F32_MAX, -F32_MAX, 1.0, -1.0, np.nextafter(np.float32(2.0), 0),
                                  np.float32(2.0) ** 127, F32_TINY, 3e-45, -1e-30])
def test_adversarial_magnitudes_cannot_overflow(n: int, peak: float) -> None:
    values = np.array([peak, -peak, peak / 3, 0.0], dtype=np.float32)
    t = _global_scale([values], n)
    q = qz.quantize(values, t, n)
    bound = qz.INT32_MAX // n
    assert int(np.max(np.abs(q))) <= bound
    # N workers all at the extreme, same sign: the exact sum still fits int32
    assert n * int(np.max(np.abs(q))) <= qz.INT32_MAX
    # and the scale is not wasteful: the peak uses at least half the range
    assert int(np.max(np.abs(q))) >= (1 << qz.precision_bits(n)) // 2


@given(st.integers(1, qz.MAX_WORKERS),
       st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32,
                          min_value=-F32_MAX, max_value=F32_MAX), min_size=1, max_size=50))
@settings(max_examples=200, deadline=None, database=None)
def test_quantized_values_respect_bound(n: int, vals: list[float]) -> None:
    values = np.array(vals, dtype=np.float32)
    t = _global_scale([values], n)
    q = qz.quantize(values, t, n)
    assert int(np.max(np.abs(q))) * n <= qz.INT32_MAX
    # rounding error of each value is at most half a quantization step
    err = np.abs(np.ldexp(q.astype(np.float64), -t) - values.astype(np.float64))
    assert np.all(err <= np.ldexp(0.5, -t) * (1 + 1e-12))


@pytest.mark.parametrize("codec", ["hg", "dense"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_32_workers_at_float32_extremes_sum_exactly(codec: str, sign: float) -> None:
    n, d = 32, 300
    xs = []
    for w in range(n):
        x = np.zeros(d, dtype=np.float32)
        x[::7] = sign * np.float32(1e37)                  # everyone at the same huge value
        x[3] = F32_MAX if w % 2 == 0 else -F32_MAX        # float32 max, cancelling in pairs
        x[5] = F32_TINY * (w + 1)                          # subnormals vanish under the scale
        xs.append(x)
    res = simulate_allreduce(xs, codec=codec)
    assert res.scale_exponent == expected_scale_exponent(xs)
    ref = exact_quantized_sum(xs, res.scale_exponent)
    assert np.array_equal(res.sum_int, ref)
    assert int(np.max(np.abs(res.sum_int))) <= qz.INT32_MAX
    assert res.sum_int[3] == 0
    assert np.allclose(res.sum[::7], sign * 32e37, rtol=1e-6)


def test_float32_overflowing_sum_raises_overflow_risk() -> None:
    xs = [np.full(4, 3e38, dtype=np.float32) for _ in range(2)]
    from dhc import HGSketchWorker
    from dhc.protocol import aggregate_round
    ws = [HGSketchWorker(x, 2) for x in xs]
    segs = [w.first_round() for w in ws]
    while not ws[0].done:
        agg = aggregate_round(segs)
        segs = [w.feed(agg) for w in ws]
    assert np.array_equal(ws[0].result_int(), exact_quantized_sum(xs, ws[0].scale_exponent))
    with pytest.raises(OverflowRisk, match="float32 range"):
        ws[0].result()


def test_worker_count_limit() -> None:
    assert qz.check_worker_count(qz.MAX_WORKERS) == qz.MAX_WORKERS
    with pytest.raises(OverflowRisk, match="MAX_WORKERS"):
        qz.check_worker_count(qz.MAX_WORKERS + 1)
    tiny = [np.ones(1, dtype=np.float32)] * (qz.MAX_WORKERS + 1)
    with pytest.raises(OverflowRisk):
        simulate_allreduce(tiny)
    # at the limit every value still keeps 14 bits
    assert qz.precision_bits(qz.MAX_WORKERS) == 14


def test_all_zero_input_gives_zero_sum_and_unit_scale() -> None:
    xs = [np.zeros((3, 5), dtype=np.float32) for _ in range(3)]
    for codec in ("hg", "dense"):
        res = simulate_allreduce(xs, codec=codec)
        assert res.scale == 1.0
        assert res.sum.shape == (3, 5) and not res.sum.any() and not res.sum_int.any()

"""Fixed-point quantization with one global, power-of-two scale.

Round A carries a SCALE segment (op OR): two *fingerprint* lanes ``[fp, ~fp]`` and
``EXP_LANES`` lanes holding a one-hot bit for the worker's max exponent.  After the OR,
``fp_or & notfp_or == 0`` iff every worker used the same fingerprint (shape, dtype, codec
parameters, worker count): any disagreeing bit shows up in both lanes.  The highest exponent bit
set is the global max exponent ``E`` (every |v| < 2**E).

Overflow proof.  Let ``Q = floor((2**31 - 1) / N)`` and ``L = floor(log2 Q)``.  The scale is
``s = 2**(L - E)``.  For every input value ``|v| < 2**E`` so ``|v * s| < 2**L`` and, rounding to
nearest, ``|q| <= 2**L <= Q``.  A sum of N such values has ``|sum| <= N * Q <= 2**31 - 1``: it
fits int32 and never wraps.  ``s`` is a power of two, so ``v * s`` is exact in float64 and the
only error is the rounding of each input: ``|q/s - v| <= 1 / (2 s)``.
"""

from __future__ import annotations

import functools
import zlib

import numpy as np

from .errors import DecodeError, InputError, MismatchError, OverflowRisk

#: Largest worker count the codec accepts.  At N = 2**16 every value still keeps L = 14 bits
#: (|q| <= 2**14) relative to the global max; beyond that quantization gets too coarse to be
#: useful for gradients, while the lanes themselves would allow up to 2**30.
MAX_WORKERS: int = 1 << 16

INT32_MAX: int = (1 << 31) - 1

#: Exponent window encoded in the SCALE lanes (frexp exponents: |v| < 2**e).  Values below
#: 2**EXP_MIN are clamped up (still a valid upper bound); values >= 2**EXP_MAX exceed float32.
EXP_MIN: int = -160
EXP_MAX: int = 128
EXP_LANES: int = (EXP_MAX - EXP_MIN + 1 + 31) // 32
FINGERPRINT_LANES: int = 2
SCALE_LANES: int = FINGERPRINT_LANES + EXP_LANES

ACCEPTED_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def check_worker_count(n_workers: int) -> int:
    """Validate N; raise OverflowRisk when sums of N lanes could overflow."""
    if isinstance(n_workers, bool) or not isinstance(n_workers, (int, np.integer)):
        raise InputError(f"n_workers must be an int, got {type(n_workers).__name__}")
    n = int(n_workers)
    if n < 1:
        raise InputError(f"n_workers must be >= 1, got {n}")
    if n > MAX_WORKERS:
        raise OverflowRisk(
            f"n_workers={n} exceeds MAX_WORKERS={MAX_WORKERS}: int32 lanes cannot hold the sum "
            f"with useful precision (each value would keep < 14 bits)")
    return n


def check_tensor(x: object) -> np.ndarray:
    """Return ``x`` as a flat float array (no copy when possible); reject non-float dtypes."""
    arr = np.asarray(x)
    if arr.dtype not in ACCEPTED_DTYPES:
        raise InputError(f"tensor dtype must be float16/float32/float64, got {arr.dtype}")
    if arr.size == 0:
        raise InputError("tensor is empty")
    return arr.reshape(-1)


def check_finite(values: np.ndarray) -> None:
    """Raise InputError naming the first NaN/Inf (values are the gathered nonzeros)."""
    if values.size and not np.isfinite(values).all():
        bad = values[~np.isfinite(values)][0]
        raise InputError(f"tensor contains non-finite values ({bad!r}); NaN/Inf cannot be summed")


@functools.lru_cache(maxsize=256)
def fingerprint(*parts: object) -> int:
    """32-bit fingerprint of everything workers must agree on (cached: a job computes the same
    one every step, and its ``repr`` and crc32 measured 50 us with cold caches)."""
    return zlib.crc32(repr(parts).encode()) & 0xFFFFFFFF


def max_exponent(values: np.ndarray) -> int | None:
    """Smallest e with max|values| < 2**e (clamped to EXP_MIN); None if all values are zero."""
    if values.size == 0:
        return None
    # |v| and the max are exact in the values' own float type: no float64 copy
    return exponent_of(float(np.max(np.abs(values))))


def finite_max_exponent(values: np.ndarray) -> int | None:
    """:func:`check_finite` and :func:`max_exponent` in one pass: NaN and Inf propagate to the
    largest magnitude, and only then are the values searched for the one to name."""
    if values.size == 0:
        return None
    peak = float(np.max(np.abs(values)))
    if not np.isfinite(peak):
        check_finite(values)
    return exponent_of(peak)


def exponent_of(peak: float) -> int | None:
    """The exponent of round A for the largest magnitude ``peak`` (finite): smallest e with
    peak < 2**e, clamped to EXP_MIN; None for 0."""
    if peak == 0.0:
        return None
    _, e = np.frexp(peak)
    e = int(e)
    if e > EXP_MAX:
        raise OverflowRisk(f"|value| = {peak:g} >= 2**{EXP_MAX}: the float32 result would overflow")
    return max(e, EXP_MIN)


def scale_lanes(fp: int, exponent: int | None) -> np.ndarray:
    """The SCALE segment of one worker: [fp, ~fp, one-hot exponent bits]."""
    lanes = np.zeros(SCALE_LANES, dtype=np.uint32)
    lanes[0] = fp
    lanes[1] = (~fp) & 0xFFFFFFFF
    if exponent is not None:
        bit = exponent - EXP_MIN
        lanes[FINGERPRINT_LANES + bit // 32] = np.uint32(1 << (bit % 32))
    return lanes


def decode_scale(agg: np.ndarray, local_exponent: int | None) -> int | None:
    """Global max exponent from the OR-aggregated SCALE lanes; checks agreement and consistency."""
    if agg.shape != (SCALE_LANES,):
        raise DecodeError(f"SCALE aggregate has {agg.shape} lanes, expected {SCALE_LANES}")
    if int(agg[0]) & int(agg[1]):
        raise MismatchError(
            "workers disagree on tensor shape, dtype, worker count or codec parameters "
            "(SCALE fingerprint lanes differ; or a fingerprint lane was changed in flight)")
    if (int(agg[0]) | int(agg[1])) != 0xFFFFFFFF:
        raise DecodeError("SCALE fingerprint lanes are not complementary: corrupted aggregate")
    bits = agg[FINGERPRINT_LANES:]
    nz = np.flatnonzero(bits)
    if nz.size == 0:
        if local_exponent is not None:
            raise DecodeError("aggregated SCALE is empty although this worker has nonzeros")
        return None
    word = int(nz[-1])
    top = word * 32 + int(bits[word]).bit_length() - 1
    exponent = top + EXP_MIN
    if exponent > EXP_MAX:
        raise DecodeError(f"aggregated SCALE exponent {exponent} is outside [{EXP_MIN}, {EXP_MAX}]")
    if local_exponent is not None and local_exponent > exponent:
        raise DecodeError(
            f"aggregated SCALE exponent {exponent} is below this worker's {local_exponent}: "
            "corrupted aggregate")
    return exponent


def precision_bits(n_workers: int) -> int:
    """L = floor(log2(floor((2**31-1)/N))): |q| <= 2**L for every worker."""
    return (INT32_MAX // n_workers).bit_length() - 1


def scale_exponent(global_exponent: int | None, n_workers: int) -> int:
    """t with scale s = 2**t; 0 when every input is zero."""
    if global_exponent is None:
        return 0
    return precision_bits(n_workers) - global_exponent


def quantize(values: np.ndarray, scale_exp: int, n_workers: int) -> np.ndarray:
    """q = rint(v * 2**scale_exp) as int64, with the overflow bound checked."""
    q = np.rint(np.ldexp(values.astype(np.float64, copy=False), scale_exp)).astype(np.int64)
    if q.size:
        bound = INT32_MAX // n_workers
        peak = int(np.max(np.abs(q)))
        if peak > bound:
            raise OverflowRisk(
                f"quantized |q| = {peak} exceeds {bound} = floor((2**31-1)/{n_workers}); "
                "the scale does not cover this worker's values")
    return q


def dequantize(q: np.ndarray, scale_exp: int) -> np.ndarray:
    """float32 of q / 2**scale_exp (exact division, one rounding to float32); raises
    OverflowRisk if a sum exceeds the float32 range (the int result is still exact)."""
    with np.errstate(over="ignore"):
        out = np.ldexp(q.astype(np.float64), -scale_exp).astype(np.float32)
    if out.size and not np.isfinite(out).all():
        raise OverflowRisk("the sum exceeds the float32 range; use result_int() and the scale")
    return out


def to_lanes(q: np.ndarray) -> np.ndarray:
    """int64 values -> uint32 lanes (two's complement, mod 2**32)."""
    return (q & 0xFFFFFFFF).astype(np.uint32)


def from_lanes(lanes: np.ndarray) -> np.ndarray:
    """uint32 lanes -> int64 values, interpreting each lane as int32."""
    return lanes.astype(np.uint32, copy=False).view(np.int32).astype(np.int64)

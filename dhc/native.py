"""The compiled backend: array-level wrappers around ``dhc/kernels.py`` with the same inputs,
outputs and errors as the numpy functions they replace (``index.LocalIndex`` scan,
``index.candidates``, ``np.searchsorted``, ``SketchHash.rows_of``, the sketch and check sums of
``hgsketch``, ``peeling.peel_rows``, the dense write of ``hgsketch._write_dense``, the
decoder's residual and bound checks).  Importing this module needs numba."""

from __future__ import annotations

import threading

import numpy as np

from . import index, kernels, parallel, peel_kernels
from . import quantize as qz
from .errors import DecodeError, OverflowRisk
from .hashing import SketchHash
from .peeling import PeelResult


class _Scratch(threading.local):
    """Per-thread scratch arrays of the kernels (the peel, the support lists of the scan), kept
    between calls: a fresh large array costs a page fault per page on first touch, which
    measured more than the peel."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def get(self, name: str, n: int, dtype: np.dtype | type, keep: bool = False) -> np.ndarray:
        """At least n items of ``name`` (``keep``: the whole array, else its first n)."""
        arr = self.arrays.get(name)
        if arr is None or arr.size < n or arr.dtype != dtype:
            arr = np.empty(max(n, 1024), dtype)
            self.arrays[name] = arr
        return arr if keep else arr[:n]

    def grow(self, name: str, n: int, used: int) -> np.ndarray:
        """``name`` with room for n items, its first ``used`` items kept."""
        old = self.arrays[name]
        arr = np.empty(max(n, old.size), old.dtype)
        arr[:used] = old[:used]
        self.arrays[name] = arr
        return arr


_scratch = _Scratch()


#: the sign bit cleared, per item size: ``x != 0`` holds for every bit pattern but +-0.0
_NONZERO_MASK = {2: np.uint16(0x7FFF), 4: np.uint32(0x7FFFFFFF),
                 8: np.uint64(0x7FFFFFFFFFFFFFFF)}


def _scan_part(u: np.ndarray, w0: int, w1: int, words: np.ndarray,
               slot: int) -> tuple[np.ndarray, np.ndarray]:
    """``kernels.scan_support`` over words w0..w1 into this thread's scratch lists (grown
    when the support outgrows them); returns copies (the pool thread's scratch may be reused
    by another caller as soon as this returns)."""
    mask = _NONZERO_MASK[u.itemsize]
    names = (f"scan_nz{slot}", f"scan_vals{slot}_{u.itemsize}")
    nz = _scratch.get(names[0], 0, np.int64, keep=True)
    vals = _scratch.get(names[1], 0, u.dtype, keep=True)
    w, o = w0, 0
    while True:
        w, o = kernels.scan_support(u, mask, w, w1, words, nz, vals, o)
        if w == w1:
            return nz[:o].copy(), vals[:o].copy()
        room = 2 * max(nz.size, vals.size)
        nz, vals = _scratch.grow(names[0], room, o), _scratch.grow(names[1], room, o)


def scan(x: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(packed ``x != 0`` bitmap as bytes, covering whole blocks and whole 64-bit words;
    sorted nonzero positions int64; x at those positions), in one compiled pass over x
    (two halves on two threads for large tensors)."""
    x = np.ascontiguousarray(x)
    u = x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.itemsize])
    n_blocks = -(-x.size // block)
    n_words = -(-n_blocks * block // 64)
    words = np.empty(n_words, dtype=np.uint64)
    h = parallel.split_point(x.size, 64)
    if h is None:
        nz, vals = _scan_part(u, 0, n_words, words, 0)
    else:
        hw = h // 64
        (na, va), (nb, vb) = parallel.both(lambda: _scan_part(u, 0, hw, words, 0),
                                           lambda: _scan_part(u, hw, n_words, words, 1))
        nz, vals = np.concatenate([na, nb]), np.concatenate([va, vb])
    return words.view(np.uint8), nz, vals.view(x.dtype)


def candidates(active_ids: np.ndarray, agg: np.ndarray, block: int, d: int,
               mine: np.ndarray | None = None,
               n_mine: int = 0) -> tuple[np.ndarray, np.ndarray | None]:
    """``index.candidates`` (same checks, same errors), listing in one compiled pass; with
    ``mine`` (this worker's ``n_mine`` element bits, lanes aligned with ``agg``) also the
    positions of this worker's elements in the union (else None)."""
    words = block // 32
    total, every_block = kernels.element_index_summary(agg, words)
    if agg.size != active_ids.size * words or not every_block:
        index.check_element_index(active_ids, agg, block)      # raises the reference's error
    ids = np.ascontiguousarray(active_ids, dtype=np.int64)
    out = np.empty(total, np.int64)
    # one spare slot: the listing writes a rank before knowing whether the bit is ours
    own = np.empty(n_mine + 1 if mine is not None else 1, np.int64)
    kernels.union_list(agg, mine if mine is not None else _NO_LANES, ids, words,
                       block.bit_length() - 1, out, own)
    if out.size and out[-1] >= d:
        raise DecodeError(f"ELEMENT_INDEX marks element {int(out[-1])} beyond d={d}: "
                          "corrupted aggregate")
    return out, (own[:n_mine] if mine is not None else None)


_NO_LANES = np.empty(0, np.uint32)


def check_elements_covered(ix: index.LocalIndex, mine: np.ndarray, agg: np.ndarray) -> None:
    """``ix.check_elements_covered`` (same error), checked in one compiled pass."""
    if mine.size != agg.size or not kernels.lanes_cover(mine, agg):
        ix.check_elements_covered(mine, agg)


def active_blocks(ix: index.LocalIndex, agg: np.ndarray) -> np.ndarray:
    """``ix.active_blocks(agg)`` (same result, same errors): the checks and the listing of the
    set bits compiled; any failed check is reported by the reference."""
    n = ix.n_blocks
    ours = ix.block_lanes()
    if (agg.size != ours.size or (n % 32 and int(agg[-1]) >> (n % 32))
            or not kernels.lanes_cover(ours, agg)):
        return ix.active_blocks(agg)                    # raises the reference's error
    out = np.empty(kernels.union_count(agg), np.int64)
    kernels.list_lane_bits(agg, out)
    return out


def max_exponent(values: np.ndarray) -> int | None:
    """``quantize.finite_max_exponent`` (same result, same errors) in one compiled pass."""
    if values.size == 0 or values.dtype == np.float16:
        return qz.finite_max_exponent(values)
    peak, finite = kernels.max_magnitude(values)
    if not finite:
        return qz.finite_max_exponent(values)           # raises the reference's error
    return qz.exponent_of(peak)


def quantize(values: np.ndarray, scale_exp: int, n_workers: int) -> np.ndarray:
    """``quantize.quantize`` (same values, same OverflowRisk) in one compiled pass (float16
    values, which the kernels do not take, go to the reference)."""
    if values.dtype == np.float16:
        return qz.quantize(values, scale_exp, n_workers)
    out = np.empty(values.size, np.int64)
    peak = kernels.quantize(values, float(np.ldexp(1.0, scale_exp)), out)
    if peak > qz.INT32_MAX // n_workers:
        return qz.quantize(values, scale_exp, n_workers)   # raises the reference's error
    return out


def hash_union(hasher: SketchHash, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes ``bucket << 1 | negative``, candidate-major k x rows; mixed keys)."""
    a, b, salt = hasher.parameters()
    cdt = np.int32 if 2 * hasher.m < 1 << 31 else np.int64
    codes = np.empty((cand.size, hasher.rows), cdt)
    keys = np.empty(cand.size, np.uint64)
    salt64 = np.uint64(salt)
    h = parallel.split_point(cand.size, 64, parallel.MIN_SPLIT_UNION)
    if h is None:
        kernels.hash_union(cand, a, b, salt64, hasher.row_len, codes, keys)
    else:
        parallel.both(
            lambda: kernels.hash_union(cand[:h], a, b, salt64, hasher.row_len, codes[:h],
                                       keys[:h]),
            lambda: kernels.hash_union(cand[h:], a, b, salt64, hasher.row_len, codes[h:],
                                       keys[h:]))
    return codes, keys


_ALL = np.empty(0, np.int64)    # "own elements are the whole union"
_NO_VALUES = np.empty(0, np.uint64)     # the peel's narrow layout: values inside the records


def sketch(codes: np.ndarray, own: np.ndarray | None, q: np.ndarray, m: int) -> np.ndarray:
    """The VALUE_SKETCH lanes of ``hgsketch._bucket_sums`` (own: positions in the union)."""
    lanes = np.zeros(m, np.uint32)
    kernels.sketch_insert(codes, _ALL if own is None else own, q, lanes)
    return lanes


def check_lanes(idx: np.ndarray, q: np.ndarray, hasher: SketchHash, keys: np.ndarray,
                own: np.ndarray | None) -> np.ndarray:
    """``hgsketch.check_lanes`` (keys of the union; own: positions of idx in it, or None)."""
    own = _ALL if own is None else own
    h = parallel.split_point(q.size, 64, parallel.MIN_SPLIT_UNION)
    out = np.empty(8, np.uint64)
    if h is None:
        kernels.check_sums(idx, keys, own, q, out)
    else:                   # two partial sums mod 2**64, added with the same wraparound
        other = np.empty(8, np.uint64)
        mapped = own.size == q.size
        parallel.both(
            lambda: kernels.check_sums(idx[:h], keys if mapped else keys[:h],
                                       own[:h] if mapped else _ALL, q[:h], out),
            lambda: kernels.check_sums(idx[h:], keys if mapped else keys[h:],
                                       own[h:] if mapped else _ALL, q[h:], other))
        out += other
    return (out[: 2 + hasher.checks] & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def release_scratch() -> None:
    """Drop this thread's scratch arrays (the peel's: about 40 bytes per union element)."""
    _scratch.arrays.clear()


#: bucket records (8 bytes each) from which software prefetching pays: the peel's random
#: accesses then cover several hundred KiB of records, codes and values, more than a core's
#: share of the caches when the machine is loaded
PREFETCH_BUCKETS = 1 << 16
#: items ahead: about as many cache misses as one core keeps in flight
PREFETCH_AHEAD = 16


def prefetch_distance(m: int) -> int:
    """How far ahead the peeling kernel prefetches for m buckets (0: not at all; below the
    threshold the prefetches only cost instructions)."""
    return PREFETCH_AHEAD if m >= PREFETCH_BUCKETS else 0


def peel(codes: np.ndarray, sketch_lanes: np.ndarray, row_len: int) -> PeelResult:
    """``peeling.peel_rows`` as a worklist (identical result): ``peel_kernels.peel_sets``, or
    the reference-ordered ``peel_kernels.peel`` when the sketch is inconsistent so that the
    order inside a generation matters (a lane changed in flight)."""
    k, rows = codes.shape
    m = sketch_lanes.size
    sketch_lanes = np.ascontiguousarray(sketch_lanes, np.uint32)
    values = np.zeros(k, np.int64)
    recovered = np.zeros(k, bool)
    residual = np.empty(m, np.int64)
    ahead = prefetch_distance(m)
    cand = _scratch.get("cand", k, np.int64)
    val = _scratch.get("val", k, np.int64)
    crow = _scratch.get("crow", k * rows, codes.dtype).reshape(k, rows)
    # 8-byte bucket records: the count and the positions in the low half (retried with a
    # separate value array in the rare case that a count does not fit, e.g. m forced far
    # below k)
    shift = 32 - max(1, (k - 1).bit_length())
    it = -1
    for wide in ((False, True) if shift >= 2 else (True,)):
        st = _scratch.get("st", m, np.uint64)
        stv = _scratch.get("stv", m, np.uint64) if wide else _NO_VALUES
        bits = 32 if wide else shift
        unordered, ordered = ((peel_kernels.peel_sets_wide, peel_kernels.peel_wide) if wide
                              else (peel_kernels.peel_sets, peel_kernels.peel))
        it = unordered(codes, sketch_lanes, bits, values, recovered, residual, st, stv,
                       _scratch.get("lst", m, np.int32), cand, val, crow, ahead)
        if it == -2:
            values[:] = 0
            recovered[:] = False
            it = ordered(codes, sketch_lanes, bits, values, recovered, residual, st, stv,
                         _scratch.get("lst", max(m, rows * k), np.int32), cand, val, crow, ahead)
        if it >= 0:
            break
    return PeelResult(values, recovered, residual, int(it))


def columns(codes: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(buckets, +-1 signs) of the candidates at ``pos``, k x rows."""
    c = codes[pos].astype(np.int64)
    return c >> 1, 1 - 2 * (c & 1)


def write_dense(dest: np.ndarray, idx: np.ndarray, values: np.ndarray, scale_exp: int) -> None:
    """``dest[:] = 0; dest[idx] = quantize.dequantize(values, scale_exp)`` (idx sorted, dest
    1-D float32): same bits, same OverflowRisk (raised before anything is written); in two
    halves on two cores when large."""
    scale = float(np.ldexp(1.0, -scale_exp))
    if not kernels.fits_float32(values, scale):
        raise OverflowRisk("the sum exceeds the float32 range; use result_int() and the scale")
    h = parallel.split_point(dest.size, 16)
    if h is None:
        kernels.write_dense(dest, 0, idx, values, scale)
        return
    c = int(np.searchsorted(idx, h))
    parallel.both(lambda: kernels.write_dense(dest[:h], 0, idx[:c], values[:c], scale),
                  lambda: kernels.write_dense(dest[h:], h, idx[c:], values[c:], scale))


def decode_checks(residual: np.ndarray, values: np.ndarray) -> tuple[int, int]:
    """(buckets of the residual sketch not 0 mod 2**32, largest |decoded sum|): the numbers
    ``hgsketch``'s consistency check compares."""
    bad, big = kernels.decode_checks(residual, values)
    return int(bad), int(big)

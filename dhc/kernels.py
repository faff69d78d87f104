"""Compiled (numba) kernels of the codec's hot loops; ``dhc/native.py`` wraps them.

Every kernel computes exactly what the numpy reference computes (same hashes, same wraparound,
same peeling order), one element at a time in a single pass instead of a dozen numpy passes.
All integer arithmetic on hashes and lanes is done in uint64 / int64 so that numba's integer
typing never promotes to float; narrowing stores into uint32 arrays truncate, i.e. wrap mod
2**32 exactly like the switch.

The kernels are ``nogil``: ``dhc/parallel.py`` runs the two halves of a whole-tensor pass on
two threads.  ``cache=True`` stores the machine code next to this file (or in numba's user-wide
cache directory, or ``NUMBA_CACHE_DIR``, when that is not writable), so a new process loads it
instead of compiling again.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .intrinsics import ctz, nonzero64, popcount

_U1 = np.uint64(1)
_U5 = np.uint64(5)
_U27 = np.uint64(27)
_U30 = np.uint64(30)
_U31 = np.uint64(31)
_U32 = np.uint64(32)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)

_jit = njit(cache=True, nogil=True, boundscheck=False)


@_jit
def mix(idx, salt):
    """splitmix64 finaliser of ``idx ^ salt`` (see ``dhc.hashing.mix64``)."""
    z = np.uint64(idx) ^ salt
    z ^= z >> _U30
    z *= _M1
    z ^= z >> _U27
    z *= _M2
    z ^= z >> _U31
    return z


# --- encoder: support listing -------------------------------------------------------------------

@_jit
def scan_support(u, mask, w0, w1, words, nz, vals, o):
    """One pass over ``u[64*w0 : 64*w1]`` (the integer view of x): bitmap word w of
    ``u & mask != 0`` (``mask`` clears the sign bit, so -0.0 is a zero as in ``x != 0``) into
    ``words[w]`` (0 past the end of u), and the positions of its set bits and the values there
    into ``nz[o:]`` and ``vals[o:]``, while the values are still in the L1 cache.  Stops before
    a word whose bits might not fit ``nz`` or ``vals``; returns (the next word, the next free
    slot)."""
    full = u.size // 64
    cap = min(nz.size, vals.size) - 64
    for w in range(w0, w1):
        if o > cap:
            return w, o
        base = w * 64
        if w < full:
            t = nonzero64(u, base, mask)
        else:                                   # the tail word, and padding past u
            t = np.uint64(0)
            for j in range(min(64, max(0, u.size - base))):
                t |= np.uint64((u[base + j] & mask) != 0) << np.uint64(j)
        words[w] = t
        while t:
            p = base + np.int64(ctz(t))
            nz[o] = p
            vals[o] = u[p]
            o += 1
            t &= t - _U1
    return w1, o


# --- decoder: union of the element index -----------------------------------------------------

@_jit
def union_count(agg):
    """Set bits of the lanes (uint32 or uint64)."""
    total = 0
    for i in range(agg.size):
        total += np.int64(popcount(agg[i]))
    return total


@_jit
def element_index_summary(agg, words_per_block):
    """(set bits of the lanes, whether every block of ``words_per_block`` lanes has one):
    what ``index.check_element_index`` checks and the union's size, in one pass."""
    total = 0
    every = True
    if words_per_block == 1:                    # the default b = 32: a flat loop vectorises
        empty = 0
        for i in range(agg.size):
            total += np.int64(popcount(agg[i]))
            empty |= np.int64(agg[i] == 0)
        return total, empty == 0
    for blk in range(agg.size // words_per_block):
        bits = 0
        for i in range(blk * words_per_block, (blk + 1) * words_per_block):
            bits += np.int64(popcount(agg[i]))
        every &= bits != 0
        total += bits
    return total, every


@_jit
def lanes_cover(mine, agg):
    """Whether every bit of ``mine`` is set in ``agg`` (lanes of equal length)."""
    missing = np.uint64(0)
    for i in range(mine.size):
        missing |= np.uint64(mine[i]) & ~np.uint64(agg[i])
    return missing == 0


@_jit
def list_lane_bits(lanes, out):
    """Positions of the set bits of uint32 ``lanes`` (bit j of lane w is 32*w + j), ascending,
    into ``out``."""
    o = 0
    for w in range(lanes.size):
        t = np.uint64(lanes[w])
        while t:
            out[o] = w * 32 + np.int64(ctz(t))
            o += 1
            t &= t - _U1
    return o


@_jit
def max_magnitude(values):
    """(largest |value| as float64, whether every value is finite)."""
    peak = 0.0
    finite = True
    for i in range(values.size):
        a = abs(np.float64(values[i]))
        finite &= a < np.inf                    # False for inf and NaN
        peak = max(peak, a)
    return peak, finite


@_jit
def quantize(values, scale, out):
    """``out = rint(values * scale)`` (int64; ``scale`` a power of two, so the product is
    ``ldexp``'s, exact unless it underflows, and rounded as numpy rounds it: half to even);
    returns the largest |out|."""
    peak = np.int64(0)
    for i in range(values.size):
        q = np.int64(np.rint(np.float64(values[i]) * scale))
        out[i] = q
        peak = max(peak, abs(q))
    return peak


@_jit
def union_list(agg, mine, active_ids, words_per_block, shift, out, own):
    """Sorted global indices of the set bits of the aggregated level-1 lanes (lane i belongs
    to block ``active_ids[i // words_per_block]``) into ``out``, and, when ``mine`` (this
    worker's level-1 lanes, a subset of the bits) has as many lanes, the position in ``out``
    of each of this worker's elements into ``own``: ``np.searchsorted(out, nz)`` for free."""
    o = 0
    q = 0
    ranks = mine.size == agg.size
    for i in range(agg.size):
        t = np.uint64(agg[i])
        if t == 0:
            continue
        blk = active_ids[i // words_per_block]
        base = (blk << shift) + (i % words_per_block) * 32
        u = np.uint64(mine[i]) if ranks else np.uint64(0)
        while t:
            low = t & (~t + _U1)
            out[o] = base + np.int64(ctz(t))
            own[q] = o
            q += np.int64((u & low) != 0)       # branch-free: own bits are random
            o += 1
            t ^= low
    return o


# --- hashing and the value sketch ------------------------------------------------------------

@_jit
def hash_union(cand, a, b, salt, row_len, codes, keys):
    """Mixed keys and, per candidate and row, ``bucket << 1 | negative`` (candidate-major),
    with the buckets and signs of ``SketchHash.rows_of``."""
    rows = a.size
    rl = np.uint64(row_len)
    if rows == 3:                   # the default, unrolled: the loop body stays in registers
        a0, a1, a2 = a[0], a[1], a[2]
        b0, b1, b2 = b[0], b[1], b[2]
        r1 = np.int64(row_len)
        r2 = 2 * r1
        for c in range(cand.size):
            key = mix(cand[c], salt)
            keys[c] = key
            h = key * a0 + b0
            codes[c, 0] = ((np.int64(((h >> _U32) * rl) >> _U32) << 1)
                           | np.int64((h >> _U31) & _U1))
            h = key * a1 + b1
            codes[c, 1] = ((np.int64(((h >> _U32) * rl) >> _U32) + r1) << 1) | np.int64(
                (h >> _U31) & _U1)
            h = key * a2 + b2
            codes[c, 2] = ((np.int64(((h >> _U32) * rl) >> _U32) + r2) << 1) | np.int64(
                (h >> _U31) & _U1)
        return
    for c in range(cand.size):
        key = mix(cand[c], salt)
        keys[c] = key
        for j in range(rows):
            h = key * a[j] + b[j]
            bucket = np.int64(((h >> _U32) * rl) >> _U32) + j * row_len
            codes[c, j] = (bucket << 1) | np.int64((h >> _U31) & _U1)


@_jit
def sketch_insert(codes, own, q, lanes):
    """``lanes[bucket] += sign * q`` mod 2**32 over this worker's elements (``own``: their
    positions in the union, or None-equivalent empty array when own == union)."""
    rows = codes.shape[1]
    n = q.size
    mapped = own.size == n
    for i in range(n):
        c = own[i] if mapped else i
        v = np.uint64(q[i])
        for j in range(rows):
            code = codes[c, j]
            bk = code >> 1
            if code & 1:
                lanes[bk] = np.uint64(lanes[bk]) - v
            else:
                lanes[bk] = np.uint64(lanes[bk]) + v


@_jit
def check_sums(idx, keys, own, q, out):
    """``out`` = [sum q, sum idx*q, sum (key >> 5j) * q for j < 6] mod 2**64 (uint64);
    ``keys[own[i]]`` is the key of element i (own empty: keys[i]).  Scalar accumulators, so
    the loop keeps them in registers."""
    n = q.size
    mapped = own.size == n
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = np.uint64(0)
    for i in range(n):
        v = np.uint64(q[i])
        key = keys[own[i]] if mapped else keys[i]
        s0 += v
        s1 += np.uint64(idx[i]) * v
        s2 += key * v
        s3 += (key >> _U5) * v
        s4 += (key >> np.uint64(10)) * v
        s5 += (key >> np.uint64(15)) * v
        s6 += (key >> np.uint64(20)) * v
        s7 += (key >> np.uint64(25)) * v
    out[0] = s0
    out[1] = s1
    out[2] = s2
    out[3] = s3
    out[4] = s4
    out[5] = s5
    out[6] = s6
    out[7] = s7


# --- decoder: consistency checks --------------------------------------------------------------

@_jit
def decode_checks(residual, values):
    """(buckets of ``residual`` not 0 mod 2**32, largest ``|values|``) in one pass each,
    without numpy's temporaries (two arrays of m and k int64 per check)."""
    bad = np.int64(0)
    for i in range(residual.size):
        bad += np.int64((residual[i] & 0xFFFFFFFF) != 0)
    big = np.int64(0)
    for i in range(values.size):
        big = max(big, abs(values[i]))
    return bad, big


# --- decoder: the dense result ----------------------------------------------------------------

@_jit
def fits_float32(values, scale):
    """Whether every ``float32(values * scale)`` is finite (``scale`` a power of two: the
    largest magnitude decides, rounding being monotonic)."""
    big = np.int64(0)
    for j in range(values.size):
        big = max(big, abs(values[j]))
    return np.isfinite(np.float32(np.float64(big) * scale))


@_jit
def write_dense(dest, lo, idx, values, scale):
    """``dest[:] = 0`` and ``dest[idx - lo] = float32(values * scale)``: the bits of numpy's
    ``ldexp`` then cast (``scale`` is a power of two, the product exact in float64).  The
    zero loop compiles to ``memset``, which streams past the caches on large tensors; numpy's
    ``fill`` measured 2-3x slower there."""
    for i in range(dest.size):
        dest[i] = 0
    for j in range(idx.size):
        dest[idx[j] - lo] = np.float32(np.float64(values[j]) * scale)

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

from .intrinsics import ctz, nonzero64, popcount, prefetch

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


# --- decoder: peeling ------------------------------------------------------------------------

@njit(cache=True, nogil=True, inline="always")
def _remove(st, bk, wide, shift, c, sv):
    """Take candidate ``c`` (value times its sign here: ``sv``) out of bucket ``bk``."""
    if wide:
        st[bk, 0] = (st[bk, 0] - _U1) ^ (np.uint64(c) << _U32)
        st[bk, 1] = np.uint64((np.int64(st[bk, 1]) - sv) & 0xFFFFFFFF)
    else:
        w = st[bk, 0]
        hi = ((w >> _U32) - _U1) ^ (np.uint64(c) << shift)
        lo = np.uint64((np.int64(w) - sv) & 0xFFFFFFFF)
        st[bk, 0] = (hi << _U32) | lo


@njit(cache=True, nogil=True, inline="always")
def _list_pure(st, m, wide, cmask, lst):
    """Write the buckets holding exactly one candidate into ``lst``; return how many."""
    n_list = 0
    for bk in range(m):
        cnt = st[bk, 0] & _LOW32 if wide else (st[bk, 0] >> _U32) & cmask
        lst[n_list] = bk
        n_list += np.int64(cnt == _U1)
    return n_list


@_jit
def fill_state(codes, sketch, shift, st, ahead):
    """Bucket records of the peel (see :func:`peel`) from the sketch and the candidates' codes;
    False if a count does not fit ``shift`` bits (narrow layout only).  Row by row: the
    buckets of one row are one contiguous third of ``st``, which stays in the caches while
    the candidates stream by (the fields are sums and xors, so the order does not matter)."""
    k, rows = codes.shape
    m = sketch.size
    if st.shape[1] == 2:
        for bk in range(m):
            st[bk, 0] = 0
            st[bk, 1] = sketch[bk]
        for j in range(rows):
            for c in range(k):
                if ahead:
                    prefetch(st, codes[min(c + ahead, k - 1), j] >> 1)
                bk = codes[c, j] >> 1
                st[bk, 0] = (st[bk, 0] + _U1) ^ (np.uint64(c) << _U32)
        return True
    ushift = np.uint64(shift)
    for bk in range(m):
        st[bk, 0] = np.uint64(sketch[bk])
    one = _U1 << _U32
    full = ((_U1 << ushift) - _U1) << _U32
    over = np.uint64(0)
    for j in range(rows):
        for c in range(k):
            if ahead:
                prefetch(st, codes[min(c + ahead, k - 1), j] >> 1)
            bk = codes[c, j] >> 1
            w = (st[bk, 0] + one) ^ ((np.uint64(c) << ushift) << _U32)
            st[bk, 0] = w
            over |= np.uint64((w & full) == 0)      # the count field wrapped to 0
    return over == 0


@_jit
def peel(codes, sketch, row_len, shift, values, recovered, residual, st, lst, cand_of, val_of,
         crow, ahead):
    """Worklist peeling of ``sketch`` (uint32 lanes); returns the number of generations.

    Per bucket one record: count, xor of its candidates' positions (the position when the
    count is 1) and value mod 2**32.  ``st`` is m x 1 uint64 (``value | (count | xor << shift)
    << 32``, positions in the 32 - shift high bits) or m x 2 (``count | xor << 32``, value):
    the random accesses of a large peel are cache misses, so 8 bytes per bucket instead of 16
    pays.  Returns -1 (nothing decoded) if a count does not fit ``shift`` bits: call again
    with the m x 2 layout.  Generation 1 is every pure bucket in ascending
    order.  A generation (1) reads the candidate and value of each listed bucket and keeps the
    last listing of each candidate, (2) subtracts every kept candidate from its buckets,
    writing the touched buckets candidate-major into ``lst``, (3) keeps in ``lst`` the touched
    buckets that are now pure: the next generation.  That is exactly the order of
    ``dhc.peeling``'s vectorised iterations, so the candidates, the bucket each is read from,
    the values, the residual and the generation count are identical.  The work is
    O(k * rows + m) in all, whatever the number of generations.  Splitting a generation into
    passes keeps each pass's random accesses independent of each other, so the CPU overlaps
    their cache misses, and signs and purity are applied without branches (a mispredicted
    branch on a random sign discards the loads in flight).

    ``st``, ``lst`` (max(m, rows * k) int32), ``cand_of``, ``val_of`` (k int64) and ``crow``
    (k x rows, like ``codes``) are scratch, kept small: the whole working set of a peel of
    10**5 elements then stays in the caches.  Beyond that every pass knows the addresses of
    its random accesses ``ahead`` items in advance (the listed buckets, the recovered
    candidates' codes and buckets) and prefetches them, so the misses of a large peel
    overlap instead of stalling one by one (``ahead`` = 0: no prefetching)."""
    k, rows = codes.shape
    m = sketch.size
    wide = st.shape[1] == 2
    ushift = np.uint64(shift)
    cmask = (_U1 << ushift) - _U1
    if not fill_state(codes, sketch, shift, st, ahead):
        return -1
    n_list = _list_pure(st, m, wide, cmask, lst)
    generations = 0
    while n_list > 0:
        generations += 1
        # (1) read every listed bucket (all still pure: nothing changed since the listing)
        # and keep the last listing of each candidate (as numpy's ``mark[pos] = order``):
        # walk the list backwards keeping first sightings; entry q is then candidate
        # p - 1 - q of the reference's order
        p = 0
        for t in range(n_list - 1, -1, -1):
            if ahead:
                prefetch(st, lst[max(t - ahead, 0)])
            bk = lst[t]
            w = st[bk, 0]
            c = np.int64(w >> _U32) if wide else np.int64(w >> (_U32 + ushift))
            if recovered[c]:
                continue                              # listed again later in this generation
            recovered[c] = True
            cand_of[p] = c
            a = st[bk, 1] if wide else w
            # value mod 2**32 read as int32, and the pure bucket (no division for its row:
            # phase 2 finds it among the candidate's buckets)
            val_of[p] = (np.int64(np.int32(a & _LOW32)) << 32) | bk
            p += 1
        # (2) gather the recovered candidates' codes, then subtract them from their buckets,
        # listing the touched buckets candidate-major in the reference's order (each
        # candidate touches exactly ``rows`` buckets, so its place in the list is known)
        for i in range(p):
            if ahead:
                prefetch(codes, cand_of[min(i + ahead, p - 1)])
            c = cand_of[i]
            for j in range(rows):
                crow[i, j] = codes[c, j]
        for i in range(p):
            if ahead:
                i2 = min(i + ahead, p - 1)
                for j in range(rows):
                    prefetch(st, crow[i2, j] >> 1)
                prefetch(values, cand_of[i2])
            c = cand_of[i]
            a = val_of[i] >> 32
            pure = val_of[i] & 0xFFFFFFFF
            neg = np.int64(0)
            for j in range(rows):                     # the sign in the pure bucket
                code = np.int64(crow[i, j])
                neg |= (code & 1) & -np.int64((code >> 1) == pure)
            v = (a ^ -neg) + neg                      # negated where its sign is -1
            values[c] = v
            at = (p - 1 - i) * rows
            for j in range(rows):
                code = crow[i, j]
                bj = code >> 1
                sneg = code & 1
                _remove(st, bj, wide, ushift, c, (v ^ -sneg) + sneg)
                lst[at + j] = bj
        n = p * rows
        # (3) the touched buckets that are pure now (branch-free compaction)
        n_list = 0
        for t in range(n):
            if ahead:
                prefetch(st, lst[min(t + ahead, n - 1)])
            bj = lst[t]
            cnt = st[bj, 0] & _LOW32 if wide else (st[bj, 0] >> _U32) & cmask
            lst[n_list] = bj
            n_list += np.int64(cnt == _U1)
    for bk in range(m):
        col = st[bk, 1] if wide else st[bk, 0]
        residual[bk] = np.int64(np.int32(col & _LOW32))
    return generations



@_jit
def peel_sets(codes, sketch, shift, values, recovered, residual, st, lst, cand_of, val_of, crow,
              ahead):
    """:func:`peel` without the reference's order inside a generation; returns the number of
    generations, -1 as :func:`peel`, or -2 when the order could matter (then run
    :func:`peel`).

    The passes are those of :func:`peel`, except that pass 2 lists a touched bucket at the
    moment its count drops to 1, so pass 3 disappears.  Counts only fall, so each bucket is
    listed at most once in all (``lst`` needs m entries), and no bucket changes during pass 1:
    a listed bucket whose count is not 1 there lost its candidate later in the generation
    that listed it, and is skipped.  So every generation recovers exactly the reference's set
    of candidates.  Only a candidate that is pure in two buckets of one generation may be read
    from another bucket than in the reference.  On a consistent sketch both readings agree;
    if they do not, the bucket not read keeps a non-zero value with a count of 0 to the end,
    which the last pass detects (-2).  So whenever this returns >= 0, values, flags, residual
    and generation count are the reference's."""
    k, rows = codes.shape
    m = sketch.size
    wide = st.shape[1] == 2
    ushift = np.uint64(shift)
    cmask = (_U1 << ushift) - _U1
    if not fill_state(codes, sketch, shift, st, ahead):
        return -1
    n_list = _list_pure(st, m, wide, cmask, lst)
    generations = 0
    while n_list > 0:
        # (1) the listed buckets still pure, one candidate each
        p = 0
        for t in range(n_list):
            if ahead:
                prefetch(st, lst[min(t + ahead, n_list - 1)])
            bk = lst[t]
            w = st[bk, 0]
            cnt = w & _LOW32 if wide else (w >> _U32) & cmask
            c = np.int64(w >> _U32) if wide else np.int64(w >> (_U32 + ushift))
            if cnt != _U1 or recovered[c]:
                continue
            recovered[c] = True
            cand_of[p] = c
            a = st[bk, 1] if wide else w
            val_of[p] = (np.int64(np.int32(a & _LOW32)) << 32) | bk
            p += 1
        generations += np.int64(p > 0)
        # (2) gather their codes, subtract them, list the buckets that become pure
        for i in range(p):
            if ahead:
                prefetch(codes, cand_of[min(i + ahead, p - 1)])
            c = cand_of[i]
            for j in range(rows):
                crow[i, j] = codes[c, j]
        n_list = 0
        for i in range(p):
            if ahead:
                i2 = min(i + ahead, p - 1)
                for j in range(rows):
                    prefetch(st, crow[i2, j] >> 1)
                prefetch(values, cand_of[i2])
            c = cand_of[i]
            a = val_of[i] >> 32
            pure = val_of[i] & 0xFFFFFFFF
            neg = np.int64(0)
            for j in range(rows):
                code = np.int64(crow[i, j])
                neg |= (code & 1) & -np.int64((code >> 1) == pure)
            v = (a ^ -neg) + neg
            values[c] = v
            for j in range(rows):
                code = crow[i, j]
                bj = code >> 1
                sneg = code & 1
                _remove(st, bj, wide, ushift, c, (v ^ -sneg) + sneg)
                cnt = st[bj, 0] & _LOW32 if wide else (st[bj, 0] >> _U32) & cmask
                lst[n_list] = bj
                n_list += np.int64(cnt == _U1)
    clash = False
    for bk in range(m):
        w = st[bk, 0]
        col = st[bk, 1] if wide else w
        r = np.int64(np.int32(col & _LOW32))
        residual[bk] = r
        cnt = w & _LOW32 if wide else (w >> _U32) & cmask
        clash |= (cnt == 0) & (r != 0)
    return -2 if clash else generations


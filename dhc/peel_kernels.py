"""Compiled (numba) worklist peeling of the value sketch; ``dhc/native.py`` wraps it.

The same result as ``dhc.peeling.peel_rows`` (values, recovered flags, residual, number of
generations), in O(k * rows + m) work whatever the number of generations.

**Bucket records.** Each bucket keeps a count of the candidates not yet taken out, the xor of
their positions in the union (the position itself when the count is 1) and its value mod
2**32.  The *narrow* layout packs all three in one uint64 ``st[bk]``: the value in the high 32
bits, the count in the lowest ``shift`` bits and the xor of positions above it.  Taking a
candidate out is then ``((w - 1) ^ (c << shift)) - (sv << 32)``: the count cannot borrow (it
is at least 1 while the candidate is in the bucket) and the value wraps mod 2**32 in the high
half without touching the rest.  The *wide* layout (when a count does not fit ``shift`` bits,
only with m forced far below k) keeps ``count | xor << 32`` in ``st`` and the value in
``stv``: ``shift = 32`` and the same code.  The random accesses of a large peel are cache
misses, so one 8-byte record per bucket pays.

**Passes.** Splitting a generation into passes keeps each pass's random accesses independent
of each other, so the CPU overlaps their cache misses, and signs and purity are applied without
branches (a mispredicted branch on a random sign discards the loads in flight).  From
``ahead`` > 0 on, every pass prefetches the memory of the item ``ahead`` places on (the
addresses are in the lists).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .intrinsics import prefetch

_U1 = np.uint64(1)
_U32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)

_jit = njit(cache=True, nogil=True, boundscheck=False)
_inline = njit(cache=True, nogil=True, inline="always")


@_inline
def _value(st, stv, bk, wide):
    """Value of bucket ``bk`` mod 2**32, read as int32."""
    return np.int64(np.int32((stv[bk] if wide else st[bk] >> _U32) & _LOW32))


@_inline
def _remove(st, stv, bk, wide, cx, sv):
    """Take the candidate whose shifted position is ``cx`` (its value times its sign in this
    bucket: ``sv``) out of bucket ``bk``; returns the new record."""
    w = (st[bk] - _U1) ^ cx
    if wide:
        stv[bk] = np.uint64(stv[bk]) - np.uint64(sv)
    else:
        w -= np.uint64(sv) << _U32
    st[bk] = w
    return w


@_inline
def _fill(codes, sketch, shift, st, stv, ahead, wide):
    """Bucket records of the peel from the sketch and the candidates' codes; False if a count
    does not fit ``shift`` bits (narrow layout only).  Row by row: the buckets of one row are
    one contiguous third of ``st``, which stays in the caches while the candidates stream by
    (the fields are sums and xors, so the order does not matter)."""
    k, rows = codes.shape
    m = sketch.size
    ushift = np.uint64(shift)
    cmask = (_U1 << ushift) - _U1
    for bk in range(m):
        if wide:
            st[bk] = 0
            stv[bk] = sketch[bk]
        else:
            st[bk] = np.uint64(sketch[bk]) << _U32
    if wide or k < (1 << shift):                # no count can reach 2**shift: no check
        for j in range(rows):
            for c in range(k):
                if ahead:
                    prefetch(st, codes[min(c + ahead, k - 1), j] >> 1)
                bk = codes[c, j] >> 1
                st[bk] = (st[bk] + _U1) ^ (np.uint64(c) << ushift)
        return True
    over = np.uint64(0)
    for j in range(rows):
        for c in range(k):
            if ahead:
                prefetch(st, codes[min(c + ahead, k - 1), j] >> 1)
            bk = codes[c, j] >> 1
            w = (st[bk] + _U1) ^ (np.uint64(c) << ushift)
            st[bk] = w
            over |= np.uint64((w & cmask) == 0)      # the count field wrapped to 0
    return over == 0


@_inline
def _list_pure(st, m, cmask, lst):
    """Write the buckets holding exactly one candidate into ``lst``; return how many."""
    n_list = 0
    for bk in range(m):
        lst[n_list] = bk
        n_list += np.int64((st[bk] & cmask) == _U1)
    return n_list


#: the position bits of a ``cand_of`` entry (``peel_sets`` keeps the pure bucket's row above)
_POS = 0xFFFFFFFFFFFF


@_inline
def _gather(codes, cand_of, p, crow, ahead):
    """``crow[i] = codes[cand_of[i]]`` for i < p (one pass of independent loads)."""
    for i in range(p):
        if ahead:
            prefetch(codes, cand_of[min(i + ahead, p - 1)] & _POS)
        c = cand_of[i] & _POS
        for j in range(codes.shape[1]):
            crow[i, j] = codes[c, j]


@_inline
def _signed_value(crow, i, a, pure):
    """The candidate's value from ``a``, its pure bucket's value (negated where its sign in
    that bucket is -1, found without a branch)."""
    neg = np.int64(0)
    for j in range(crow.shape[1]):
        code = np.int64(crow[i, j])
        neg |= (code & 1) & -np.int64((code >> 1) == pure)
    return (a ^ -neg) + neg


@_inline
def _residual(st, stv, m, cmask, wide, residual):
    """The values left in the buckets (int32) into ``residual``; True if a bucket holds no
    candidate but a non-zero value."""
    clash = False
    for bk in range(m):
        r = _value(st, stv, bk, wide)
        residual[bk] = r
        clash |= ((st[bk] & cmask) == 0) & (r != 0)
    return clash


def _make_peel(wide: bool):
    """:func:`peel` for one record layout."""

    @_jit
    def peel(codes, sketch, shift, values, recovered, residual, st, stv, lst, cand_of, val_of,
             crow, ahead):
        """Worklist peeling of ``sketch`` (uint32 lanes) in the reference's order; returns the
        number of generations, or -1 (nothing decoded) if a count does not fit ``shift`` bits (call
        ``peel_wide`` then).

        Generation 1 is every pure bucket in ascending order.  A generation (1) reads the
        candidate and value of each listed bucket and keeps the last listing of each candidate,
        (2) subtracts every kept candidate from its buckets, writing the touched buckets
        candidate-major into ``lst``, (3) keeps in ``lst`` the touched buckets that are now pure:
        the next generation.  That is exactly the order of ``dhc.peeling``'s vectorised
        iterations, so the candidates, the bucket each is read from, the values, the residual and
        the generation count are identical, even for a corrupted sketch.  ``lst`` needs
        max(m, rows * k) entries; ``cand_of``, ``val_of`` k, ``crow`` k x rows."""
        k, rows = codes.shape
        m = sketch.size
        ushift = np.uint64(shift)
        cmask = (_U1 << ushift) - _U1
        pmask = (_U1 << (_U32 if wide else _U32 - ushift)) - _U1
        if not _fill(codes, sketch, shift, st, stv, ahead, wide):
            return -1
        n_list = _list_pure(st, m, cmask, lst)
        generations = 0
        while n_list > 0:
            generations += 1
            # (1) keep the last listing of each candidate (numpy's ``mark[pos] = order``): walk
            # the list backwards keeping first sightings; entry q is then candidate p - 1 - q of
            # the reference's order
            p = 0
            for t in range(n_list - 1, -1, -1):
                if ahead:
                    prefetch(st, lst[max(t - ahead, 0)])
                bk = lst[t]
                c = np.int64((st[bk] >> ushift) & pmask)
                if recovered[c]:
                    continue                              # listed again later in this generation
                recovered[c] = True
                cand_of[p] = c
                val_of[p] = (_value(st, stv, bk, wide) << 32) | bk
                p += 1
            # (2) subtract them, listing the touched buckets in the reference's order
            _gather(codes, cand_of, p, crow, ahead)
            for i in range(p):
                if ahead:
                    i2 = min(i + ahead, p - 1)
                    for j in range(rows):
                        prefetch(st, crow[i2, j] >> 1)
                    prefetch(values, cand_of[i2])
                c = cand_of[i]
                v = _signed_value(crow, i, val_of[i] >> 32, val_of[i] & 0xFFFFFFFF)
                values[c] = v
                cx = np.uint64(c) << ushift
                at = (p - 1 - i) * rows
                for j in range(rows):
                    sneg = crow[i, j] & 1
                    _remove(st, stv, crow[i, j] >> 1, wide, cx, (v ^ -sneg) + sneg)
                    lst[at + j] = crow[i, j] >> 1
            n = p * rows
            # (3) the touched buckets that are pure now (branch-free compaction)
            n_list = 0
            for t in range(n):
                if ahead:
                    prefetch(st, lst[min(t + ahead, n - 1)])
                bj = lst[t]
                lst[n_list] = bj
                n_list += np.int64((st[bj] & cmask) == _U1)
        _residual(st, stv, m, cmask, wide, residual)
        return generations

    return peel


def _make_peel_sets(wide: bool):
    """:func:`peel_sets` for one record layout."""

    @_jit
    def peel_sets(codes, sketch, shift, values, recovered, residual, st, stv, lst, cand_of,
                  val_of, crow, ahead):
        """:func:`peel` without the reference's order inside a generation; returns the number of
        generations, -1 as :func:`peel`, or -2 when the order could matter (then run
        :func:`peel`).

        Pass 2 lists a touched bucket at the moment its count drops to 1, so pass 3 disappears.
        Counts only fall, so each bucket is listed at most once in all (``lst`` needs m entries),
        and no bucket changes during pass 1: a listed bucket whose count is not 1 there lost its
        candidate later in the generation that listed it, and is skipped.  A candidate pure in
        two buckets of one generation is listed twice; pass 2 takes it out at its first listing
        and skips the second, whose pure bucket then has a count of 0 (only that candidate could
        change it).  So every generation recovers exactly the reference's set of candidates, and
        only such a candidate may be read from another bucket than in the reference.  On a
        consistent sketch both readings agree; if they do not, the bucket not read keeps a
        non-zero value with a count of 0 to the end, which the last pass detects (-2).  So
        whenever this returns >= 0, values, flags, residual and generation count are the
        reference's."""
        k, rows = codes.shape
        m = sketch.size
        ushift = np.uint64(shift)
        cmask = (_U1 << ushift) - _U1
        pmask = (_U1 << (_U32 if wide else _U32 - ushift)) - _U1
        if not _fill(codes, sketch, shift, st, stv, ahead, wide):
            return -1
        n_list = _list_pure(st, m, cmask, lst)
        row_len = m // rows
        generations = 0
        while n_list > 0:
            # (1) the listed buckets still pure, one candidate each (a candidate may be listed
            # twice; pass 2 skips the second listing)
            p = 0
            for t in range(n_list):
                if ahead:
                    prefetch(st, lst[min(t + ahead, n_list - 1)])
                bk = lst[t]
                w = st[bk]
                row = np.int64(0)                     # the pure bucket's row
                for j in range(1, rows):
                    row += np.int64(bk >= j * row_len)
                cand_of[p] = np.int64((w >> ushift) & pmask) | (row << 48)
                val_of[p] = (_value(st, stv, bk, wide) << 32) | bk
                p += np.int64((w & cmask) == _U1)
            generations += np.int64(p > 0)
            # (2) gather their codes, subtract them, list the buckets that become pure
            _gather(codes, cand_of, p, crow, ahead)
            n_list = 0
            for i in range(p):
                if ahead:
                    i2 = min(i + ahead, p - 1)
                    for j in range(rows):
                        prefetch(st, crow[i2, j] >> 1)
                    prefetch(values, cand_of[i2] & _POS)
                pure = val_of[i] & 0xFFFFFFFF
                if (st[pure] & cmask) != _U1:
                    continue                              # taken out at an earlier listing
                c = cand_of[i] & _POS
                neg = np.int64(crow[i, cand_of[i] >> 48] & 1)  # its sign in the pure bucket
                a = val_of[i] >> 32
                v = (a ^ -neg) + neg
                values[c] = v
                recovered[c] = True
                cx = np.uint64(c) << ushift
                for j in range(rows):
                    sneg = crow[i, j] & 1
                    bj = crow[i, j] >> 1
                    w = _remove(st, stv, bj, wide, cx, (v ^ -sneg) + sneg)
                    lst[n_list] = bj
                    n_list += np.int64((w & cmask) == _U1)
        return -2 if _residual(st, stv, m, cmask, wide, residual) else generations

    return peel_sets


#: the kernels of the narrow layout, and of the wide one (``wide`` a compile-time constant of
#: each: a run-time flag in the inner loops measured twice as slow)
peel, peel_wide = _make_peel(False), _make_peel(True)
peel_sets, peel_sets_wide = _make_peel_sets(False), _make_peel_sets(True)

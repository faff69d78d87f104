"""Vectorised peeling of an aggregated invertible count sketch, and its residual check.

Every candidate (element of the aggregated support) sits in one bucket of each row.  A bucket
holding exactly one unrecovered candidate is *pure*: its value, times that candidate's sign, is
the candidate's sum (mod 2**32, read as int32).  Each iteration recovers every candidate that is
pure somewhere, subtracts it from all its buckets and looks for new pure buckets among the
buckets it touched.  Counts and candidate positions per bucket are computed locally from the
exact candidate list, so they are never corrupted; only the values can be, and the caller's
checks catch that.  Work per iteration is proportional to what it peels (np.subtract.at), not
to m.

The cost is a few dozen numpy passes over each peeled candidate plus random accesses, so the
state is kept compact: one 64-bit word per bucket holds the value (mod 2**32) and the count and
position sum, so one gather and one ``np.subtract.at`` serve all three; recovered values are
scattered once at the end.  Two layouts: :func:`_peel_packed` (k <= 2**18, the common case) works
row-major and derives each touched bucket's change from the recovered word with an xor, a
multiply and an add; :func:`_peel_general` (any k) keeps each candidate's r codes
``bucket << 1 | negative`` candidate-major.  Both recover the same candidates in the same
iterations and read each from the same bucket, so their results are identical.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

_TWO31 = 1 << 31
_MASK32 = (1 << 32) - 1
_S32 = np.uint64(32)
_LOW32 = np.uint64(_MASK32)
_PACKED_MAX_K = 1 << 18                                     # see peel_rows
_HIGH = -(1 << 32)                                          # int64 mask of the value field
_LOW = 0 if sys.byteorder == "little" else 1                # low half in a uint32 pair view


def as_int32(v: np.ndarray) -> np.ndarray:
    """int64 values reduced mod 2**32 and read as signed int32 (still int64 dtype)."""
    return ((v + _TWO31) & _MASK32) - _TWO31


@dataclass
class PeelResult:
    """Outcome of peeling: per-candidate sums, which were recovered, and the residual sketch."""

    values: np.ndarray      # int64 per candidate (0 where not recovered)
    recovered: np.ndarray   # bool per candidate
    residual: np.ndarray    # int64 sketch after subtracting every recovered candidate, each
                            # bucket reduced mod 2**32 and read as int32
    iterations: int

    @property
    def stuck(self) -> np.ndarray:
        """Candidate positions peeling could not recover (the 2-core)."""
        if self.recovered.all():                # the usual case: one pass, no temporaries
            return np.zeros(0, np.int64)
        return np.flatnonzero(~self.recovered)


def peel(buckets: np.ndarray, signs: np.ndarray, sketch: np.ndarray) -> PeelResult:
    """Peel ``sketch`` (m uint32 lanes) given each candidate's ``buckets``/``signs`` (k x rows,
    bucket of row j in [j*m/rows, (j+1)*m/rows))."""
    buckets = np.asarray(buckets, dtype=np.int64)
    return peel_rows(buckets.T, np.asarray(signs).T < 0, sketch)


def _position_state(buckets: np.ndarray, k: int, m: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Per bucket ``count + (position sum << shift)`` (uint64), the counts, and the shift.

    One float64 bincount of ``1 + position * 2**s`` per row gives both fields at once; every
    weight is positive, so if the largest total is below 2**53 every partial sum was exact."""
    s = max(1, int(k).bit_length())                        # count <= k < 2**s
    weights = np.arange(k, dtype=np.float64)
    weights *= float(1 << s)
    weights += 1.0
    both = np.bincount(buckets.reshape(-1), weights=np.tile(weights, buckets.shape[0]),
                       minlength=m)
    if k and float(both.max()) < 2.0 ** 53:
        both = both.astype(np.uint64)
        count = (both & np.uint64((1 << s) - 1)).astype(np.int64)
        possum = both >> np.uint64(s)
    else:
        count = np.bincount(buckets.reshape(-1), minlength=m)
        possum = np.zeros(m, dtype=np.uint64)
        for row in buckets:
            np.add.at(possum, row, np.arange(k, dtype=np.uint64))
    shift = max(1, int(count.max(initial=0)).bit_length())
    return count.astype(np.uint64) + (possum << np.uint64(shift)), count, shift


class _Buckets:
    """Mutable per-bucket state: count, position sum and value of every bucket.

    When count and position sum fit in 32 bits (always, unless k is in the millions) they share
    one uint64 word with the value: low half ``count + (possum << shift)``, high half the value
    mod 2**32.  Subtracting a candidate never borrows from the low half (both fields are exact
    sums of what is subtracted), so the high half wraps mod 2**32 exactly like the switch, and
    one gather / one ``np.subtract.at`` serves both.  Otherwise two arrays are used."""

    def __init__(self, state: np.ndarray, shift: int, sketch: np.ndarray) -> None:
        self.shift = np.uint64(shift)
        self.low = np.uint64((1 << shift) - 1)
        y = np.asarray(sketch).astype(np.uint32)
        # both fields only decrease while peeling, so what fits now fits throughout
        self.packed = int(state.max(initial=0)) < 1 << 32
        if self.packed:
            self.word = (y.astype(np.uint64) << _S32) | state
        else:
            self.state, self.y = state, y

    def read(self, pure: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(candidate position, value mod 2**32 read as int32) of pure buckets."""
        if self.packed:
            halves = np.take(self.word, pure).view(np.uint32).reshape(-1, 2)   # (low, high)
            return np.right_shift(halves[:, 0], np.uint32(self.shift), dtype=np.int64), \
                halves[:, 1].view(np.int32)
        return (np.take(self.state, pure) >> self.shift).astype(np.int64), \
            np.take(self.y, pure).view(np.int32)

    def subtract(self, touched: np.ndarray, pos: np.ndarray, rows: int, sv: np.ndarray) -> None:
        """Remove the candidates at ``pos`` (values*signs ``sv``, int32, candidate-major) from
        their ``touched`` buckets."""
        one = np.repeat((pos.astype(np.uint64) << self.shift) + np.uint64(1), rows)
        if self.packed:
            one |= sv.view(np.uint32).astype(np.uint64) << _S32
            np.subtract.at(self.word, touched, one)
        else:
            np.subtract.at(self.state, touched, one)
            np.subtract.at(self.y, touched, sv.view(np.uint32))

    def pure_among(self, touched: np.ndarray) -> np.ndarray:
        """The touched buckets that now hold exactly one candidate."""
        arr = self.word if self.packed else self.state
        return touched[(np.take(arr, touched) & self.low) == np.uint64(1)]

    def residual(self) -> np.ndarray:
        """Bucket values mod 2**32 read as int32 (int64)."""
        y = (self.word >> _S32).astype(np.uint32) if self.packed else self.y
        return y.view(np.int32).astype(np.int64)


def peel_rows(buckets: np.ndarray, negative: np.ndarray, sketch: np.ndarray) -> PeelResult:
    """Peel ``sketch`` (m uint32 lanes) given the candidates' buckets and negative-sign flags
    in row-major layout (rows x k, as ``SketchHash.rows_of`` returns them)."""
    rows, k = buckets.shape
    m = sketch.shape[0]
    if k == 0:
        y = np.asarray(sketch).astype(np.uint32)
        return PeelResult(np.zeros(0, np.int64), np.zeros(0, bool),
                          y.view(np.int32).astype(np.int64), 0)
    count = np.bincount(buckets.reshape(-1), minlength=m)
    cmax = int(count.max())
    shift = max(1, cmax.bit_length())
    # row-major fast path while count + (position sum << shift) provably fits the low 32 bits
    # and the per-row code arrays stay cache-sized; beyond that, the candidate-major general
    # path (one cache line per candidate for all its rows) measured faster (k = 4e5: 2 %)
    if k <= _PACKED_MAX_K and 2 * m < _TWO31 and cmax * (k - 1) < 1 << (32 - shift):
        return _peel_packed(buckets, negative, sketch, count, shift)
    return _peel_general(buckets, negative, sketch)


def _peel_packed(buckets: np.ndarray, negative: np.ndarray, sketch: np.ndarray,
                 count: np.ndarray, shift: int) -> PeelResult:
    """Peeling with one int64 word per bucket: ``value << 32 | count + (position sum << shift)``.

    Row-major throughout (every array op runs along a long contiguous axis).  A candidate
    recovered from pure word ``w`` (value field ``A = a << 32``) changes bucket j by ``w`` if
    its sign there equals its sign in the pure bucket, else by ``w - 2A``: one xor with the own
    sign, one multiply and one add per touched bucket, no per-element sign products."""
    rows, k = buckets.shape
    row_len = sketch.shape[0] // rows
    word, codes = _packed_words(buckets, negative, sketch, shift)
    flat = codes.reshape(-1)
    order_all = np.arange(k, dtype=np.int64)
    mark = np.empty(k, dtype=np.int64)
    cmask = (1 << shift) - 1
    ushift = np.uint32(shift)
    got_pos: list[np.ndarray] = []
    got_a: list[np.ndarray] = []
    got_neg: list[np.ndarray] = []
    pure = np.flatnonzero(count == 1)
    iterations = 0
    while pure.size:
        iterations += 1
        w = np.take(word, pure)
        pos = np.right_shift(w.view(np.uint32)[_LOW::2], ushift, dtype=np.int64)
        pos, w, pure = _one_bucket_per_candidate(pos, w, pure, mark, order_all)
        own = pure // row_len                                # row of the pure bucket
        own *= k
        own += pos
        neg_own = np.take(flat, own)
        neg_own &= 1
        got_pos.append(pos)
        got_a.append(w.view(np.int32)[1 - _LOW::2])
        got_neg.append(neg_own)
        pure = _subtract_packed(word, codes, pos, w, neg_own, cmask)
    values, recovered = _signed_values(k, got_pos, got_a, got_neg)
    word >>= 32
    return PeelResult(values, recovered, word.astype(np.int32).astype(np.int64), iterations)


def _packed_words(buckets: np.ndarray, negative: np.ndarray, sketch: np.ndarray,
                  shift: int) -> tuple[np.ndarray, np.ndarray]:
    """The packed word of every bucket (value, count and position sum of its candidates) and
    the rows x k codes ``bucket << 1 | negative``."""
    rows, k = buckets.shape
    word = np.asarray(sketch, dtype=np.uint32).astype(np.int64)
    word <<= 32
    unit = np.arange(k, dtype=np.int64)
    unit <<= shift
    unit += 1
    codes = np.empty((rows, k), dtype=np.int32)             # bucket << 1 | negative
    for j in range(rows):
        np.add.at(word, buckets[j], unit)
        np.left_shift(buckets[j], 1, out=codes[j], casting="unsafe")
        codes[j] |= negative[j]
    return word, codes


def _one_bucket_per_candidate(pos: np.ndarray, w: np.ndarray, pure: np.ndarray, mark: np.ndarray,
                              order_all: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keep one pure bucket per candidate: a bucket may be listed twice, and a candidate may be
    pure in several rows at once."""
    order = order_all[: pos.size] if pos.size <= order_all.size else np.arange(pos.size)
    mark[pos] = order
    keep = np.take(mark, pos) == order
    if not keep.all():
        kept = np.flatnonzero(keep)
        pos, w, pure = np.take(pos, kept), np.take(w, kept), np.take(pure, kept)
    return pos, w, pure


def _subtract_packed(word: np.ndarray, codes: np.ndarray, pos: np.ndarray, w: np.ndarray,
                     neg_own: np.ndarray, cmask: int) -> np.ndarray:
    """Subtract the candidates recovered at ``pos`` (pure words ``w``, own signs ``neg_own``)
    from every bucket they sit in; return the buckets this leaves pure."""
    rows = codes.shape[0]
    p = pos.size
    g = np.empty((rows, p), dtype=np.int32)
    for j in range(rows):
        np.take(codes[j], pos, out=g[j], mode="clip")   # pos is in range: no buffering
    g ^= neg_own                                          # low bit: sign differs from own
    touched = np.right_shift(g, 1, dtype=np.int64).reshape(-1)
    g &= 1
    two_a = w & _HIGH
    two_a *= -2
    delta = np.multiply(g, two_a, dtype=np.int64)
    delta += w
    np.subtract.at(word, touched, delta.reshape(-1))
    now = np.take(word, touched)
    now &= cmask
    # list the new pure buckets candidate-major, so that a candidate pure in several rows
    # is read from the same bucket as in the candidate-major formulation (this only
    # matters for a corrupted sketch, which then fails the same way)
    hit = np.flatnonzero((now == 1).reshape(rows, p).T)
    cand_i, row_j = np.divmod(hit, rows)
    row_j *= p
    row_j += cand_i
    return np.take(touched, row_j)


def _signed_values(k: int, got_pos: list[np.ndarray], got_a: list[np.ndarray],
                   got_neg: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The recovered values (pure-bucket value times the own sign) scattered to their
    candidates, and which candidates were recovered."""
    values = np.zeros(k, dtype=np.int64)
    recovered = np.zeros(k, dtype=bool)
    if got_pos:
        done = np.concatenate(got_pos)
        v = np.concatenate(got_a).astype(np.int64)
        neg = np.concatenate(got_neg).astype(np.int64)
        v ^= -neg                                             # negate where the sign is -1:
        v += neg                                              # exact, +2**31 included
        values[done] = v
        recovered[done] = True
    return values, recovered


def _peel_general(buckets: np.ndarray, negative: np.ndarray, sketch: np.ndarray) -> PeelResult:
    """Peeling for any k and m (the packed fast path needs the low fields in 32 bits)."""
    rows, k = buckets.shape
    m = sketch.shape[0]
    row_len = m // rows
    state, count, shift = _position_state(buckets, k, m)
    bk = _Buckets(state, shift, sketch)
    del state
    cdt = np.int32 if 2 * m < _TWO31 else np.int64
    codes = np.empty((k, rows), dtype=cdt)                  # k x rows: bucket << 1 | negative
    for j in range(rows):
        np.left_shift(buckets[j], 1, out=codes[:, j], casting="unsafe")
        codes[:, j] |= negative[j]
    mark = np.empty(k, dtype=np.int32)
    own_base = np.arange(0, k * rows, rows, dtype=np.int64)
    got_pos: list[np.ndarray] = []
    got_val: list[np.ndarray] = []
    pure = np.flatnonzero(count == 1)
    iterations = 0
    while pure.size:
        iterations += 1
        pos, a = bk.read(pure)
        # keep one bucket per candidate: a bucket may be listed twice, and a candidate may be
        # pure in several rows at once
        order = np.arange(pos.size, dtype=np.int32)
        mark[pos] = order
        keep = np.take(mark, pos) == order
        if not keep.all():
            kept = np.flatnonzero(keep)
            pos, pure, a = np.take(pos, kept), np.take(pure, kept), np.take(a, kept)
        n = pos.size
        g = np.take(codes, pos, axis=0).reshape(-1)           # n*rows, candidate-major
        sg = (1 - 2 * (g & 1)).astype(np.int32, copy=False)   # +-1 per touched bucket
        s_own = np.take(sg, own_base[:n] + pure // row_len)
        got_pos.append(pos)
        got_val.append(a.astype(np.int64) * s_own)            # exact, +2**31 included
        sv = np.repeat(a * s_own, rows)                       # value mod 2**32 (int32 wraps)
        sv *= sg
        touched = (g >> 1).astype(np.int64)
        bk.subtract(touched, pos, rows, sv)
        pure = bk.pure_among(touched)
    values = np.zeros(k, dtype=np.int64)
    recovered = np.zeros(k, dtype=bool)
    if got_pos:
        done = np.concatenate(got_pos)
        values[done] = np.concatenate(got_val)
        recovered[done] = True
    return PeelResult(values, recovered, bk.residual(), iterations)


def subtract_known(residual: np.ndarray, buckets: np.ndarray, signs: np.ndarray,
                   values: np.ndarray) -> None:
    """Remove candidates with known ``values`` from ``residual`` in place (``buckets``/``signs``
    are k x rows)."""
    np.subtract.at(residual, buckets.ravel(),
                   (signs.astype(np.int8, copy=False) * values[:, None]).ravel())


def residual_is_zero(residual: np.ndarray) -> bool:
    """True iff every bucket is 0 mod 2**32 (what a consistent, fully decoded sketch leaves)."""
    return not np.any(residual & _MASK32)

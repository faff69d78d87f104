"""Seedable, vectorised hashes shared by every worker (same seed -> same functions).

Keys are first mixed with the splitmix64 finaliser (so clustered indices do not yield
structured bucket patterns), then each row uses multiply-shift on uint64: ``h = a*key + b``
(wrapping), bucket = ``((h >> 32) * rows_len) >> 32`` (range reduction without modulo), sign from
bit 31.  All arithmetic is uint64 with wraparound, identical on every platform numpy supports.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)
_ONE = np.uint64(1)
_LOW_WORD = 0 if sys.byteorder == "little" else 1   # index of the low half in a uint32 pair view

#: Hashed-weight check lanes of every codec (the dense codec sends them after sum q, HG-Sketch
#: after sum q and sum i*q).  An error whose entries are all multiples of 2**t passes one
#: random-weight sum mod 2**32 with probability 2**-(32-t); six weights keep even t = 31 (a
#: parity) at 2**-6.  Six 32-bit windows, 5 bits apart, fit in a 64-bit mixed key.
HASHED_CHECKS = 6


def mix64(idx: np.ndarray, salt: int) -> np.ndarray:
    """splitmix64 finaliser of ``idx ^ salt`` (uint64 in, uint64 out)."""
    with np.errstate(over="ignore"):
        z = idx.astype(np.uint64) ^ np.uint64(salt)
        z ^= z >> _S30
        z *= _M1
        z ^= z >> _S27
        z *= _M2
        z ^= z >> _S31
    return z


@lru_cache(maxsize=64)
def _seed_words(seed: int, n: int) -> np.ndarray:
    """The 2n + 1 random words of ``seed`` (read-only): seeding a PCG64 generator takes
    about 0.1 ms, which every allreduce of every tensor would pay again."""
    rng = np.random.Generator(np.random.PCG64(seed))
    words = rng.integers(0, 2**64, size=2 * n + 1, dtype=np.uint64, endpoint=False)
    words.flags.writeable = False
    return words


@dataclass(frozen=True)
class SketchHash:
    """Hash functions of an r-row partitioned sketch with ``row_len`` buckets per row."""

    seed: int
    rows: int
    row_len: int
    checks: int = HASHED_CHECKS   # hashed checksum weights (windows of the mixed key)
    _a: np.ndarray = field(init=False, repr=False, compare=False)
    _b: np.ndarray = field(init=False, repr=False, compare=False)
    _salt: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 0 <= self.checks <= 6:
            raise ValueError(f"checks must be in 0..6 (32-bit windows of a 64-bit key), got {self.checks}")
        n = self.rows
        words = _seed_words(int(self.seed), n)
        object.__setattr__(self, "_a", words[:n] | _ONE)  # odd multipliers
        object.__setattr__(self, "_b", words[n: 2 * n])
        object.__setattr__(self, "_salt", int(words[-1]))

    @property
    def m(self) -> int:
        """Total buckets (rows * row_len)."""
        return self.rows * self.row_len

    def parameters(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(odd multipliers a, offsets b, key salt): what the compiled backend hashes with."""
        return self._a, self._b, self._salt

    def keys(self, idx: np.ndarray) -> np.ndarray:
        """Mixed keys of element indices; pass them to rows()/weights() to hash once."""
        return mix64(idx, self._salt)

    def row(self, keys: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
        """(global bucket index int64, sign +-1 int64) of every key in row j."""
        with np.errstate(over="ignore"):
            h = keys * self._a[j] + self._b[j]
        bucket = (((h >> _S32) * np.uint64(self.row_len)) >> _S32).astype(np.int64)
        bucket += j * self.row_len
        sign = 1 - 2 * ((h >> _S31) & _ONE).astype(np.int64)
        return bucket, sign

    def rows_of(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every row at once, row-major ``(rows, n)``: global bucket ids (int64) and the flags of
        the keys whose sign is -1 (bool).  Same values as ``row(keys, j)`` for each j, in about a
        third of the passes (in-place arithmetic, sign read from the low 32-bit word)."""
        keys = np.asarray(keys, dtype=np.uint64)
        with np.errstate(over="ignore"):
            h = np.multiply.outer(self._a, keys)
            h += self._b[:, None]
        # bit 31 of h is the sign bit of its low 32-bit word
        lo = h.view(np.int32).reshape(self.rows, keys.size, 2)[:, :, _LOW_WORD]
        neg = lo < 0
        h >>= _S32
        h *= np.uint64(self.row_len)
        h >>= _S32
        h += (np.arange(self.rows, dtype=np.uint64) * np.uint64(self.row_len))[:, None]
        return h.view(np.int64), neg

    def check_sums(self, keys: np.ndarray, q: np.ndarray) -> np.ndarray:
        """``sum(weights(keys, j) * q)`` mod 2**64 for every check j (uint64, ``checks`` values).
        Works in blocks with one reused buffer: no temporary larger than a block."""
        qu = np.asarray(q).astype(np.int64, copy=False).view(np.uint64)
        out = np.zeros(self.checks, dtype=np.uint64)
        block = 1 << 16
        buf = np.empty(min(keys.size, block), dtype=np.uint64)
        with np.errstate(over="ignore"):
            for start in range(0, keys.size, block):
                kb, qb = keys[start: start + block], qu[start: start + block]
                w = buf[: kb.size]
                for j in range(self.checks):
                    np.right_shift(kb, np.uint64(5 * j), out=w)
                    w *= qb
                    out[j] += w.sum(dtype=np.uint64)
        return out

    def weights(self, keys: np.ndarray, j: int) -> np.ndarray:
        """Pseudo-random weights of hashed checksum lane j: the mixed key shifted by 5*j bits.
        A sum mod 2**32 only sees a weight's low 32 bits, and the low bits (parity included) of
        the windows are distinct bits of the splitmix64 output, so they behave independently
        (the low bits of ``a*key + b`` would not: all parities would be equal)."""
        if not 0 <= j < self.checks:
            raise IndexError(f"check weight {j} outside 0..{self.checks - 1}")
        return keys >> np.uint64(5 * j) if j else keys

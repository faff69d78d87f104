"""Bitmaps of the two index levels, packed into uint32 lanes (bit j of lane w = item 32*w+j).

Level 0 (BLOCK_INDEX): one bit per block of ``block`` elements, set if the worker has a nonzero
there.  Level 1 (ELEMENT_INDEX): the ``block``-bit element bitmap of every block active in the
*aggregated* level 0, in block order.  Both are OR-aggregated, so the result is the exact union.

Set bits are listed with :func:`set_bits`, which works on 64-bit words and peels their lowest
set bits: ``np.flatnonzero`` on a sparse bitmap pays a mispredicted branch per set bit, which
made it the costliest full-tensor step of the encoder.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import parallel
from .errors import DecodeError

_ONE = np.uint64(1)
#: a compiled support scan: (x, block) -> (packed bitmap bytes, sorted nonzeros, values there)
Scan = Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray, np.ndarray]]
_POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcount(words: np.ndarray) -> np.ndarray:
    """Set bits per uint64 word."""
    if hasattr(np, "bitwise_count"):            # numpy >= 2.0
        return np.bitwise_count(words)
    return _POP8[words.view(np.uint8)].reshape(-1, 8).sum(axis=1, dtype=np.uint8)


def set_bits(words: np.ndarray) -> np.ndarray:
    """Sorted positions (int64) of the set bits of little-endian uint64 ``words`` (bit i of
    word j is position 64*j + i).  Sparse bitmaps: one pass per set bit *rank* within a word
    (a handful at the densities that matter), each over the words that still have bits left;
    dense ones: unpack and scan."""
    count = _popcount(words)
    total = int(count.sum(dtype=np.int64))
    if 8 * total > 64 * words.size:
        # dense (> 1/8 of the bits): one pass per bit rank would repeat over most words
        bits = np.unpackbits(words.view(np.uint8), bitorder="little").view(bool)
        return np.flatnonzero(bits)
    idx = np.flatnonzero(count != 0)
    w = words[idx]
    c = count[idx]
    out = np.empty(total, dtype=np.int64)
    slot = np.cumsum(c, dtype=np.int64)
    slot -= c                                   # output slot of each word's lowest bit
    base = idx << 6
    while w.size:
        low = w & (~w + _ONE)                   # lowest set bit, exact power of two
        out[slot] = base + (np.frexp(low.astype(np.float64))[1] - 1)
        w ^= low
        more = np.flatnonzero(w != 0)
        if more.size < w.size:
            w, slot, base = w[more], slot[more], base[more]
        slot += 1
    return out


def _as_words(packed: np.ndarray) -> np.ndarray:
    """uint8 bitmap -> little-endian uint64 words (zero-padded to whole words)."""
    pad = (-packed.size) % 8
    if pad:
        packed = np.concatenate([packed, np.zeros(pad, dtype=np.uint8)])
    return packed.view("<u8")


def bits_to_lanes(bits: np.ndarray) -> np.ndarray:
    """bool array -> uint32 lanes (little-endian bit order), zero-padded to a whole lane."""
    packed = np.packbits(bits, bitorder="little")
    pad = (-packed.size) % 4
    if pad:
        packed = np.concatenate([packed, np.zeros(pad, dtype=np.uint8)])
    return packed.view("<u4").astype(np.uint32, copy=False)


def _scan(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Packed ``x != 0`` bitmap of a slice (its size a multiple of 64 unless it is the last),
    the positions of its set bits and the values there."""
    packed = np.packbits(x != 0, bitorder="little")
    nz = set_bits(_as_words(packed))
    return packed, nz, x[nz]


class LocalIndex:
    """One worker's support: sorted nonzero indices and its per-block packed element bitmaps.

    The tensor is read once (``x != 0``, then the values at the nonzeros); everything else
    works on the 1/8-size bitmap.  Large tensors are scanned in two halves on two cores."""

    def __init__(self, x: np.ndarray, block: int, scan: Scan | None = None) -> None:
        self.d = x.size
        self.block = block
        self.n_blocks = -(-self.d // block)
        need = -(-self.n_blocks * block // 64) * 8          # whole blocks and whole words
        h = parallel.split_point(self.d, 64)
        if scan is not None:
            # compiled backend: the same bitmap, support and values in one pass
            packed, self.nz, self.values = scan(x, block)
        elif h is None:
            packed = np.packbits(x != 0, bitorder="little")
            if packed.size < need:
                packed = np.concatenate([packed, np.zeros(need - packed.size, dtype=np.uint8)])
            self.nz = set_bits(packed.view("<u8"))
            self.values = x[self.nz]
        else:
            # two halves on two cores, split at a word boundary
            (pa, na, va), (pb, nb, vb) = parallel.both(lambda: _scan(x[:h]),
                                                       lambda: _scan(x[h:]))
            packed = np.concatenate([pa, pb, np.zeros(need - pa.size - pb.size, np.uint8)])
            nb += h
            self.nz = np.concatenate([na, nb])
            #: x at nz (gathered in the same pass)
            self.values = np.concatenate([va, vb])
        #: (n_blocks, block/32) uint32 element bitmaps
        self.block_words = packed[: self.n_blocks * block // 8].view("<u4").reshape(
            self.n_blocks, block // 32)
        if block == 32:
            self.active = self.block_words[:, 0] != 0
        else:
            self.active = self.block_words.any(axis=1)
        self._block_lanes: np.ndarray | None = None

    def block_lanes(self) -> np.ndarray:
        """Level 0 lanes (computed once)."""
        if self._block_lanes is None:
            self._block_lanes = bits_to_lanes(self.active)
        return self._block_lanes

    def element_lanes(self, active_ids: np.ndarray) -> np.ndarray:
        """Level 1 lanes for the aggregated active blocks."""
        return self.block_words[active_ids].astype(np.uint32, copy=False).ravel()

    def active_blocks(self, agg: np.ndarray) -> np.ndarray:
        """Sorted ids of the blocks set in the aggregated BLOCK_INDEX lanes ``agg``, read from
        the lanes (no bool per block).  Raises DecodeError for bits beyond the last block and
        when a block where this worker has nonzeros is missing (corrupted aggregate)."""
        n = self.n_blocks
        if agg.size != -(-n // 32):
            raise DecodeError(f"BLOCK_INDEX aggregate has {agg.size} lanes, "
                              f"expected {-(-n // 32)}")
        if n % 32 and int(agg[-1]) >> (n % 32):
            raise DecodeError(f"aggregated BLOCK_INDEX has bits set beyond its {n} items: "
                              "corrupted aggregate")
        missing = self.block_lanes() & ~agg
        if missing.any():
            j = int(set_bits(_as_words(missing.view(np.uint8)))[0])
            raise DecodeError(
                f"aggregated BLOCK_INDEX lacks block {j} where this worker has nonzeros: "
                "corrupted aggregate")
        return set_bits(_as_words(agg.astype("<u4", copy=False).view(np.uint8)))

    def check_elements_covered(self, mine: np.ndarray, agg: np.ndarray) -> None:
        """Our element bits (the lanes we sent) must be a subset of the OR aggregate."""
        if np.any(mine & ~agg):
            raise DecodeError("aggregated ELEMENT_INDEX lacks elements where this worker has "
                              "nonzeros: corrupted aggregate")


def check_element_index(active_ids: np.ndarray, agg: np.ndarray, block: int) -> None:
    """Raise DecodeError unless the ELEMENT_INDEX aggregate has one bitmap per active block and
    every active block has at least one element bit (both backends' decoders call this)."""
    words = block // 32
    if agg.size != active_ids.size * words:
        raise DecodeError(f"ELEMENT_INDEX aggregate has {agg.size} lanes, "
                          f"expected {active_ids.size * words}")
    lane_nz = agg != 0
    has_bits = lane_nz if words == 1 else lane_nz.reshape(-1, words).any(axis=1)
    if not has_bits.all():
        j = int(active_ids[np.flatnonzero(~has_bits)[0]])
        raise DecodeError(f"block {j} is active in BLOCK_INDEX but has no element bits: "
                          "corrupted aggregate")


def candidates(active_ids: np.ndarray, agg: np.ndarray, block: int, d: int) -> np.ndarray:
    """Sorted global indices of the aggregated support (level 1 union)."""
    check_element_index(active_ids, agg, block)
    pos = set_bits(_as_words(agg.astype("<u4", copy=False).view(np.uint8)))
    shift = block.bit_length() - 1
    idx = (active_ids[pos >> shift] << shift) | (pos & (block - 1))
    if idx.size and idx[-1] >= d:
        raise DecodeError(f"ELEMENT_INDEX marks element {int(idx[-1])} beyond d={d}: "
                          "corrupted aggregate")
    return idx

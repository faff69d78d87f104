"""Bitmaps of the two index levels, packed into uint32 lanes (bit j of lane w = item 32*w+j).

Level 0 (BLOCK_INDEX): one bit per block of ``block`` elements, set if the worker has a nonzero
there.  Level 1 (ELEMENT_INDEX): the ``block``-bit element bitmap of every block active in the
*aggregated* level 0, in block order.  Both are OR-aggregated, so the result is the exact union.
"""

from __future__ import annotations

import numpy as np

from .errors import DecodeError


def bits_to_lanes(bits: np.ndarray) -> np.ndarray:
    """bool array -> uint32 lanes (little-endian bit order), zero-padded to a whole lane."""
    packed = np.packbits(bits, bitorder="little")
    pad = (-packed.size) % 4
    if pad:
        packed = np.concatenate([packed, np.zeros(pad, dtype=np.uint8)])
    return packed.view("<u4").astype(np.uint32, copy=False)


def lanes_to_bits(lanes: np.ndarray, n: int, what: str) -> np.ndarray:
    """uint32 lanes -> n bools; padding bits beyond n must be zero (else the aggregate is bad)."""
    bits = np.unpackbits(lanes.astype("<u4", copy=False).view(np.uint8), bitorder="little")
    if bits[n:].any():
        raise DecodeError(f"aggregated {what} has bits set beyond its {n} items: corrupted aggregate")
    return bits[:n].astype(bool)


class LocalIndex:
    """One worker's support: sorted nonzero indices and its per-block packed element bitmaps."""

    def __init__(self, x: np.ndarray, block: int) -> None:
        self.d = x.size
        self.block = block
        self.n_blocks = -(-self.d // block)
        mask = x != 0
        self.nz = np.flatnonzero(mask)
        packed = np.packbits(mask, bitorder="little")
        need = self.n_blocks * block // 8
        if packed.size < need:
            packed = np.concatenate([packed, np.zeros(need - packed.size, dtype=np.uint8)])
        #: (n_blocks, block/32) uint32 element bitmaps
        self.block_words = packed.view("<u4").reshape(self.n_blocks, block // 32)
        self.active = self.block_words.any(axis=1)

    def block_lanes(self) -> np.ndarray:
        """Level 0 lanes."""
        return bits_to_lanes(self.active)

    def element_lanes(self, active_ids: np.ndarray) -> np.ndarray:
        """Level 1 lanes for the aggregated active blocks."""
        return self.block_words[active_ids].astype(np.uint32, copy=False).ravel()

    def check_blocks_covered(self, global_active: np.ndarray) -> None:
        """Our active blocks must be a subset of the OR aggregate."""
        missing = self.active & ~global_active
        if missing.any():
            j = int(np.flatnonzero(missing)[0])
            raise DecodeError(
                f"aggregated BLOCK_INDEX lacks block {j} where this worker has nonzeros: "
                "corrupted aggregate")

    def check_elements_covered(self, mine: np.ndarray, agg: np.ndarray) -> None:
        """Our element bits (the lanes we sent) must be a subset of the OR aggregate."""
        if np.any(mine & ~agg):
            raise DecodeError("aggregated ELEMENT_INDEX lacks elements where this worker has "
                              "nonzeros: corrupted aggregate")


def candidates(active_ids: np.ndarray, agg: np.ndarray, block: int, d: int) -> np.ndarray:
    """Sorted global indices of the aggregated support (level 1 union)."""
    words = block // 32
    if agg.size != active_ids.size * words:
        raise DecodeError(f"ELEMENT_INDEX aggregate has {agg.size} lanes, "
                          f"expected {active_ids.size * words}")
    # unpack only the non-zero words: cheap for sparse bitmaps, no worse for dense ones
    nzw = np.flatnonzero(agg)
    has_bits = np.zeros(active_ids.size, dtype=bool)
    has_bits[nzw // words] = True
    if not has_bits.all():
        j = int(active_ids[np.flatnonzero(~has_bits)[0]])
        raise DecodeError(f"block {j} is active in BLOCK_INDEX but has no element bits: "
                          "corrupted aggregate")
    bits = np.unpackbits(agg[nzw].astype("<u4").view(np.uint8), bitorder="little").view(bool)
    hit = np.flatnonzero(bits)
    pos = (nzw[hit >> 5] << 5) | (hit & 31)
    shift = block.bit_length() - 1
    idx = (active_ids[pos >> shift] << shift) | (pos & (block - 1))
    if idx.size and idx[-1] >= d:
        raise DecodeError(f"ELEMENT_INDEX marks element {int(idx[-1])} beyond d={d}: "
                          "corrupted aggregate")
    return idx

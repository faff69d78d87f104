"""Levels, ops and the lane layout: the part of the wire protocol the codec shares.

A round of the codec is a list of ``uint32`` lane arrays, each tagged with a :class:`Level`; the
switch combines lanes of one level with the level's :class:`Op` (``LEVEL_OPS``, installed into
``level_table`` by the controller).  Nothing here knows packets.
"""

from __future__ import annotations

import enum

#: Lanes (32-bit words) per packet.  Compile-time constant of the P4 program
#: (``-DDHC_LANES=N`` overrides it there; keep both in step).
DEFAULT_LANES: int = 32

#: Bytes per lane on the wire.
LANE_BYTES: int = 4


class Op(enum.IntEnum):
    """How a switch combines lanes of one level.  Configured per (job, level)."""

    SUM = 0  # two's-complement 32-bit add, wraps
    OR = 1   # bitwise or


class Level(enum.IntEnum):
    """Codec levels carried in ``dhc_h.level``.  The switch maps (job, level) -> op."""

    SCALE = 0         # one-hot exponent of the max magnitude (OR)
    BLOCK_INDEX = 1   # one bit per block of elements (OR)
    ELEMENT_INDEX = 2  # element bitmaps of active blocks (OR)
    VALUE_SKETCH = 3  # invertible count sketch of quantised values (SUM)
    STUCK = 4         # dense values of coordinates peeling could not recover (SUM)
    DENSE = 5         # dense baseline: all quantised values (SUM)


#: The op each level uses; the controller installs exactly this into ``level_table``.
LEVEL_OPS: dict[Level, Op] = {
    Level.SCALE: Op.OR,
    Level.BLOCK_INDEX: Op.OR,
    Level.ELEMENT_INDEX: Op.OR,
    Level.VALUE_SKETCH: Op.SUM,
    Level.STUCK: Op.SUM,
    Level.DENSE: Op.SUM,
}

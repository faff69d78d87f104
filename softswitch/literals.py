"""Integer literals of P4_16 (``8w5``, ``4s3``, ``0x1F``, ``1_000``): one parser for the
front end, the IR lowering and the STF reader."""

from __future__ import annotations

from .types import BitT


def parse_int(text: str) -> tuple[int, BitT | None]:
    """An integer literal: value and its explicit type (``8w5``, ``4s3``) if any."""
    t = text.replace("_", "")
    width_t = None
    for sep, signed in (("w", False), ("s", True)):
        if sep in t and not t.lower().startswith("0x"):
            w, _, rest = t.partition(sep)
            width_t = BitT(int(w), signed)
            t = rest
            break
    low = t.lower()
    if low.startswith("0x"):
        v = int(low[2:], 16)
    elif low.startswith("0b"):
        v = int(low[2:], 2)
    elif low.startswith("0o"):
        v = int(low[2:], 8)
    elif low.startswith("0d"):
        v = int(low[2:], 10)
    else:
        v = int(low, 10)
    return v, width_t

"""Integer literals of P4_16 (``8w5``, ``4s3``, ``0x1F``, ``1_000``): one parser for the
front end, the IR lowering and the STF reader."""

from __future__ import annotations

from ..check.types import BitT

#: Largest integer constant (in bits) the front end takes or folds: bounds memory and time.
MAX_CONST_BITS = 4096
_BASES = {"0x": 16, "0b": 2, "0o": 8, "0d": 10}
#: digits of the largest MAX_CONST_BITS-bit value in each base (1024 hex, 1234 decimal, ...)
_MAX_DIGITS = {b: len(_d) for b, _d in ((16, f"{(1 << MAX_CONST_BITS) - 1:x}"),
                                         (2, f"{(1 << MAX_CONST_BITS) - 1:b}"),
                                         (8, f"{(1 << MAX_CONST_BITS) - 1:o}"),
                                         (10, str((1 << MAX_CONST_BITS) - 1)))}
_MAX_WIDTH_DIGITS = 9


def literal_problem(text: str) -> str | None:
    """Why an integer literal token cannot be a P4 constant here (too many digits for
    ``MAX_CONST_BITS``, a width prefix no type has), or None -- checked on the text, before
    any conversion, so a million-digit literal is a located error, not a conversion failure."""
    t = text.replace("_", "")
    for sep in "ws":
        if sep in t and not t.lower().startswith("0x"):
            w, _, t = t.partition(sep)
            if len(w.lstrip("0")) > _MAX_WIDTH_DIGITS:
                return f"integer literal width {w[:20]}... is too large"
            break
    base = _BASES.get(t[:2].lower(), 10)
    digits = (t[2:] if t[:2].lower() in _BASES else t).lstrip("0")
    if len(digits) > _MAX_DIGITS[base]:
        return f"constant too large: integer literal of {len(digits)} digits exceeds {MAX_CONST_BITS} bits"
    return None


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

"""P4Runtime byte strings (after p4runtime-shell's ``bytes_utils.py``).

P4Runtime carries every match value, action parameter and metadata field as a big-endian byte
string.  Writers use the canonical form the specification asks for (the shortest string, one
zero byte for zero); readers accept leading zero bytes but check the value fits its field.
"""

from __future__ import annotations


def encode(value: int, bitwidth: int = 0, what: str = "value") -> bytes:
    """Canonical byte string of ``value``.

    Parameters
    ----------
    value : int
        A non-negative integer.
    bitwidth : int
        The field's width; 0 checks no width.
    what : str
        Names the field in errors.

    Raises
    ------
    ValueError
        ``value`` is negative or does not fit ``bitwidth`` bits.

    Examples
    --------
    >>> encode(0), encode(0x0A000001, 32)
    (b'\\x00', b'\\n\\x00\\x00\\x01')
    """
    if value < 0:
        raise ValueError(f"{what}: cannot encode negative value {value}")
    if bitwidth and value >> bitwidth:
        raise ValueError(f"{what}: value {value:#x} does not fit in {bitwidth} bits")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def decode(data: bytes, bitwidth: int = 0, what: str = "value") -> int:
    """The integer of a byte string, leading zero bytes accepted.

    Raises
    ------
    ValueError
        ``data`` is empty, or its value does not fit ``bitwidth`` bits (0: no check).

    Examples
    --------
    >>> decode(b"\\x00\\x00\\x05", 8)
    5
    """
    if not data:
        raise ValueError(f"{what}: empty byte string")
    value = int.from_bytes(data, "big")
    if bitwidth > 0 and value >> bitwidth:
        raise ValueError(f"{what}: value 0x{data.hex()} does not fit in {bitwidth} bits")
    return value


__all__ = ["decode", "encode"]

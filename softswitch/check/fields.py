"""Fields of header and struct types as every stage names and sizes them: the attribute a P4
field becomes (``pyfield``; C members derive from it), varbit length members, leaf fields in wire
order, widths and the compile-time ``minSizeInBits()`` family, and the default value's code."""

from __future__ import annotations

import keyword

from .types import BitT, BoolT, EnumT, HeaderT, P4Type, StackT, StructLikeT, VarbitT, bit_width

_RESERVED = {"copy", "_vals", "_inval", "_fields", "_v", "_vbl"}


def pyfield(name: str) -> str:
    """Python attribute for a P4 field (P4 allows names like ``not`` or ``copy``)."""
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in _RESERVED \
            or name.startswith("_vbl"):
        return name + "_f"
    if name[:1].isdigit():  # an array element (``ArrayT``): P4 names never start with a digit
        return "e" + name
    return name


def vbl_name(t: StructLikeT, field: str) -> str:
    """Attribute (Python) or member (C) holding the current length of varbit field ``field``
    (its ``pyfield`` name) of ``t``: a header's one ``_vbl``, ``_vbl_<field>`` in a struct."""
    return "_vbl" if isinstance(t, HeaderT) else f"_vbl_{field}"


def struct_varbits(t: StructLikeT) -> list[str]:
    """The ``pyfield`` names of the varbit fields of a struct (not a header): each has a length."""
    return [] if isinstance(t, HeaderT) else [pyfield(n) for n, ft in t.fields if isinstance(ft, VarbitT)]


def flat_fields(h: StructLikeT) -> list[tuple[str, P4Type]]:
    """Leaf fields of a header in wire order as (Python attribute path, type): a struct-typed
    field of a header (P4_16 allows fixed-width structs there) contributes its own fields."""
    out: list[tuple[str, P4Type]] = []
    for n, ft in h.fields:
        if isinstance(ft, StructLikeT):
            out += [(f"{pyfield(n)}.{sub}", st) for sub, st in flat_fields(ft)]
        else:
            out.append((pyfield(n), ft))
    return out


def cpath(path: str) -> str:
    """C member path of a flat field (``s.a`` -> ``f_s.f_a``)."""
    return ".".join("f_" + p for p in path.split("."))


def field_width(t: P4Type) -> int:
    """Fixed width of a header or struct field: its bits, a varbit's fixed part (0)."""
    return bit_width(t, varbit=0)


def size_in_bits(t: StructLikeT, maximum: bool) -> int:
    """``minSizeInBits()`` (varbit fields count 0) or ``maxSizeInBits()`` (their maximum) of a
    header: compile-time constants (P4_16 1.2.4)."""
    return sum(ft.max_width if maximum and isinstance(ft, VarbitT) else
               size_in_bits(ft, maximum) if isinstance(ft, StructLikeT) else field_width(ft)
               for _f, ft in t.fields)


SIZE_METHODS = {"minSizeInBits": (False, 1), "minSizeInBytes": (False, 8),
                "maxSizeInBits": (True, 1), "maxSizeInBytes": (True, 8)}


def type_size(t: P4Type, method: str) -> int | None:
    """``T.minSizeInBits()`` & co. of a type or value of type ``t`` (a header, struct, stack or
    fixed-width scalar; bytes rounded up, as p4c folds them); None for other types."""
    maximum, unit = SIZE_METHODS[method]
    if isinstance(t, StackT):
        one = type_size(t.elem, method.replace("Bytes", "Bits"))
        bits = None if one is None else one * t.size
    elif isinstance(t, StructLikeT) and type(t).__name__ != "UnionT":
        bits = size_in_bits(t, maximum)
    elif isinstance(t, (BitT, BoolT)) or (isinstance(t, EnumT) and t.underlying is not None):
        bits = field_width(t)
    else:
        return None
    return None if bits is None else -(-bits // unit)


def default_code(t: P4Type, oob: int) -> str:
    if isinstance(t, BoolT):
        return "False"
    if isinstance(t, StructLikeT):
        return f"{t.pyname}()"
    if isinstance(t, StackT):
        return f"_Stack({t.elem.pyname}, {t.size}, {oob})"
    return "0"


__all__ = ["SIZE_METHODS", "cpath", "default_code", "field_width", "flat_fields", "pyfield",
           "size_in_bits", "struct_varbits", "type_size", "vbl_name"]

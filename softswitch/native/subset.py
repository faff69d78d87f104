"""What the native backend builds: the typed IR without values wider than 128 bits, except
header fields (fixed-width or varbit).

The IR itself has no width limit (the python backend runs any width); C scalars are at most
``unsigned __int128``.  A varbit field wider than that (an IPv4 ``varbit<320>`` options field)
or a wider fixed-width header field (a ``bit<336>`` preamble) is a byte array in C
(``cexpr.ctype``): extracting, emitting, assigning, comparing and checksumming it are the uses
allowed here (all P4 allows on a varbit).  Any other wide field, register or
value is refused, naming where the width occurs.
"""

from __future__ import annotations

import dataclasses

from ..check.types import VarbitT
from ..ir import nodes as ir
from ..ir.common import Unsupported, irtype

MAX_WIDTH = 128
_PACKING = ("hash", "verify_checksum", "update_checksum", "verify_checksum_with_payload",
            "update_checksum_with_payload")


def check(p: ir.Program) -> None:
    """Raise ``Unsupported`` for the first width above 128 bits in ``p`` that C cannot hold."""
    for t in p.headers:
        for fname, ft in t.fields:
            it = irtype(ft)
            if isinstance(ft, VarbitT) or isinstance(it, ir.Bits):
                continue  # a wide one is a byte array; its uses are checked below
            _type(it, f"field {t.name}.{fname}")
    for x in p.externs.values():
        if x.kind == "register" and x.width > MAX_WIDTH:
            raise Unsupported(f"register {x.name}: widths above {MAX_WIDTH} bits")
    owners = [("control", b.name, b) for b in p.blocks.values()]
    owners += [("action", a.name, a) for a in p.actions.values()]
    owners += [("function", f.name, f) for f in p.functions.values()]
    owners += [("table", t.name, t) for t in p.tables.values()]
    for kind, name, node in owners:
        _walk(node, f"in {kind} {name}", False)


def wide(t) -> bool:
    return isinstance(t, ir.Bits) and t.width > MAX_WIDTH


def _type(t, where: str) -> None:
    if wide(t):
        raise Unsupported(f"bit<{t.width}> {where}: widths above {MAX_WIDTH} bits")


def _walk(x, where: str, field_ok: bool) -> None:
    """``field_ok``: the parent is one of the uses of a wide varbit field C supports."""
    if isinstance(x, (list, tuple)):
        for y in x:
            _walk(y, where, field_ok)
    elif isinstance(x, ir.Field) and wide(x.t):
        if not field_ok:
            raise Unsupported(f"field {x.name} wider than {MAX_WIDTH} bits {where}: only "
                              "extracted, emitted, assigned, compared and checksummed here")
        _walk(x.base, where, False)
    elif isinstance(x, (ir.Bits, ir.Bool, ir.Comp, ir.Pkt, ir.Stack)):
        _type(x, where)
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        ok = isinstance(x, (ir.Assign, ir.VarbitLength, ir.StructInit)) \
            or isinstance(x, ir.Binary) and x.op in ("==", "!=") \
            or isinstance(x, ir.ExternCall) and x.name in _PACKING
        for f in dataclasses.fields(x):
            _walk(getattr(x, f.name), where, ok)


__all__ = ["check", "wide", "MAX_WIDTH"]

"""What the native backend builds: the typed IR without values wider than 128 bits.

The IR itself has no width limit (the python backend runs any width); C values are at most
``unsigned __int128``, so a program with a wider field, register or value is refused here,
naming where the width occurs.
"""

from __future__ import annotations

import dataclasses

from ..ir import nodes as ir
from ..ir.common import Unsupported, irtype

MAX_WIDTH = 128


def check(p: ir.Program) -> None:
    """Raise ``Unsupported`` for the first width above 128 bits in ``p``."""
    for t in p.headers:
        for fname, ft in t.fields:
            it = irtype(ft)
            if isinstance(it, ir.Bits) and it.width > MAX_WIDTH:
                raise Unsupported(f"{ft} field {t.name}.{fname}: widths above {MAX_WIDTH} bits")
            _type(it, f"field {t.name}.{fname}")
    for x in p.externs.values():
        if x.kind == "register" and x.width > MAX_WIDTH:
            raise Unsupported(f"register {x.name}: widths above {MAX_WIDTH} bits")
    owners = [("control", b.name, b) for b in p.blocks.values()]
    owners += [("action", a.name, a) for a in p.actions.values()]
    owners += [("function", f.name, f) for f in p.functions.values()]
    owners += [("table", t.name, t) for t in p.tables.values()]
    for kind, name, node in owners:
        _walk(node, f"in {kind} {name}")


def _type(t, where: str) -> None:
    if isinstance(t, ir.Bits) and t.width > MAX_WIDTH:
        raise Unsupported(f"bit<{t.width}> {where}: widths above {MAX_WIDTH} bits")


def _walk(x, where: str) -> None:
    if isinstance(x, (list, tuple)):
        for y in x:
            _walk(y, where)
    elif isinstance(x, (ir.Bits, ir.Bool, ir.Comp, ir.Pkt, ir.Stack)):
        _type(x, where)
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            _walk(getattr(x, f.name), where)


__all__ = ["check", "MAX_WIDTH"]

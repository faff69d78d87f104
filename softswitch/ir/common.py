"""Helpers shared by the lowering passes: the error for constructs the IR lacks, IR types of
front-end types, literal values before they meet a width, scopes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..layout import pyfield
from ..types import (
    BitT,
    BoolT,
    EnumT,
    ErrorT,
    HeaderT,
    P4Type,
    StackT,
    StructLikeT,
    StructT,
    UnionT,
    VarbitT,
)
from . import nodes as ir


class Unsupported(Exception):
    """A construct the typed IR (and so the native backend) does not handle."""


@dataclass
class _Lit:
    """An infinite-precision integer (type ``int``) before it meets a width."""

    value: int


def irtype(t: P4Type, where: str = "") -> ir.IRType:
    if isinstance(t, BitT):
        return ir.Bits(t.width, t.signed)
    if isinstance(t, BoolT):
        return ir.Bool()
    if isinstance(t, ErrorT):
        return ir.Bits(32)
    if isinstance(t, EnumT):
        return ir.Bits(t.underlying.width, t.underlying.signed) if t.underlying is not None else ir.Bits(32)
    if getattr(t, "name", None) in ("packet_in", "packet_out") and type(t).__name__ == "NamedT":
        return ir.Pkt(t.name)
    if isinstance(t, VarbitT):
        return ir.Bits(t.max_width)  # the value; its current length is the header's _vbl
    if isinstance(t, StackT):
        irtype(t.elem, f"{where} (stack element)")
        return ir.Stack(t.elem, t.size)
    if isinstance(t, StructLikeT) and type(t).__name__ in ("HeaderT", "StructT", "UnionT", "ArrayT"):
        for fname, ft in t.fields:
            irtype(ft, f"field {t.name}.{fname}")
        return ir.Comp(t)
    raise Unsupported(f"type {t} {where}".strip())


def varbit_length(f: ir.Field) -> ir.VarbitLength:
    """The current length of the varbit field ``f`` (of a header or a struct)."""
    return ir.VarbitLength(ir.Bits(32), f)


def length_of(e: ir.Expr) -> ir.Expr:
    """The current length a varbit value ``e`` carries: its field's, through ``?:``; 0 for a
    default value."""
    if isinstance(e, ir.Field):
        return varbit_length(e)
    if isinstance(e, ir.Mux):
        return ir.Mux(ir.Bits(32), e.cond, length_of(e.a), length_of(e.b))
    return ir.Const(ir.Bits(32), 0)


def varbit_var(boxes: dict[int, StructT], kind: str, name: str, t: VarbitT) -> tuple[ir.Ref, ir.Field]:
    """A variable of type ``varbit<N>``: the field ``v`` of a struct of its own (one per ``N``,
    kept in ``boxes``), so its current length lives beside its value as in any struct field
    (BMv2 keeps both in a field).  Returns the variable and the field that stands for it."""
    box = varbit_box(boxes, t)
    ref = ir.Ref(ir.Comp(box), kind, name)
    ref.ptype = box
    f = ir.Field(irtype(t), ref, "v")
    f.ptype = t
    return ref, f


def varbit_box(boxes: dict[int, StructT], t: VarbitT) -> StructT:
    """The struct that holds a ``varbit<N>`` variable or ``in`` parameter (one per ``N``)."""
    box = boxes.get(t.max_width)
    if box is None:
        box = boxes[t.max_width] = StructT(f"varbit<{t.max_width}>", [("v", t)], pyname=f"VB_{t.max_width}")
    return box


def varbit_arg(boxes: dict[int, StructT], e: ir.Expr, t: VarbitT) -> ir.StructInit:
    """The argument of an ``in`` parameter of type ``varbit<N>``: its struct, with the value's
    current length."""
    return ir.StructInit(ir.Comp(varbit_box(boxes, t)), [e], [length_of(e)])


def init_varbit(f: ir.Field, val: ir.Expr) -> list[ir.Stmt]:
    """``f = val`` for a varbit field: the value and its current length (BMv2's assign_VL)."""
    return [ir.Assign(f, val), ir.Assign(varbit_length(f), length_of(val))]


def fresh_out(t: ir.IRType) -> ir.Const:
    """The value an `out` scalar parameter starts with: p4c makes it a fresh local, a field of
    BMv2's zero-initialised per-packet metadata."""
    return ir.Const(t, 0)


def fresh_stmts(e: ir.Expr, t, scalars: bool = True) -> list[ir.Stmt]:
    """Statements that make the header, union, stack or struct ``e`` what a new local of type
    ``t`` is in p4c's output: headers invalid and (``scalars``) scalar fields 0.  Without
    ``scalars`` they are p4c's resets of an ``out`` argument (``DoResetHeaders``)."""
    if isinstance(t, HeaderT):
        return [ir.SetValid(e, False)]
    if isinstance(t, StackT):
        return [s for i in range(t.size) for s in fresh_stmts(
            ir.StackElem(ir.Comp(t.elem), e, ir.Const(ir.Bits(32), i), "index"), t.elem, scalars)]
    if not isinstance(t, (StructT, UnionT)):
        return []
    out: list[ir.Stmt] = []
    for f, ft in t.fields:
        if isinstance(ft, StructLikeT):
            out += fresh_stmts(ir.Field(ir.Comp(ft), e, pyfield(f)), ft, scalars)
        elif isinstance(ft, StackT):
            out += fresh_stmts(ir.Field(ir.Stack(ft.elem, ft.size), e, pyfield(f)), ft, scalars)
        elif scalars:
            it = irtype(ft, f"field {f}")
            out.append(ir.Assign(ir.Field(it, e, pyfield(f)), ir.Const(it, 0)))
            if isinstance(ft, VarbitT):  # and its current length
                out.append(ir.Assign(varbit_length(out[-1].lhs), ir.Const(ir.Bits(32), 0)))
    return out


def instance_temp_in(prm: ir.Param, arg: ir.Expr, tmp: ir.Expr) -> list[ir.Stmt]:
    """What p4c's inliner does to the temporary of a sub-control's compound argument before an
    apply: ``in``/``inout`` assign the argument (BMv2's assignment), ``out`` only makes its
    headers invalid (its scalar fields keep what the previous apply left)."""
    if prm.direction != "out":
        return [ir.Assign(tmp, arg)]
    t = prm.t.t if isinstance(prm.t, ir.Comp) else StackT(prm.t.elem, prm.t.size)
    return fresh_stmts(tmp, t, False)


def _pos(node) -> str:
    meta = getattr(node, "meta", None)
    line = getattr(node, "line", None) or (
        getattr(meta, "line", None) if meta is not None and not meta.empty else None
    )
    return f" (line {line})" if line else ""


def union_siblings(e) -> list:
    """The other members when ``e`` is a member of a header union (making it valid invalidates them)."""
    if not isinstance(e, ir.Field) or not isinstance(e.base.t, ir.Comp) or not isinstance(e.base.t.t, UnionT):
        return []
    ut = e.base.t.t
    return [ir.Field(ir.Comp(ft), e.base, pyfield(f)) for f, ft in ut.fields if pyfield(f) != e.name]


def union_valid(e) -> ir.Expr:
    """``u.isValid()`` of a header union: some member is valid."""
    out = None
    for f, ft in e.t.t.fields:
        v = ir.Valid(ir.Bool(), ir.Field(ir.Comp(ft), e, pyfield(f)))
        out = v if out is None else ir.Binary(ir.Bool(), "||", out, v)
    return out


class _Scope:
    def __init__(self, parent: _Scope | None, names: dict[str, Any]):
        self.parent = parent
        self.names = names

    def lookup(self, name: str):
        s = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None


def _qualify(block: str, local: str, ann: dict) -> str:
    n = ann.get("name")
    prefix = f"{block}." if block else ""
    if n and isinstance(n[0], str):
        return n[0][1:] if n[0].startswith(".") else f"{prefix}{n[0]}"
    return f"{prefix}{local}"



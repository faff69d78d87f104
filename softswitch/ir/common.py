"""Helpers shared by the lowering passes: the error for constructs the IR lacks, IR types of
front-end types, literal values before they meet a width, scopes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..check.fields import pyfield
from ..check.types import (
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


def holds_stack(t) -> bool:
    """Whether the struct ``t`` (or a struct in it) has a header-stack field."""
    if isinstance(t, StackT):
        return True
    return type(t) is StructT and any(holds_stack(ft) for _f, ft in t.fields)


def _path(e) -> tuple | None:
    """The storage ``e`` names: its variable and field names (a stack element: the whole
    stack); None for what is not a variable or a part of one."""
    names: list[str] = []
    while True:
        if isinstance(e, ir.Field):
            names.append(e.name)
            e = e.base
        elif isinstance(e, ir.StackElem):
            names = []
            e = e.base
        elif isinstance(e, (ir.Valid, ir.StackInfo)):
            e = e.base
        elif isinstance(e, ir.VarbitLength):
            e = e.field
        elif isinstance(e, ir.Ref):
            return ((e.kind, e.name), *reversed(names))
        else:
            return None


def _reads(x, out: list) -> None:
    """The storage (``_path``) every outermost variable, field or element in ``x`` reads."""
    if isinstance(x, (ir.Ref, ir.Field, ir.StackElem, ir.Valid, ir.StackInfo, ir.VarbitLength)):
        out.append(_path(x))
        while not isinstance(x, ir.Ref) and x is not None:  # and every index on the way
            if isinstance(x, ir.StackElem):
                _reads(x.index, out)
            x = x.field if isinstance(x, ir.VarbitLength) else getattr(x, "base", None)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _reads(y, out)
    elif isinstance(x, ir.Expr):
        for f in dataclasses.fields(x):
            _reads(getattr(x, f.name), out)


def may_alias(lhs: ir.Expr, rhs: ir.Expr) -> bool:
    """Whether ``rhs`` may read what ``lhs`` names (one a part of the other), as p4c's
    ``ReadsWrites::mayAlias``."""
    dst = _path(lhs)
    reads: list = []
    _reads(rhs, reads)
    return dst is None or any(r is None or r[:len(dst)] == dst or dst[:len(r)] == r for r in reads)


def struct_assigns(lhs: ir.Expr, rhs: ir.StructInit, t: StructT) -> list[ir.Stmt] | None:
    """``lhs = {...}`` for a struct holding a header stack, as p4c's ``CopyStructures``: field by
    field, a stack given by ``...`` or a list expression element by element (it keeps its
    ``nextIndex``), a stack value with BMv2's stack assignment.  None when the expression reads
    ``lhs``'s variable: p4c's ``RemoveAliases`` goes through a temporary then."""
    if may_alias(lhs, rhs):
        return None
    out: list[ir.Stmt] = []
    for i, ((f, ft), x) in enumerate(zip(t.fields, rhs.items, strict=True)):
        if isinstance(ft, StackT):
            dst = ir.Field(ir.Stack(ft.elem, ft.size), lhs, pyfield(f))
        elif isinstance(ft, StructLikeT):
            dst = ir.Field(ir.Comp(ft), lhs, pyfield(f))
        else:
            dst = ir.Field(irtype(ft, f"field {f}"), lhs, pyfield(f))
        if isinstance(x, ir.Default) and isinstance(ft, (StackT, StructLikeT)):
            out += fresh_stmts(dst, ft)
        elif isinstance(x, ir.StackInit):
            out += [ir.Assign(ir.StackElem(y.t, dst, ir.Const(ir.Bits(32), k), "index"), y)
                    for k, y in enumerate(x.items)]
        elif isinstance(x, ir.StructInit) and holds_stack(ft):
            out += struct_assigns(dst, x, ft) or [ir.Assign(dst, x)]
        else:
            out.append(ir.Assign(dst, x))
            if isinstance(ft, VarbitT):  # BMv2's assign_VL: the length too
                ln = rhs.lens[i] if rhs.lens and rhs.lens[i] is not None else ir.Const(ir.Bits(32), 0)
                out.append(ir.Assign(varbit_length(dst), ln))
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



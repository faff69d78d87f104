"""Lowering of call statements: tables, actions, functions, sub-controls, packet and header
methods, extern methods and v1model extern functions."""

from __future__ import annotations

from dataclasses import dataclass

from lark import Tree

from ..check.fields import pyfield
from ..check.types import (
    BitT,
    BoolT,
    EnumT,
    HeaderT,
    ListT,
    StackT,
    StructLikeT,
    StructT,
    UnionT,
    VarbitT,
    bit_width,
)
from ..frontend.inlining import substitutes_arguments
from . import nodes as ir
from .common import (
    Unsupported,
    _Lit,
    _pos,
    fresh_out,
    fresh_stmts,
    init_varbit,
    irtype,
    length_of,
    union_siblings,
    varbit_length,
    varbit_var,
)

_CHECKSUMS = (
    "verify_checksum",
    "verify_checksum_with_payload",
    "update_checksum",
    "update_checksum_with_payload",
)


def _split(n: Tree):
    if n.data == "tcall":
        callee, _tlt, targs, args = n.children
    else:
        callee, args = n.children
        targs = None
    return callee, [a for a in (args.children if args is not None else []) if a is not None], targs


def lower_call_stmt(g, n: Tree) -> list[ir.Stmt]:
    callee, args, targs = _split(n)
    if isinstance(callee, Tree) and callee.data == "member":
        base, method = callee.children[0], str(callee.children[1].children[0])
        if isinstance(base, Tree) and base.data == "ident":
            ent = g.scope.lookup(str(base.children[-1]))
            if ent is not None and ent[0] == "table":
                return [ir.TableApply(ent[1])]
            if ent is not None and ent[0] == "extern":
                return _extern_method(g, g.low.externs[ent[1]], method, args, n)
            if ent is not None and ent[0] == "control":
                pre, ca = _control_apply(g, ent[1], args, str(base.children[-1]))
                reset = _reset_out_args(g.low.blocks[ent[1]], ca)
                return pre + reset + [ca] + _union_fixups(ca.args)
            if ent is not None and ent[0] == "packet":
                return _packet(g, method, args, n, targs)
        e, t = g.expr(base)
        if isinstance(t, HeaderT) and method in ("setValid", "setInvalid"):
            sibs = union_siblings(e) if method == "setValid" else []
            return [ir.SetValid(e, method == "setValid")] + [ir.SetValid(x, False) for x in sibs]
        if isinstance(t, UnionT) and method == "setInvalid":
            return [ir.SetValid(ir.Field(ir.Comp(ft), e, pyfield(f)), False) for f, ft in t.fields]
        if isinstance(t, (HeaderT, UnionT)) and method == "isValid":
            return []
        if isinstance(t, StackT) and method in ("push_front", "pop_front"):
            return [ir.StackShift(e, g._const_int(args[0]), method == "push_front")]
        raise Unsupported(f"method {method} of {t}{_pos(n)}")
    name = str(callee.children[-1])
    ent = g.scope.lookup(name)
    if ent is not None and ent[0] == "action":
        info = ent[1]
        if info.name in g.low.unlowered:
            raise g.low.unlowered[info.name]
        pre, vals, outs, post = _bind(g, info.params, args)
        return pre + [ir.ActionCall(info.name, vals, outs, post)] + _union_fixups(outs)
    if name in g.low.functions:
        finfo = g.low.p.functions[name]
        pre, vals, outs, post = _bind(g, finfo.params, args)
        return pre + [ir.FuncCall(name, vals, outs)] + _union_fixups(outs) + post
    return _v1(g, name, args, targs, n)


def _reset_out_args(blk: ir.Block, ca: ir.ControlApply) -> list[ir.Stmt]:
    """p4c's inliner resets an `out` argument it substitutes (DoResetHeaders): its headers
    become invalid.  A temporary is reset instead (the backends' copies)."""
    if not ca.substituted:
        return []
    out: list[ir.Stmt] = []
    for p, a in zip(blk.params, ca.args, strict=True):
        if p.direction == "out" and isinstance(a.t, ir.Comp):
            out += fresh_stmts(a, a.t.t, False)
        elif p.direction == "out" and isinstance(a.t, ir.Stack):
            out += fresh_stmts(a, StackT(a.t.elem, a.t.size), False)
    return out


def _union_fixups(args) -> list[ir.Stmt]:
    """After a call given a header union member by reference: a valid member invalidates the
    others (BMv2 tracks union membership on the header; the callee cannot see the union)."""
    out: list[ir.Stmt] = []
    for a in args:
        sibs = union_siblings(a) if a is not None and isinstance(a.t, ir.Comp) else []
        if sibs:
            out.append(ir.If(ir.Valid(ir.Bool(), a), [ir.SetValid(x, False) for x in sibs], []))
    return out


def varbit_through_box(g, p, a) -> tuple[list[ir.Stmt], ir.Ref, list[ir.Stmt]]:
    """An `out`/`inout` argument of type ``varbit<N>`` (or a sub-control's `in` one): p4c inlines
    the call, so the argument's current length flows in (not for ``out``) and the callee's flows
    back out (not for ``in``).  Here it travels in a local of the parameter's struct
    (``common.varbit_var``): declared (and given the argument's value and length unless ``out``)
    before the call; returns those statements, the local, and the copy back with its length."""
    lv = g.lvalue(a) if p.direction != "in" else g.expr_to(a, p.type)
    ref, f = varbit_var(g.low.varbit_boxes, "local", g.fresh("vb_arg"), p.type)
    pre: list[ir.Stmt] = [ir.VarDecl(ref.name, ref.t, None)]
    if p.direction != "out":
        pre += init_varbit(f, lv)
    return pre, ref, init_varbit(lv, f) if p.direction != "in" else []


def _bind(g, params, args):
    """The argument values and copy-out targets of an action or function call, with the
    statements a varbit `out`/`inout` argument needs before and after it."""
    vals, outs, pre, post = [], [], [], []
    for p, a in zip(params, args, strict=True):
        if p.direction in ("out", "inout") and isinstance(p.type, VarbitT):
            before, box, after = varbit_through_box(g, p, a)
            pre += before
            post += after
            vals.append(box)
            outs.append(box)
        elif p.direction in ("out", "inout"):
            lv = g.lvalue(a)
            scalar = not isinstance(lv.t, (ir.Comp, ir.Stack))
            vals.append(fresh_out(lv.t) if p.direction == "out" and scalar else lv)
            outs.append(lv)
        else:
            vals.append(g.arg_to(a, p.type))
            outs.append(None)
    return pre, vals, outs, post


def _control_apply(g, qname: str, args, inst: str):
    """A sub-control's apply and the statements before it (a varbit argument travels through a
    struct, ``varbit_through_box``, copied back by ``ControlApply.after``)."""
    blk = g.low.blocks[qname]
    vals, outs, pre, post = [], [], [], []
    subst = substitutes_arguments(g.tree, inst, args)
    ptypes = g.low.block_ptypes.get(qname, [None] * len(blk.params))
    for p, a, pt in zip(blk.params, args, ptypes, strict=True):
        if isinstance(pt, VarbitT):  # an `in` one too: a struct the instance can point at
            before, box, after = varbit_through_box(g, _VbParam(p.direction, pt), a)
            pre += before
            post += after
            vals.append(box)
            outs.append(box if after else None)
        elif p.direction in ("out", "inout"):
            lv = g.lvalue(a)
            scalar = not isinstance(lv.t, (ir.Comp, ir.Stack))
            # not substituted: p4c's temporary for an `out` scalar is one per instance, shared by
            # its apply sites, so it starts with what the previous apply left (None: no copy-in)
            vals.append(None if p.direction == "out" and scalar and not subst else lv)
            outs.append(lv)
        else:
            pt = (
                BitT(p.t.width, p.t.signed)
                if isinstance(p.t, ir.Bits)
                else BoolT()
                if isinstance(p.t, ir.Bool)
                else p.t.t
            )
            vals.append(g.expr_to(a, pt))
            outs.append(None)
    return pre, ir.ControlApply(qname, vals, outs, subst, after=post)


@dataclass
class _VbParam:
    direction: str
    type: VarbitT


def _packet(g, method: str, args, n, targs=None) -> list[ir.Stmt]:
    if method == "extract":
        a = args[0]
        vb = g.expr_to(args[1], BitT(32)) if len(args) == 2 else None
        if isinstance(a, Tree) and a.data == "member" and str(a.children[1].children[0]) == "next":
            st, _t = g.expr(a.children[0])
            return [ir.ExtractNext(st, varbits=vb)]
        inner = a.children[0] if isinstance(a, Tree) and a.data == "member" else None
        if isinstance(inner, Tree) and inner.data == "member" \
                and str(inner.children[1].children[0]) == "next":
            st, stt = g.expr(inner.children[0])
            if isinstance(stt, StackT) and isinstance(stt.elem, UnionT):
                return [ir.ExtractNext(st, pyfield(str(a.children[1].children[0])), vb)]
        e, t = g.expr(a)
        return [ir.Extract(e, vb)] + [ir.SetValid(x, False) for x in union_siblings(e)]
    if method == "advance":
        return [ir.Advance(g.expr_to(args[0], BitT(32)))]
    if method == "emit":
        e, t = g.expr(args[0])
        return _emits(e, t, n)
    if method == "lookahead":
        width = bit_width(g.d.resolve_type(targs.children[0]))
        return [ir.Advance(ir.Const(ir.Bits(32), width), peek=True)]
    raise Unsupported(f"packet method {method}{_pos(n)}")


def _emits(e, t, n) -> list[ir.Stmt]:
    if isinstance(t, HeaderT):
        return [ir.Emit(e)]
    if isinstance(t, StackT):
        out = []
        for i in range(t.size):
            out += _emits(ir.StackElem(ir.Comp(t.elem), e, ir.Const(ir.Bits(32), i), "index"), t.elem, n)
        return out
    if isinstance(t, (StructT, UnionT)):  # a union: its valid member, if any
        out: list[ir.Stmt] = []
        for fname, ft in t.fields:
            ftype = ir.Comp(ft) if isinstance(ft, StructLikeT) else ir.Stack(ft.elem, ft.size) \
                if isinstance(ft, StackT) else ir.Bits(1)
            out += _emits(ir.Field(ftype, e, pyfield(fname)), ft, n)
        return out
    raise Unsupported(f"emit of {t}{_pos(n)}")


def _index(g, node, want):
    e, t = g.expr(node)
    if isinstance(e, _Lit):
        return g.const(e.value, want or BitT(32))
    return e


def _extern_method(g, x: ir.Extern, method: str, args, n) -> list[ir.Stmt]:
    inst = g.low.p.extern_insts[x.name]
    if x.kind == "register":
        want = inst.type_args[1] if len(inst.type_args) > 1 else None
        if method == "read":
            return [ir.ExternCall("register.read", x.name, [_index(g, args[1], want)], g.lvalue(args[0]))]
        et = BitT(x.width, x.signed)
        return [ir.ExternCall("register.write", x.name, [_index(g, args[0], want), g.expr_to(args[1], et)])]
    if x.kind == "counter":
        want = inst.type_args[0] if inst.type_args else None
        return [ir.ExternCall("counter.count", x.name, [_index(g, args[0], want)])]
    if x.kind == "direct_counter":
        return []
    if x.kind == "meter":
        want = inst.type_args[0] if inst.type_args else None
        return [ir.ExternCall("meter.execute", x.name, [_index(g, args[0], want)], g.lvalue(args[1]))]
    if x.kind == "direct_meter":
        return [ir.ExternCall("direct_meter.read", x.name, [], g.lvalue(args[0]))]
    raise Unsupported(f"{x.kind}.{method}{_pos(n)}")


def flatten(g, e, t, n, guard: ir.Expr | None = None) -> list:
    """Scalars of a field list (list expression, struct or header), MSB first, as
    (expr, width, guard): ``guard`` is the validity of the header holding the field, or None.
    BMv2 builds a calculation's input from the fields of valid headers only (``BufBuilder``),
    so a hash or checksum leaves out the fields of an invalid header."""
    if isinstance(t, ListT):
        out = []
        for x, xt in e:
            out += flatten(g, x, xt, n, guard)
        return out
    if isinstance(t, StructLikeT):
        if isinstance(t, HeaderT):
            guard = ir.Valid(ir.Bool(), e)
        out = []
        for fname, ft in t.fields:
            if isinstance(ft, VarbitT):  # contributes its current length
                f = ir.Field(irtype(ft), e, pyfield(fname))
                out.append((f, ("varbit", varbit_length(f), ft.max_width), guard))
                continue
            ftype = ir.Stack(ft.elem, ft.size) if isinstance(ft, StackT) else ir.Comp(ft) \
                if isinstance(ft, StructLikeT) else _scalar_t(ft)
            out += flatten(g, ir.Field(ftype, e, pyfield(fname)), ft, n, guard)
        return out
    if isinstance(t, VarbitT):  # a header's field counts only while the header is valid
        hdr = isinstance(e, ir.Field) and isinstance(e.base.t, ir.Comp) and isinstance(e.base.t.t, HeaderT)
        return [(e, ("varbit", length_of(e), t.max_width), ir.Valid(ir.Bool(), e.base) if hdr else guard)]
    if isinstance(t, BoolT):
        return [(ir.Cast(ir.Bits(1), e), 1, guard)]
    if isinstance(t, StackT):  # every element's fields, as the Python generator does
        out = []
        for i in range(t.size):
            elem = ir.StackElem(ir.Comp(t.elem), e, ir.Const(ir.Bits(32), i), "index")
            out += flatten(g, elem, t.elem, n, guard)
        return out
    if isinstance(e, _Lit):
        raise Unsupported(f"integer literal in a field list{_pos(n)}")
    if guard is None and isinstance(e, ir.Field) and isinstance(e.base.t, ir.Comp) \
            and isinstance(e.base.t.t, HeaderT):
        guard = ir.Valid(ir.Bool(), e.base)  # a header's field named on its own
    return [(e, e.t.width, guard)]


def _scalar_t(ft):
    if isinstance(ft, BoolT):
        return ir.Bool()
    if isinstance(ft, BitT):
        return ir.Bits(ft.width, ft.signed)
    if isinstance(ft, EnumT):
        u = ft.underlying
        return ir.Bits(u.width, u.signed) if u is not None else ir.Bits(32)
    return ir.Bits(32)


def _algo(g, node) -> str:
    e, t = g.expr(node)
    return t.members[e.value]


def _fl_names(g, node) -> tuple[str, ...]:
    items = node.children[0].children if isinstance(node, Tree) and node.data == "list_expr" else [node]
    names: list[str] = []
    for it in items:
        if it is None:
            continue
        _e, t = g.expr(it)
        if isinstance(it, Tree) and it.data == "member":
            names.append(pyfield(str(it.children[1].children[0])))
        else:
            names += [pyfield(f) for f, _ in t.fields]
    return tuple(names)


def _fl_id(g, names: tuple[str, ...]) -> int:
    fl = g.low.field_lists
    for k, v in fl.items():
        if k >= 1 << 20 and tuple(v) == names:
            return k
    k = (1 << 20) + len([x for x in fl if x >= 1 << 20])
    fl[k] = list(names)
    return k


def _v1(g, name: str, args, targs, n) -> list[ir.Stmt]:
    if name == "mark_to_drop":
        if not args:  # a top-level action's: BMv2's drop acts on the pass's standard_metadata
            return [ir.ExternCall(name, None, [])]
        return [ir.ExternCall(name, None, [g.expr(args[0])[0]])]
    if name == "verify":
        return [ir.Verify(g.expr(args[0])[0], g.expr(args[1])[0])]
    if name == "hash":
        out, ot = g.expr(args[0])
        base = g.expr_to(args[2], ot)
        d, dt = g.expr(args[3])
        mx, mt = g.expr(args[4])
        if isinstance(mx, _Lit):
            mx = g.const(mx.value, BitT(max(mx.value.bit_length(), 1)))
        return [ir.ExternCall(name, None, [base, flatten(g, d, dt, n), mx], out, {"algo": _algo(g, args[1])})]
    if name in _CHECKSUMS:
        cond, _ = g.expr(args[0])
        d, dt = g.expr(args[1])
        ck, _ = g.expr(args[2])
        return [ir.ExternCall(name, None, [cond, flatten(g, d, dt, n)], ck, {"algo": _algo(g, args[3])})]
    if name in ("clone", "clone_preserving_field_list"):
        ty, _ = g.expr(args[0])
        sess = g.expr_to(args[1], BitT(32))
        fl = g._const_int(args[2]) if len(args) == 3 else -1
        return [ir.ExternCall("clone", None, [ty, sess], None, {"fl": fl})]
    if name == "clone3":
        ty, _ = g.expr(args[0])
        sess = g.expr_to(args[1], BitT(32))
        return [ir.ExternCall("clone", None, [ty, sess], None, {"fl": _fl_id(g, _fl_names(g, args[2]))})]
    if name in ("resubmit", "recirculate"):
        return [ir.ExternCall(name, None, [], None, {"fl": _fl_id(g, _fl_names(g, args[-1]))})]
    if name in ("resubmit_preserving_field_list", "recirculate_preserving_field_list"):
        return [ir.ExternCall(name.split("_")[0], None, [], None, {"fl": g._const_int(args[0])})]
    if name == "random":
        out, t = g.expr(args[0])
        return [ir.ExternCall(name, None, [g.expr_to(args[1], t), g.expr_to(args[2], t)], out)]
    if name == "digest":
        d, t = g.expr(args[1])
        want = g.d.resolve_type(targs.children[0]) if targs is not None and len(targs.children) == 1 else t
        if want not in g.low.digests:
            g.low.digests.append(want)
        items = [(e, w) for e, w, _v in flatten(g, d, t, n)]
        return [ir.ExternCall(name, None, [items], None,
                              {"type": want.name, "id": g.low.digests.index(want)})]
    if name == "truncate":
        return [ir.ExternCall(name, None, [g.expr_to(args[0], BitT(32))])]
    if name in ("assert", "assume"):  # recorded in packet traces (python backend) only
        return [ir.ExternCall(name, None, [g.expr(args[0])[0]])]
    if name == "log_msg":
        a = args[0]
        msg = str(a.children[0])[1:-1] if isinstance(a, Tree) and a.data == "string_lit" else ""
        return [ir.ExternCall(name, None, [], None, {"msg": msg})]
    raise Unsupported(f"extern function {name}{_pos(n)}")


__all__ = ["lower_call_stmt", "flatten"]

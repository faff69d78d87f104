"""Lowering of expressions, statements and calls inside one parser, control, action or function.

Expressions come back as ``(ir.Expr | _Lit, front-end type)``: the front-end type is kept for
the decisions p4c's typing makes (enums, errors, struct fields); ``_Lit`` is an ``int`` literal
that takes the width of whatever it meets, as the front end folds it.
"""

from __future__ import annotations

from lark import Token, Tree

from ..check.fields import SIZE_METHODS, pyfield, size_in_bits
from ..check.types import (
    ArrayT,
    BitT,
    BoolT,
    DefaultT,
    DotsListT,
    EnumT,
    ErrorT,
    HeaderT,
    IntLitT,
    KVListT,
    ListT,
    NamedT,
    P4Type,
    StackT,
    StructLikeT,
    StructT,
    TupleT,
    UnionT,
    VarbitT,
)
from ..frontend.literals import parse_int
from . import nodes as ir
from .common import Unsupported, _Lit, _pos, _Scope, irtype, length_of, union_valid, varbit_arg
from .stmts import _Statements

_BINOPS = {"_e_lt": "<", "_e_gt": ">", "_e_bor": "|", "_e_bxor": "^", "_e_band": "&", "_e_shl": "<<",
           "_e_shr": ">>", "_e_lor": "||", "_e_land": "&&"}


def _bits(t: P4Type) -> BitT | None:
    if isinstance(t, BitT):
        return t
    if isinstance(t, EnumT):
        return t.underlying if t.underlying is not None else BitT(32)
    if isinstance(t, ErrorT):
        return BitT(32)
    return None


def _default(t: P4Type) -> ir.Expr:
    """The default value of type ``t`` (``...``, and the fields ``{a = x, ...}`` or
    ``{x, ...}`` leave out): 0, false, or a fresh compound value (``ir.Default``)."""
    it = irtype(t, "(default value)")
    if isinstance(it, (ir.Comp, ir.Stack)):
        return ir.Default(it)
    return ir.Const(it, 0)


class _Body(_Statements):
    def __init__(self, low, scope: _Scope, kind: str, block: str | None):
        self.low = low
        self.d = low.d
        self.scope = scope
        self.kind = kind
        self.block_name = block
        self.ret: P4Type | None = None
        self._pre: list[ir.Stmt] = []
        self.tree = None  # the control's syntax tree (set by Lowering._block)

    # ------------------------------------------------------------ helpers
    def const(self, v: int, t: BitT) -> ir.Const:
        return ir.Const(ir.Bits(t.width, t.signed), v & t.mask)

    def conv(self, e, src: P4Type, dst: P4Type):
        """Implicit conversion (assignment, arguments): literals take the destination width."""
        if isinstance(e, _Lit):
            if isinstance(dst, BoolT):
                return ir.Const(ir.Bool(), int(bool(e.value)))
            b = _bits(dst)
            if b is None:
                raise Unsupported(f"integer literal used as {dst}")
            return self.const(e.value, b)
        if isinstance(src, DefaultT):
            return _default(dst)
        if isinstance(src, ListT) and isinstance(dst, StructLikeT):
            if isinstance(src, DotsListT):
                e = list(e) + [None] * (len(dst.fields) - len(e))
            if isinstance(src, KVListT):
                e = src.ordered(e, dst)
            items = [self.conv(*it, ft) if it is not None else _default(ft)
                     for it, (_, ft) in zip(e, dst.fields, strict=True)]
            lens = [length_of(x) if isinstance(ft, VarbitT) else None
                    for x, (_, ft) in zip(items, dst.fields, strict=True)]
            return ir.StructInit(irtype(dst), items, lens if any(lens) else [])
        if isinstance(src, ListT) and isinstance(dst, StackT):  # p4c's HeaderStackExpression
            e = list(e) + [None] * (dst.size - len(e))
            return ir.StackInit(irtype(dst), [self.conv(*it, dst.elem) if it is not None
                                              else _default(dst.elem) for it in e])
        if isinstance(src, ListT):
            raise Unsupported(f"list expression converted to {dst}")
        return e

    def expr_to(self, node, t: P4Type):
        e, et = self.expr(node)
        return self.conv(e, et, t)

    def arg_to(self, node, t: P4Type):
        """An ``in`` argument: a varbit travels in its parameter's struct (``varbit_arg``)."""
        e = self.expr_to(node, t)
        return varbit_arg(self.low.varbit_boxes, e, t) if isinstance(t, VarbitT) else e

    def to_bits(self, e, t: P4Type):
        if isinstance(e, _Lit):
            raise Unsupported("integer literal without a width")
        return e

    def unify(self, a, at, b, bt):
        if isinstance(a, _Lit) and isinstance(b, _Lit):
            return a, b, at
        if isinstance(a, _Lit):
            bb = _bits(bt)
            return self.const(a.value, bb), b, bb
        if isinstance(b, _Lit):
            ab = _bits(at)
            return a, self.const(b.value, ab), ab
        return a, b, _bits(at) or at

    def fresh(self, base: str) -> str:
        return self.low.fresh(base)

    # ------------------------------------------------------------ expressions
    def expr(self, node):
        if isinstance(node, Token):
            if node.type == "INTEGER":
                return self._int(node)
            raise Unsupported(f"token {node}")
        fn = getattr(self, "_e_" + node.data, None)
        if fn is None:
            op = _BINOPS.get("_e_" + node.data)
            if op is None:
                raise Unsupported(f"expression {node.data}{_pos(node)}")
            return self.binary(op, node.children[0], node.children[-1])
        return fn(node)

    def _int(self, tok):
        v, t = parse_int(str(tok))
        if t is None:
            return _Lit(v), IntLitT()
        return self.const(v, t), t

    def _e_int_lit(self, n):
        return self._int(n.children[0])

    def _e_true_lit(self, n):
        return ir.Const(ir.Bool(), 1), BoolT()

    def _e_false_lit(self, n):
        return ir.Const(ir.Bool(), 0), BoolT()

    def _e_string_lit(self, n):
        return None, NamedT("string")

    def _e_ident(self, n):
        name = str(n.children[-1])
        ent = self.scope.lookup(name)
        if ent is not None and ent[0] == "val":
            e = ent[1]
            return e, IntLitT() if isinstance(e, _Lit) else self._ptype(e)
        c = self.d.consts.get(name)
        if c is not None:
            if isinstance(c.type, IntLitT):
                return _Lit(c.value), c.type
            if isinstance(c.type, BoolT):
                return ir.Const(ir.Bool(), int(bool(c.value))), c.type
            b = _bits(c.type)
            if b is not None:
                return self.const(c.value, b), c.type
            raise Unsupported(f"constant {name} of type {c.type}")
        raise Unsupported(f"name {name}{_pos(n)}")

    def _ptype(self, e) -> P4Type:
        """Front-end type of an IR expression (variables carry it in ``ptype``)."""
        pt = getattr(e, "ptype", None)
        if pt is not None:
            return pt
        t = e.t
        if isinstance(t, ir.Bool):
            return BoolT()
        if isinstance(t, ir.Comp):
            return t.t
        return BitT(t.width, t.signed)

    def _e_error_member(self, n):
        name = str(n.children[-1].children[0])
        return ir.Const(ir.Bits(32), self.d.errors.index(name)), ErrorT()

    def _e_type_member(self, n):
        t = self.d.types.get(str(n.children[0].children[-1]))
        member = str(n.children[1].children[0])
        v = t.values[member] if t.underlying is not None else t.members.index(member)
        b = _bits(t)
        return self.const(v, b), t

    def _e_list_expr(self, n):
        nodes = [e for e in n.children[0].children if e is not None]
        dots = bool(nodes) and isinstance(nodes[-1], Tree) and nodes[-1].data == "dots_expr"
        items = [self.expr(e) for e in (nodes[:-1] if dots else nodes)]
        return items, (DotsListT if dots else ListT)(tuple(t for _, t in items))

    def _e_dots_expr(self, n):
        return None, DefaultT()

    def _e_struct_expr(self, n):
        kvs = [kv for kv in n.children if isinstance(kv, Tree)]
        items = [self.expr(kv.children[1]) for kv in kvs]
        names = tuple(str(kv.children[0]) for kv in kvs)
        return items, KVListT(tuple(t for _, t in items), names, len(kvs) < len(n.children))

    def _e_member(self, n):
        base, member = n.children[0], str(n.children[1].children[0])
        if isinstance(base, Tree) and base.data == "call":
            # t.apply().hit / .miss
            tname = self._applied_table(base)
            var = self.fresh("hit")
            self._pre.append(ir.TableApply(tname, var))
            e = ir.Ref(ir.Bool(), "local", var)
            return (e if member == "hit" else ir.Unary(ir.Bool(), "!", e)), BoolT()
        e, t = self.expr(base)
        if isinstance(t, ArrayT) and member == "size":
            return self.const(t.size, BitT(32)), BitT(32)
        if isinstance(t, StructLikeT):
            ft = t.field_type(member)
            f = ir.Field(irtype(ft, f"field {member}"), e, pyfield(member))
            f.ptype = ft
            return f, ft
        if isinstance(t, StackT):
            return self.stack_member(e, t, member, n)
        raise Unsupported(f"member {member} of {t}{_pos(n)}")

    def stack_member(self, e, t: StackT, member: str, n):
        if member == "size":
            return self.const(t.size, BitT(32)), BitT(32)
        if member in ("nextIndex", "lastIndex"):
            return ir.StackInfo(ir.Bits(32), e, member), BitT(32)
        if member in ("next", "last"):
            return ir.StackElem(ir.Comp(t.elem), e, None, member), t.elem
        raise Unsupported(f"stack member {member}{_pos(n)}")

    def _e_index(self, n):
        e, t = self.expr(n.children[0])
        i, _it = self.expr(n.children[1])
        if isinstance(i, _Lit):
            i = self.const(i.value, BitT(32))
        if isinstance(t, ArrayT):  # a constant index is a field; a run-time one as in stacks
            et = irtype(t.elem, "array element")
            if isinstance(i, ir.Const):
                f = ir.Field(et, e, pyfield(str(i.value)))
                f.ptype = t.elem
                return f, t.elem
            return ir.StackElem(et, e, i, "index"), t.elem
        return ir.StackElem(ir.Comp(t.elem), e, i, "index"), t.elem

    def _e_slice(self, n):
        e, t = self.expr(n.children[0])
        hi = self._const_int(n.children[1])
        lo = self._const_int(n.children[2])
        w = hi - lo + 1
        if isinstance(e, ir.Const):
            return self.const(e.value >> lo, BitT(w)), BitT(w)
        return ir.Slice(ir.Bits(w), e, hi, lo), BitT(w)

    def _const_int(self, node) -> int:
        e, t = self.expr(node)
        if isinstance(e, _Lit):
            return e.value
        if isinstance(e, ir.Const):
            return e.value
        raise Unsupported(f"non-constant where a constant is needed{_pos(node)}")

    def _e_call(self, n):
        callee = n.children[0]
        if isinstance(callee, Tree) and callee.data == "member":
            method = str(callee.children[1].children[0])
            base = callee.children[0]
            if method == "isValid":
                e, t = self.expr(base)
                if isinstance(t, UnionT):
                    return union_valid(e), BoolT()
                return ir.Valid(ir.Bool(), e), BoolT()
            if method in SIZE_METHODS:
                _e, t = self.expr(base)
                maximum, unit = SIZE_METHODS[method]
                return _Lit(size_in_bits(t, maximum) // unit), IntLitT()
            if isinstance(base, Tree) and base.data == "ident":
                ent = self.scope.lookup(str(base.children[-1]))
                if ent is not None and ent[0] == "extern" and method == "read":
                    x = self.low.externs[ent[1]]
                    args = [a for a in n.children[1].children if a is not None]
                    t = BitT(x.width, x.signed)
                    return ir.RegRead(ir.Bits(x.width, x.signed), x.name, self._index(args[0])), t
                if ent is not None and ent[0] == "packet" and method == "length":
                    return ir.PacketLength(ir.Bits(32)), BitT(32)
        if isinstance(callee, Tree) and callee.data == "ident":
            name = str(callee.children[-1])
            if name in self.low.functions:
                f = self.low.functions[name]
                finfo = self.low.p.functions[name]
                given = n.children[1].children if n.children[1] is not None else []
                args = [a for a in given if a is not None]
                vals = [self.arg_to(a, p.type) for a, p in zip(args, finfo.params, strict=True)]
                return ir.CallF(f.ret, name, vals), finfo.ret
        raise Unsupported(f"call in an expression{_pos(n)}")

    def _e_tcall(self, n):
        callee, _tlt, targs, args = n.children
        if (
            isinstance(callee, Tree)
            and callee.data == "member"
            and str(callee.children[1].children[0]) == "lookahead"
        ):
            t = self.d.resolve_type(targs.children[0])
            if isinstance(t, BitT):
                return ir.Lookahead(ir.Bits(t.width, t.signed)), t
            if isinstance(t, (HeaderT, StructT)) \
                    and not any(type(ft).__name__ == "VarbitT" for _, ft in t.fields):
                return ir.Lookahead(irtype(t)), t
            raise Unsupported(f"lookahead<{t}>{_pos(n)}")
        raise Unsupported(f"call with type arguments{_pos(n)}")

    def binary_nodes(self, op, a, at, b, bt, n=None):
        if op in ("&&", "||"):
            return ir.Binary(ir.Bool(), op, a, b), BoolT()
        if op in ("==", "!="):
            if isinstance(at, ListT) or isinstance(bt, ListT) or isinstance(at, StructLikeT):
                if isinstance(at, ListT):
                    a = self.conv(a, at, bt)
                if isinstance(bt, ListT):
                    b = self.conv(b, bt, at)
                return ir.Binary(ir.Bool(), op, a, b), BoolT()
            a, b, t = self.unify(a, at, b, bt)
            if isinstance(a, _Lit):
                return ir.Const(ir.Bool(), int((a.value == b.value) == (op == "=="))), BoolT()
            return ir.Binary(ir.Bool(), op, a, b), BoolT()
        if op in ("<", ">", "<=", ">="):
            a, b, t = self.unify(a, at, b, bt)
            if isinstance(a, _Lit):
                return ir.Const(ir.Bool(), int(eval(f"{a.value} {op} {b.value}"))), BoolT()
            return ir.Binary(ir.Bool(), op, a, b), BoolT()
        if op == "++":
            rt = BitT(at.width + bt.width, at.signed)
            return ir.Binary(irtype(rt, "concatenation"), op, a, b), rt
        if op in ("<<", ">>"):
            if isinstance(a, _Lit):
                s = b.value if isinstance(b, _Lit) else b.value
                return _Lit(a.value << s if op == "<<" else a.value >> s), at
            if isinstance(b, _Lit):
                b = self.const(b.value, BitT(max(b.value.bit_length(), 1)))
            return ir.Binary(a.t, op, a, b), at
        a, b, t = self.unify(a, at, b, bt)
        if isinstance(a, _Lit):
            x, y = a.value, b.value
            val = {"+": x + y, "-": x - y, "*": x * y, "/": x // y if y else 0, "%": x % y if y else 0,
                   "&": x & y, "|": x | y, "^": x ^ y}[op]
            return _Lit(val), at
        return ir.Binary(a.t, op, a, b), t

    def binary(self, op, ln, rn):
        a, at = self.expr(ln)
        b, bt = self.expr(rn)
        return self.binary_nodes(op, a, at, b, bt)

    def _e_binop(self, n):
        left, optok, right = n.children
        return self.binary(str(optok), left, right)

    def _e_lnot(self, n):
        e, t = self.expr(n.children[0])
        return ir.Unary(ir.Bool(), "!", e), t

    def _e_bnot(self, n):
        e, t = self.expr(n.children[0])
        return ir.Unary(e.t, "~", e), t

    def _e_neg(self, n):
        e, t = self.expr(n.children[1])
        if isinstance(e, _Lit):
            return _Lit(-e.value), t
        return ir.Unary(e.t, "-", e), t

    def _e_pos(self, n):
        return self.expr(n.children[1])

    def _e_ternary(self, n):
        c, _ = self.expr(n.children[0])
        a, at = self.expr(n.children[1])
        b, bt = self.expr(n.children[2])
        if isinstance(at, (BitT, IntLitT, EnumT)) and isinstance(bt, (BitT, IntLitT, EnumT)):
            a, b, t = self.unify(a, at, b, bt)
            t = at if not isinstance(at, IntLitT) else bt
        else:
            t = at
        return ir.Mux(a.t, c, a, b), t

    def _e_cast(self, n):
        dst = self.d.resolve_type(n.children[0])
        if isinstance(n.children[1], Tree) and n.children[1].data == "invalid_hdr":
            it = irtype(dst, "(H){#}")  # a fresh temporary: invalid, as a new header or union
            name = self.fresh("invalid")
            self._pre.append(ir.VarDecl(name, it, None))
            ref = ir.Ref(it, "local", name)
            ref.ptype = dst
            return ref, dst
        e, src = self.expr(n.children[1])
        if isinstance(src, DefaultT):
            return _default(dst), dst
        return self.cast(e, src, dst), dst

    def cast(self, e, src, dst):
        if isinstance(e, _Lit):
            if isinstance(dst, BoolT):
                return ir.Const(ir.Bool(), int(bool(e.value)))
            if isinstance(dst, IntLitT):
                return e
            if isinstance(dst, (ListT, StructLikeT, TupleT)):
                return self.conv(e, src, dst)
            return self.const(e.value, _bits(dst))
        if isinstance(src, ListT):
            return self.conv(e, src, dst)
        if isinstance(dst, BoolT):
            return ir.Binary(ir.Bool(), "==", e, ir.Const(ir.Bits(1), 1))
        if isinstance(src, BoolT):
            return ir.Cast(ir.Bits(1), e)
        b = _bits(dst)
        if b is None:
            return e
        sb = _bits(src)
        if sb == b:
            return e
        return ir.Cast(ir.Bits(b.width, b.signed), e)

    def _index(self, node):
        e, t = self.expr(node)
        if isinstance(e, _Lit):
            return self.const(e.value, BitT(32))
        return e

    # ------------------------------------------------------------ lvalues
    def lvalue(self, node):
        """The IR of an assignable expression (the front end checked that it is one)."""
        return self.expr(node)[0]

    # ------------------------------------------------------------ statements


__all__ = ["_Body"]

"""Expression compiler: type-checks a P4 expression and returns Python source computing it.

Values: bit<W> are non-negative ints < 2**W, int<W> are signed ints in range, bool is bool,
error/enum values are ints.  Integer literals (type ``int``) are folded at compile time, so
an expression of type ``int`` always compiles to a Python integer literal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lark import Token, Tree

from ..frontend.defaults import direct_varbit, varbit_default
from ..frontend.literals import parse_int
from .fields import SIZE_METHODS, default_code, pyfield, type_size
from .operators import BOOL_CONSTS, BinaryOperators, both_bool_consts, is_const, wrap_code, wrap_value
from .static_assert import fold as fold_static_assert
from .static_assert import is_static_assert
from .types import (
    STACK_ONLY,
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
    P4Type,
    StackT,
    StringT,
    StructLikeT,
    StructT,
    TupleT,
    UnionT,
    cast_error,
    same_type,
)


@dataclass
class Sym:
    kind: str  # var | const | table | action | extern | state | packet_in | packet_out | valueset
    type: P4Type
    code: str
    writable: bool = True
    info: Any = None


class Scope:
    def __init__(self, parent: Scope | None):
        self.parent = parent
        self.names: dict[str, Sym] = {}

    def lookup(self, name: str) -> Sym | None:
        if name in self.names:
            return self.names[name]
        return self.parent.lookup(name) if self.parent is not None else None

    def declare(self, name: str, sym: Sym) -> None:
        if name in self.names:
            raise DuplicateName(name)
        self.names[name] = sym


class DuplicateName(Exception):
    """A name declared twice in one scope (turned into P4CompileError by the generator)."""


class GlobalScope(Scope):
    """Constants and top-level actions of the program."""

    def __init__(self, decls):
        super().__init__(None)
        self.decls = decls

    def lookup(self, name: str) -> Sym | None:
        if name in self.names:
            return self.names[name]
        c = self.decls.consts.get(name)
        if c is not None:
            return Sym("const", c.type, str(c.value), False)
        if name in self.decls.actions:
            return Sym("action", BoolT(), name, False, self.decls.actions[name])
        return None


def warn_unfit(decls, v: int, t: BitT, node) -> None:
    """p4c keeps a literal that does not fit its type, truncated, with a warning."""
    lit = str(node.children[0]) if isinstance(node, Tree) and node.data == "int_lit" else str(v)
    if t.signed and not -(1 << (t.width - 1)) <= v < 1 << (t.width - 1):
        decls.warn(node, "overflow", f"{lit}: signed value does not fit in {t.width} bits")
    elif not t.signed and v < 0:
        decls.warn(node, "mismatch", f"{lit}: negative value with unsigned type")
    elif not t.signed and v > t.mask:
        decls.warn(node, "mismatch", f"{lit}: value does not fit in {t.width} bits")


class ExprChecker(BinaryOperators):
    """Compiles expressions in one scope; ``gen`` (the code generator) handles calls with effects."""

    def __init__(self, decls, scope: Scope, gen=None):
        self.d = decls
        self.scope = scope
        self.gen = gen

    def err(self, node, msg: str):
        return self.d.err(node, msg)

    # ------------------------------------------------------------ conversions
    def convert(self, code: str, src: P4Type, dst: P4Type, node) -> str:
        """Implicit conversion for assignment / argument passing (p4c's rules)."""
        if same_type(src, dst):
            return code
        if isinstance(src, DefaultT):
            return self._default(dst, "", node)
        if isinstance(src, IntLitT) and isinstance(dst, BitT):
            warn_unfit(self.d, int(code), dst, node)
            return str(wrap_value(int(code), dst))
        if isinstance(src, IntLitT) and isinstance(dst, IntLitT):
            return code
        if isinstance(src, ListT) and isinstance(dst, UnionT):  # p4c: no list -> header_union
            raise self.err(node, f"Cannot cast implicitly type {src} to type header_union {dst}")
        if isinstance(src, ListT) and isinstance(dst, StructLikeT) and not isinstance(dst, HeaderT) \
                or isinstance(src, ListT) and isinstance(dst, HeaderT):
            return self.list_to_struct(code, src, dst, node)
        if isinstance(src, ListT) and isinstance(dst, StackT) and not isinstance(src, KVListT):
            return self.list_to_stack(code, src, dst, node)
        if isinstance(src, ListT) and isinstance(dst, TupleT):
            if len(src.elems) != len(dst.elems) and not (
                    isinstance(src, DotsListT) and len(src.elems) <= len(dst.elems)):
                raise self.err(node, f"cannot convert {src} to {dst}: wrong number of elements")
            return code
        if isinstance(dst, EnumT) and isinstance(src, EnumT) and src is dst:
            return code
        if isinstance(src, EnumT) and src.underlying is not None and same_type(src.underlying, dst):
            return code  # the spec's one other implicit cast: serializable enum -> its underlying type
        raise self.err(node, f"type mismatch: cannot use {src} where {dst} is expected (cast needed)")

    def list_to_struct(self, code: str, src: ListT, dst: StructLikeT, node) -> str:
        dots = isinstance(src, KVListT) and src.dots
        if len(src.elems) != len(dst.fields) and not dots and not (
                isinstance(src, DotsListT) and len(src.elems) <= len(dst.fields)):
            raise self.err(node, f"cannot initialise {dst} from a list of {len(src.elems)} elements")
        items = self._list_items.get(code)
        if items is None:
            raise self.err(node, "list expression cannot be used here")
        if (dots or isinstance(src, DotsListT)) and direct_varbit(dst):
            raise self.err(node, f"Structs, headers and tuples containing varbit fields cannot be "
                                 f"initialized using ...: {dst}")
        if isinstance(src, DotsListT):  # {a, b, ...}: the fields after the items take defaults
            items = list(items) + [None] * (len(dst.fields) - len(items))
        if isinstance(src, KVListT):
            items = src.ordered(items, dst)
            if items is None:
                raise self.err(node, f"struct expression {src} does not name the fields of {dst}")
        parts = [self.convert(*it, ft, node) if it is not None else self._default(ft, fname, node)
                 for it, (fname, ft) in zip(items, dst.fields, strict=False)]
        valid = ", True" if isinstance(dst, HeaderT) else ""
        return f"_mk({dst.pyname}, ({''.join(p + ', ' for p in parts)}){valid})"

    def list_to_stack(self, code: str, src: ListT, dst: StackT, node) -> str:
        """``{h0, h1}`` (``{h0, ...}``) for a header stack: p4c's HeaderStackExpression, one
        item per element (the rest default: invalid)."""
        n = len(src.elems)
        if n != dst.size and not (isinstance(src, DotsListT) and n <= dst.size):
            raise self.err(node, f"number of initializers {n} has to match stack size {dst.size}")
        for c, t in self._list_items.get(code, []):
            self.convert(c, t, dst.elem, node)
        return default_code(dst, 0)

    @property
    def _list_items(self) -> dict[str, list[tuple[str, P4Type]]]:
        """The items of each list expression of this compilation, by its code string."""
        return self.d.list_items

    def _default(self, t: P4Type, fname: str, node) -> str:
        """The default value ``...`` gives field ``fname`` (or a whole value, ``fname`` empty):
        0, false, the first enum member, ``error.NoError``, an invalid header, a union with no
        valid member, a stack of invalid headers with ``nextIndex`` 0, a varbit of length 0,
        structs, tuples and arrays of those (P4_16 "default values")."""
        if varbit_default(t):  # p4c: "default values for varbit types" are unsupported
            raise self.err(node, f"'...': no default value for varbit types ({t})")
        if isinstance(t, (BitT, BoolT, EnumT, ErrorT, StructLikeT, StackT)):
            return default_code(t, 0)
        what = f"field {fname} of type {t}" if fname else f"a value of type {t}"
        raise self.err(node, f"'...': {what} has no default value")

    def expect_bool(self, node) -> str:
        code, t = self.expr(node)
        if not isinstance(t, BoolT):
            raise self.err(node, f"condition must be bool, not {t}")
        return code

    # ------------------------------------------------------------ dispatch
    def expr(self, node, expected: P4Type | None = None) -> tuple[str, P4Type]:
        if isinstance(node, Token):
            if node.type == "INTEGER":
                return self._int(node)
            raise self.err(node, f"unexpected token {node}")
        fn = getattr(self, "_e_" + node.data, None)
        if fn is None:
            raise self.err(node, f"unsupported expression {node.data}")
        return fn(node, expected) if node.data in ("list_expr", "struct_expr") else fn(node)

    def _int(self, tok) -> tuple[str, P4Type]:
        v, t = parse_int(str(tok))
        if t is None:
            return str(v), IntLitT()
        if t.signed and t.width == 0:
            raise self.err(tok, "int<0>: Width of signed type cannot be zero")
        if not t.signed and v > t.mask or t.signed and v >= 1 << t.width:
            raise self.err(tok, f"literal {tok} does not fit in {t}")
        return str(wrap_value(v, t)), t

    def _e_int_lit(self, n):
        return self._int(n.children[0])

    def _e_true_lit(self, n):
        return "True", BoolT()

    def _e_false_lit(self, n):
        return "False", BoolT()

    def _e_string_lit(self, n):
        return repr(str(n.children[0])[1:-1]), StringT()

    def _e_ident(self, n):
        name = str(n.children[-1])
        sym = self.scope.lookup(name)
        if sym is None:
            raise self.err(n, f"undeclared identifier {name}")
        if sym.kind in ("var", "const", "packet_in", "packet_out", "valueset"):
            return sym.code, sym.type
        raise self.err(n, f"{name} is a {sym.kind} and cannot be used as a value here")

    def _e_error_member(self, n):
        name = str(n.children[-1].children[0])
        return str(self.d.error_code(name, n)), ErrorT()

    def _e_type_member(self, n):
        tname = str(n.children[0].children[-1])
        member = str(n.children[1].children[0])
        t = self.d.types.get(tname)
        if not isinstance(t, EnumT):
            raise self.err(n, f"{tname}.{member}: {tname} is not an enum")
        if member not in t.members:
            raise self.err(n, f"enum {tname} has no member {member}")
        if t.underlying is not None:
            return str(t.values[member]), t
        return str(t.members.index(member)), t

    def _e_list_expr(self, n, expected=None):
        nodes = [e for e in n.children[0].children if e is not None]
        dots = bool(nodes) and isinstance(nodes[-1], Tree) and nodes[-1].data == "dots_expr"
        if dots:  # {a, b, ...}: the rest take default values
            nodes = nodes[:-1]
        items = [self.expr(e) for e in nodes]
        if any(isinstance(t, DefaultT) for _, t in items):
            raise self.err(n, "'...' must be the last item of a list expression")
        code = "(" + "".join(c + ", " for c, _ in items) + ("..., " if dots else "") + ")"
        self._list_items[code] = items
        return code, (DotsListT if dots else ListT)(tuple(t for _, t in items))

    def _e_dots_expr(self, n):
        """``...``: the default value of the type the context gives it (see ``convert``)."""
        return "None", DefaultT()

    def _e_struct_expr(self, n, expected=None):
        """``{a = x, b = y}``: a list expression whose items are matched to fields by name
        (``{a = x, ...}``: the other fields take default values)."""
        kvs = [kv for kv in n.children if isinstance(kv, Tree)]
        names = tuple(str(kv.children[0]) for kv in kvs)
        if len(set(names)) != len(names):
            raise self.err(n, "duplicate field in a struct expression")
        items = [self.expr(kv.children[1]) for kv in kvs]
        code = "(" + "".join(c + ", " for c, _ in items) + ")"
        self._list_items[code] = items
        return code, KVListT(tuple(t for _, t in items), names, len(kvs) < len(n.children))

    # ------------------------------------------------------------ members
    def _e_member(self, n):
        base, member = n.children[0], str(n.children[1].children[0])
        if isinstance(base, Tree) and base.data == "ident":
            sym = self.scope.lookup(str(base.children[-1]))
            if sym is not None and sym.kind in ("table", "extern"):
                raise self.err(n, f"{sym.kind} member {member} must be called")
        code, t = self.expr(base)
        if isinstance(t, ArrayT):
            return self.array_member(t, member, n)
        if isinstance(t, StructLikeT):
            ft = t.field_type(member)
            if ft is None:
                raise self.err(n, f"{t.name} has no field {member}")
            return f"{code}.{pyfield(member)}", ft
        if isinstance(t, StackT):
            return self.stack_member(code, t, member, n)
        if self.gen is not None:
            r = self.gen.member_value(code, t, member, n)
            if r is not None:
                return r
        raise self.err(n, f"type {t} has no member {member}")

    def stack_member(self, code: str, t: StackT, member: str, n):
        if member in ("next", "last", "lastIndex") and self.gen is not None and self.gen.kind != "parser":
            raise self.err(n, f"header stack .{member} can only be used in a parser (P4_16 spec 8.18)")
        if member == "size":
            return str(t.size), BitT(32)
        if member == "lastIndex":
            return f"(({code}.n - 1) & 0xffffffff)", BitT(32)
        if member == "nextIndex":
            return f"{code}.n", BitT(32)
        if member == "last":
            return f"{code}.last()", t.elem
        if member == "next":
            return f"{code}.next()", t.elem
        raise self.err(n, f"header stack has no member {member}")

    def array_member(self, t: ArrayT, member: str, n):
        """``.size`` of an array of a non-header type; the header-stack members are not defined."""
        if member == "size":
            return str(t.size), BitT(32)
        if member in STACK_ONLY:
            raise self.err(n, f"{member} is only defined for header stacks; {t} is an array "
                              f"of {t.elem}")
        raise self.err(n, f"array {t} has no member {member}")

    def _e_index(self, n):
        code, t = self.expr(n.children[0])
        if isinstance(t, ArrayT):
            return self.array_index(code, t, n)
        if isinstance(t, TupleT):  # P4_16 8.11: a tuple indexed by a compile-time constant
            i = self._const_of(n.children[1])
            if not 0 <= i < len(t.elems):
                raise self.err(n, f"index {i} out of range for {t}")
            return f"{code}[{i}]", t.elems[i]
        if not isinstance(t, StackT):
            raise self.err(n, f"cannot index a value of type {t}")
        icode, it = self.expr(n.children[1])
        if not isinstance(it, (BitT, IntLitT)):
            raise self.err(n, f"stack index must be an integer, not {it}")
        if is_const(icode):
            if not 0 <= int(icode) < t.size:
                raise self.err(n, f"index {icode} out of range for stack of size {t.size}")
            return f"{code}.h[{icode}]", t.elem
        return f"{code}.at({icode})", t.elem

    def array_index(self, code: str, t: ArrayT, n):
        icode, it = self.expr(n.children[1])
        if not isinstance(it, (BitT, IntLitT)):
            raise self.err(n, f"array index must be an integer, not {it}")
        if is_const(icode):  # p4c's wording
            if int(icode) < 0:
                raise self.err(n, f"Negative array index {icode}")
            if int(icode) >= t.size:
                raise self.err(n, f"Array index {icode} larger or equal to array size {t.size}")
            return f"{code}.{pyfield(icode)}", t.elem
        return f"{code}.at({icode})", t.elem

    def _e_slice(self, n):
        code, t = self.expr(n.children[0])
        hi = self._const_of(n.children[1])
        lo = self._const_of(n.children[2])
        if not isinstance(t, BitT):
            raise self.err(n, f"cannot slice a value of type {t}")
        if not (0 <= lo <= hi < t.width):
            raise self.err(n, f"slice [{hi}:{lo}] out of range for {t}")
        w = hi - lo + 1
        src = f"({code} & {t.mask})" if t.signed else code
        if is_const(code):
            return str((int(code) & t.mask) >> lo & ((1 << w) - 1)), BitT(w)
        return (f"(({src} >> {lo}) & {(1 << w) - 1})" if lo else f"({src} & {(1 << w) - 1})"), BitT(w)

    def _const_of(self, node) -> int:
        code, t = self.expr(node)
        if not is_const(code):
            raise self.err(node, "expected a compile-time constant")
        return int(code)

    # ------------------------------------------------------------ calls
    def _e_call(self, n):
        if is_static_assert(n):  # folded here, also in constant expressions
            fold_static_assert(self, n)
            return "True", BoolT()
        size = self._size_call(n)
        if size is not None:  # a compile-time constant: the call becomes its literal
            n.data, n.children = "int_lit", [Token("INTEGER", str(size))]
            return str(size), IntLitT()
        if self.gen is None:
            raise self.err(n, "calls are not allowed in constant expressions")
        code, t = self.gen.call(n, as_expr=True)
        return code, t

    _e_tcall = _e_call

    def _size_call(self, n) -> int | None:
        """``x.minSizeInBits()`` / ``T.maxSizeInBytes()`` & co. (P4_16 1.2.4), else None."""
        callee = n.children[0] if n.data == "call" else None
        if not (isinstance(callee, Tree) and callee.data in ("member", "type_member")):
            return None
        method = str(callee.children[1].children[0])
        if method not in SIZE_METHODS:
            return None
        if n.children[1] is not None and any(a is not None for a in n.children[1].children):
            raise self.err(n, f"{method}() takes no arguments")
        if callee.data == "type_member":
            t = self.d.resolve_type(Tree("type_name", list(callee.children[0].children)))
        else:
            _code, t = self.expr(callee.children[0])
        size = type_size(t, method)
        if size is None:
            raise self.err(n, f"{method}() is not defined for {t}")
        return size

    def _e_ctor_call(self, n):
        raise self.err(n, "constructor calls are only allowed in instantiations")

    def _e_this_expr(self, n):
        raise self.err(n, "'this' is not supported")

    # ------------------------------------------------------------ operators
    def unify(self, a: tuple[str, P4Type], b: tuple[str, P4Type], node, op: str):
        (ac, at), (bc, bt) = a, b
        if isinstance(at, IntLitT) and isinstance(bt, BitT):
            return str(wrap_value(int(ac), bt)), bc, bt
        if isinstance(bt, IntLitT) and isinstance(at, BitT):
            return ac, str(wrap_value(int(bc), at)), at
        if isinstance(at, IntLitT) and isinstance(bt, IntLitT):
            return ac, bc, at
        if isinstance(at, BitT) and isinstance(bt, BitT):
            if at != bt:
                raise self.err(node, f"operator {op}: width mismatch between {at} and {bt} (cast needed)")
            return ac, bc, at
        raise self.err(node, f"operator {op} cannot be applied to {at} and {bt}")

    def _e_binop(self, n):
        left, optok, right = n.children
        return self.binary(str(optok), self.expr(left), self.expr(right), n)

    def _bin(self, op):
        def f(n):
            return self.binary(op, self.expr(n.children[0]), self.expr(n.children[-1]), n)
        return f

    def __getattr__(self, name):
        ops = {"_e_lt": "<", "_e_gt": ">", "_e_bor": "|", "_e_bxor": "^", "_e_band": "&",
               "_e_shl": "<<", "_e_shr": ">>", "_e_lor": "||", "_e_land": "&&"}
        if name in ops:
            return self._bin(ops[name])
        raise AttributeError(name)

    def _e_lnot(self, n):
        c, t = self.expr(n.children[0])
        if not isinstance(t, BoolT):
            raise self.err(n, f"operator ! needs a bool operand, got {t}")
        if both_bool_consts(c):
            return str(not BOOL_CONSTS[c]), t
        return f"(not {c})", t

    def _e_bnot(self, n):
        c, t = self.expr(n.children[0])
        if isinstance(t, IntLitT):
            raise self.err(n, "operator ~ on an integer literal: width cannot be inferred (cast it)")
        if not isinstance(t, BitT):
            raise self.err(n, f"operator ~ cannot be applied to {t}")
        return (f"(~{c})" if t.signed else f"({c} ^ {t.mask})"), t

    def _e_neg(self, n):
        c, t = self.expr(n.children[1])
        if isinstance(t, IntLitT):
            return str(-int(c)), t
        if not isinstance(t, BitT):
            raise self.err(n, f"unary - cannot be applied to {t}")
        return wrap_code(f"-{c}", t), t

    def _e_pos(self, n):
        c, t = self.expr(n.children[1])
        if not isinstance(t, (BitT, IntLitT)):
            raise self.err(n, f"unary + cannot be applied to {t}")
        return c, t

    def _e_ternary(self, n):
        cond = self.expect_bool(n.children[0])
        a, b = self.expr(n.children[1]), self.expr(n.children[2])
        if isinstance(a[1], IntLitT) and isinstance(b[1], IntLitT):
            raise self.err(n, "?: with two integer literals: width cannot be inferred")
        if isinstance(a[1], (BitT, IntLitT)) and isinstance(b[1], (BitT, IntLitT)):
            ac, bc, t = self.unify(a, b, n, "?:")
        elif same_type(a[1], b[1]):
            ac, bc, t = a[0], b[0], a[1]
        else:
            raise self.err(n, f"?: branches have different types {a[1]} and {b[1]}")
        return f"({ac} if {cond} else {bc})", t

    def _e_cast(self, n):
        dst = self.d.resolve_type(n.children[0])
        if isinstance(n.children[1], Tree) and n.children[1].data == "invalid_hdr":
            if not isinstance(dst, (HeaderT, UnionT)):
                raise self.err(n, f"cannot cast {{#}} to {dst}: it is an invalid header or header union")
            return f"{dst.pyname}()", dst  # a new header or union is invalid
        c, src = self.expr(n.children[1])
        if isinstance(src, DefaultT):
            return self._default(dst, "", n), dst
        if (why := cast_error(src, dst)) is not None:
            raise self.err(n, why)
        return self.cast(c, src, dst, n), dst

    def _e_invalid_hdr(self, n):
        """``{#}`` without a cast: p4c (1.2.5) gives it no type, so it fits nothing."""
        raise self.err(n, "{#} has an unknown type here (p4c: \"Cannot cast implicitly type "
                          "'Unknown type'\"); write (H){#} for an invalid header of type H")

    def cast(self, c: str, src: P4Type, dst: P4Type, n) -> str:
        if same_type(src, dst):
            return c
        if isinstance(dst, BitT):
            if isinstance(src, IntLitT):
                return str(wrap_value(int(c), dst))
            if isinstance(src, BoolT):
                if dst.width != 1:
                    raise self.err(n, f"cannot cast bool to {dst} (only bit<1>)")
                return f"int({c})"
            if isinstance(src, EnumT) and src.underlying is not None:
                src = src.underlying
            if isinstance(src, BitT):
                if src.signed != dst.signed and src.width != dst.width:
                    raise self.err(n, f"cannot cast {src} to {dst} directly: change width and "
                                      "signedness in two casts")
                if is_const(c):
                    return str(wrap_value(int(c), dst))
                if not dst.signed:
                    return f"({c} & {dst.mask})" if (src.signed or dst.width < src.width) else c
                return wrap_code(c, dst)
        if isinstance(dst, BoolT) and isinstance(src, BitT) and src.width == 1 and not src.signed:
            return f"({c} == 1)"
        if isinstance(dst, BoolT) and isinstance(src, IntLitT) and int(c) in (0, 1):
            return str(bool(int(c)))
        if isinstance(dst, EnumT) and dst.underlying is not None and isinstance(src, (BitT, IntLitT)):
            return self.cast(c, src, dst.underlying, n)
        if isinstance(dst, IntLitT) and isinstance(src, IntLitT):
            return c
        if isinstance(src, ListT) and isinstance(dst, (StructT, HeaderT, TupleT, StackT)):
            return self.convert(c, src, dst, n)
        raise self.err(n, f"invalid cast from {src} to {dst}")

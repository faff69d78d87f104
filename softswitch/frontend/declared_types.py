"""Types of names and expressions on the syntax tree, as type trees, before type checking.

The rewrites of ``specialize.py`` need to know, e.g., that ``t`` in ``t[0]`` is a tuple or which
type argument a generic call infers from its arguments.  That is decided here from declared
types alone (parameters, variables, constants, fields, casts, literals with a width, function
return types); an expression whose type needs the full type checker gives ``None`` and the
rewrite that needed it reports that it cannot infer the type.  Type trees are grammar nodes
(``t_bit``, ``type_name``, ``stack_type`` ...), so a rewrite can put them back into the program.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lark import Token, Tree

from .literals import parse_int

_BOOL_OPS = {"lt", "gt", "land", "lor", "lnot"}
_SAME_AS_LEFT = {"bor", "bxor", "band", "shl", "shr", "bnot", "neg", "pos"}


def name_of(node) -> str:
    return str(node.children[0]) if isinstance(node, Tree) else str(node)


def type_text(t) -> str:
    """Canonical text of a type tree (a specialisation's key and part of its name)."""
    if not isinstance(t, Tree):
        return str(t)
    d, k = t.data, t.children
    simple = {"t_bool": "bool", "t_error": "error", "t_string": "string", "t_void": "void",
              "t_match_kind": "match_kind", "t_bit1": "bit", "t_int_inf": "int", "t_dontcare": "_"}
    if d in simple:
        return simple[d]
    if d in ("t_bit", "t_int", "t_varbit"):
        return f"{d[2:]}<{_expr_text(k[0])}>"
    if d == "type_name":
        return str(k[-1])
    if d == "specialized_type":
        return f"{type_text(k[0])}<{', '.join(type_text(a) for a in k[-1].children)}>"
    if d == "stack_type":
        return f"{type_text(k[0])}[{_expr_text(k[1])}]"
    if d == "tuple_type":
        return f"tuple<{', '.join(type_text(a) for a in k[0].children)}>"
    return d


def _expr_text(e) -> str:
    if isinstance(e, Token):
        return str(e)
    return "".join(_expr_text(c) for c in e.children if c is not None) if isinstance(e, Tree) else str(e)


def bit_type(width: int, signed: bool = False) -> Tree:
    return Tree("t_int" if signed else "t_bit", [Token("INTEGER", str(width))])


@dataclass
class Bind:
    """A name in scope: its declared type tree (None: not a value, e.g. a table) and, for a
    constant folded by ``specialize.py``, its initialiser."""

    type: Tree | None
    value: Tree | None = None


@dataclass
class TypeIndex:
    """The program's named types: struct-like fields and typedefs, by name."""

    fields: dict[str, list[tuple[str, Tree]]] = field(default_factory=dict)
    typedefs: dict[str, Tree] = field(default_factory=dict)
    functions: dict[str, Tree] = field(default_factory=dict)
    externs: dict[str, Tree] = field(default_factory=dict)

    def add_decl(self, d: Tree) -> None:
        if d.data in ("struct_decl", "header_decl", "header_union_decl"):
            self.fields[name_of(d.children[1])] = [
                (name_of(f.children[2]), f.children[1]) for f in d.children[2:] if isinstance(f, Tree)]
        elif d.data == "typedef_decl" and str(d.children[1]) == "typedef":
            # children: annotations, the TYPEDEF token, the type, the name; a ``type`` (newtype)
            # is a distinct type, not a synonym to look through
            self.typedefs[name_of(d.children[3])] = d.children[2]
        elif d.data in ("function_decl", "extern_func_decl"):  # [ann, result, name, tparams, ..]
            self.functions[name_of(d.children[2])] = d
        elif d.data == "extern_decl":
            self.externs[name_of(d.children[1])] = d

    def resolve(self, t):
        """Follow typedefs to the type tree they name."""
        seen = 0
        while isinstance(t, Tree) and t.data == "type_name" and str(t.children[-1]) in self.typedefs \
                and seen < 64:
            t, seen = self.typedefs[str(t.children[-1])], seen + 1
        return t

    def struct_fields(self, t) -> list[tuple[str, Tree]] | None:
        t = self.resolve(t)
        if isinstance(t, Tree) and t.data == "type_name":
            return self.fields.get(str(t.children[-1]))
        return None

    def type_of(self, e, env: dict[str, Bind]) -> Tree | None:
        """The type tree of expression ``e`` in scope ``env``, or None when not evident."""
        if not isinstance(e, Tree):
            return None
        d, k = e.data, e.children
        if d == "ident":
            b = env.get(str(k[-1]))
            return b.type if b is not None else None
        if d == "member":
            return self._member(k[0], name_of(k[1]), env)
        if d == "index":
            base = self.resolve(self.type_of(k[0], env))
            return base.children[0] if isinstance(base, Tree) and base.data == "stack_type" else None
        if d == "slice":
            if not (_lit(k[1]) and _lit(k[2])):
                return None
            hi, lo = parse_int(str(k[1].children[0]))[0], parse_int(str(k[2].children[0]))[0]
            return bit_type(hi - lo + 1) if hi >= lo else None
        if d == "cast":
            return k[0]
        if d == "int_lit":
            width = parse_int(str(k[0]))[1]
            return bit_type(width.width, width.signed) if width is not None else None
        if d in ("true_lit", "false_lit") or d in _BOOL_OPS:
            return Tree("t_bool", [])
        if d == "error_member":
            return Tree("t_error", [])
        if d == "type_member":
            return k[0]
        if d == "binop":
            if str(k[1]) in ("==", "!=", "<=", ">="):
                return Tree("t_bool", [])
            return self.type_of(k[0], env) or self.type_of(k[2], env)
        if d in _SAME_AS_LEFT:
            return self.type_of(k[0], env) or (self.type_of(k[1], env) if d not in ("shl", "shr")
                                                 and len(k) > 1 else None)
        if d == "ternary":
            return self.type_of(k[1], env) or self.type_of(k[2], env)
        if d == "call":
            return self._call(k[0], env)
        if d == "tcall" and isinstance(k[0], Tree) and k[0].data == "member":
            given = next(c for c in k if isinstance(c, Tree) and c.data == "type_args").children
            return self._method_result(self.resolve(self.type_of(k[0].children[0], env)),
                                       name_of(k[0].children[1]), given)
        return None

    def _member(self, base, member: str, env) -> Tree | None:
        t = self.resolve(self.type_of(base, env))
        if isinstance(t, Tree) and t.data == "stack_type":
            if member in ("next", "last"):
                return t.children[0]
            return bit_type(32) if member == "lastIndex" else None
        for fname, ft in self.struct_fields(t) or []:
            if fname == member:
                return ft
        return None

    def _call(self, f, env) -> Tree | None:
        if isinstance(f, Tree) and f.data == "member" and name_of(f.children[1]) == "isValid":
            return Tree("t_bool", [])
        if isinstance(f, Tree) and f.data == "ident" and str(f.children[-1]) not in env:
            fn = self.functions.get(str(f.children[-1]))
            if fn is not None and fn.children[3] is None:
                return fn.children[1]
        if isinstance(f, Tree) and f.data == "member":
            return self._method_result(self.resolve(self.type_of(f.children[0], env)),
                                       name_of(f.children[1]))
        return None

    def _method_result(self, t, method: str, targs: list = ()) -> Tree | None:
        """The result type of ``method`` of an extern instance of type ``t`` (``read`` of a
        ``register<bit<8>, bit<32>>`` is ``bit<8>``), its type parameters substituted."""
        args = t.children[-1].children if isinstance(t, Tree) and t.data == "specialized_type" \
            else []
        base = t.children[0] if args else t
        ext = self.externs.get(str(base.children[-1])) \
            if isinstance(base, Tree) and base.data == "type_name" else None
        if ext is None:
            return None
        tvars = [name_of(c) for c in ext.children[2].children if isinstance(c, Tree)] \
            if ext.children[2] is not None else []
        binding = dict(zip(tvars, args, strict=False))
        for m in ext.children[3:]:
            proto = m.children[-1] if isinstance(m, Tree) and m.data == "method_proto" else None
            if proto is None or name_of(proto.children[1]) != method:
                continue
            mvars = [name_of(c) for c in proto.children[2].children if isinstance(c, Tree)] \
                if proto.children[2] is not None else []
            if len(mvars) != len(targs):
                continue
            tvars = tvars + mvars
            binding.update(zip(mvars, targs, strict=True))
            ret = proto.children[0]
            if isinstance(ret, Tree) and ret.data == "type_name" and str(ret.children[-1]) in tvars:
                return binding.get(str(ret.children[-1]))
            return None if isinstance(ret, Tree) and ret.data == "t_void" else ret
        return None


def _lit(e) -> bool:
    return isinstance(e, Tree) and e.data == "int_lit"



_PLAIN = {"t_bit", "t_int", "t_bool", "t_varbit", "t_error", "tuple_type", "stack_type"}


def clearly_different(types: TypeIndex, pt, at) -> bool:
    """Whether an argument of declared type ``at`` can never be passed for a parameter of type
    ``pt`` without a cast: both are known and of kinds with no implicit conversion between them
    (bit/int/bool/varbit/error, tuples, stacks, structs and headers), and they differ. Enums
    (a serializable one converts to its underlying type) and anything unknown are left to the
    generators."""
    pt, at = types.resolve(pt), types.resolve(at)

    def plain(t) -> bool:
        return isinstance(t, Tree) and (t.data in _PLAIN or t.data == "type_name"
                                        and str(t.children[-1]) in types.fields)

    return plain(pt) and plain(at) and type_text(pt) != type_text(at)

"""Top-level declarations: collect types, constants, externs, actions, parsers and controls.

This pass resolves every type reference (with p4c's rules for widths and typedefs)
and evaluates constants, so the code generator only sees resolved types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lark import Token, Tree

from ..api import P4CompileError
from ..frontend.literals import parse_int
from ..frontend.parser import LineMap
from . import declarations
from .annotations import string_value
from .exprs import ExprChecker, GlobalScope
from .types import (
    ArrayT,
    BitT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    HeaderT,
    IntLitT,
    MatchKindT,
    NamedT,
    NewBitT,
    P4Type,
    SpecializedT,
    StackT,
    StringT,
    StructLikeT,
    StructT,
    TupleT,
    TypeVar,
    UnionT,
    VarbitT,
    VoidT,
)


@dataclass
class Param:
    name: str
    direction: str  # "in", "out", "inout" or "" (directionless)
    type: P4Type
    node: Tree | None = None
    annotations: dict[str, list] = field(default_factory=dict)


def cp_name(p: Param) -> str:
    """Control-plane name of an action parameter (its ``@name`` if given)."""
    n = p.annotations.get("name")
    return n[0] if n and isinstance(n[0], str) else p.name


@dataclass
class FuncSig:
    """Signature of an extern function/method or an action."""

    name: str
    ret: P4Type
    params: list[Param]
    type_params: list[str] = field(default_factory=list)


@dataclass
class ExternDecl:
    name: str
    type_params: list[str]
    methods: dict[str, list[FuncSig]]
    ctors: list[list[Param]]


@dataclass
class Const:
    name: str
    type: P4Type
    value: int


def ann_dict(node: Tree | None, ctx: Decls) -> dict[str, list]:
    """Annotations as name -> list of argument values (strings or ints)."""
    out: dict[str, list] = {}
    if node is None:
        return out
    for a in node.children:
        name = str(a.children[0])[1:]
        vals: list = []
        body = a.children[1] if len(a.children) > 1 else None
        if body is not None:
            for e in body.children:
                if string_value(e) is not None:
                    vals.append(string_value(e))
                elif e.data == "int_lit":
                    vals.append(parse_int(str(e.children[0]))[0])
                elif e.data == "ident":
                    vals.append(str(e.children[-1]))
                else:
                    vals.append(None)
        out[name] = vals
    return out


def is_fixed_width(t: P4Type) -> bool:
    """A type a header field may have besides varbit (P4_16: structs of fixed-width fields too)."""
    if isinstance(t, (BitT, BoolT)) or isinstance(t, EnumT) and t.underlying is not None:
        return True
    return isinstance(t, StructT) and all(is_fixed_width(ft) for _, ft in t.fields)


#: the widest bit<N>/int<N>/varbit<N> p4c's front end accepts
MAX_WIDTH = 2048


#: the tables of ``Decls`` that hold top-level names (one namespace in p4c)
_SPACES = ("types", "consts", "externs", "extern_funcs", "actions", "functions", "parsers",
           "controls", "type_decls", "instances")


class Decls:
    """Program-wide declarations (the global scope)."""

    def __init__(self, lines: LineMap):
        self.lines = lines
        self.list_items: dict[str, list] = {}  # list expressions' items (exprs.ExprChecker)
        self.types: dict[str, P4Type] = {}
        self.errors: list[str] = []
        self.match_kinds: list[str] = []
        self.consts: dict[str, Const] = {}
        self.externs: dict[str, ExternDecl] = {}
        self.extern_funcs: dict[str, list[FuncSig]] = {}
        self.actions: dict[str, Tree] = {}
        self.parsers: dict[str, Tree] = {}
        self.controls: dict[str, Tree] = {}
        self.type_decls: dict[str, list[Param]] = {}  # parser/control/package type declarations
        # generic structs/headers (generictypes.py): a use left open in an extern's prototype
        # (``void m<T>(in S<T> x)``) is an opaque specialised type
        self.generic_structs: set[str] = set()
        self.instances: dict[str, Tree] = {}
        self.global_externs: list[Tree] = []
        self.functions: dict[str, Tree] = {}
        self.header_order: list[StructLikeT] = []
        self._arrays: dict[tuple, ArrayT] = {}
        #: names a type made after the program started naming them (an array type first met in a
        #: block); set by ``program.Program``
        self.type_namer: Callable[[StructLikeT], None] | None = None
        self.field_annotations: dict[tuple[str, str], dict[str, list]] = {}
        #: warnings found while checking ((line of the preprocessed text, kind, text) -> node);
        #: p4warnings.py formats them with the others
        self.found_warnings: dict[tuple[int, int, str, str], object] = {}

    # ---------------------------------------------------------------- errors
    def warn(self, node, kind: str, text: str) -> None:
        """Record a p4c warning at ``node`` (once per position and text)."""
        meta = getattr(node, "meta", None)
        if meta is None or meta.empty:
            return
        self.found_warnings.setdefault((meta.line, meta.column, kind, text), node)

    def err(self, node, msg: str) -> P4CompileError:
        line, col = 0, 0
        if isinstance(node, Token):
            line, col = node.line or 0, node.column or 0
        elif node is not None and getattr(node, "meta", None) is not None and not node.meta.empty:
            line, col = node.meta.line, node.meta.column
        f, ln = self.lines.where(line)
        return P4CompileError(msg, f, ln, col)

    # ---------------------------------------------------------------- types
    def resolve_type(self, node, tvars: dict[str, P4Type] | None = None) -> P4Type:
        tvars = tvars or {}
        if isinstance(node, Token):
            return self._named_type(str(node), node, tvars)
        d = node.data
        if d == "t_bool":
            return BoolT()
        if d == "t_error":
            return ErrorT()
        if d == "t_string":
            return StringT()
        if d == "t_void":
            return VoidT()
        if d == "t_match_kind":
            return MatchKindT()
        if d == "t_bit1":
            return BitT(1)
        if d == "t_int_inf":
            return IntLitT()
        if d in ("t_bit", "t_int", "t_varbit"):
            w = self.const_int(node.children[0])
            if w > MAX_WIDTH:  # p4c's P4CConfiguration::maximumWidthSupported
                raise self.err(node, f"{w}: this implementation does not support bitstrings "
                                     "this large")
            if w <= 0 and d != "t_bit":
                raise self.err(node, f"width must be positive, got {w}")
            if d == "t_varbit":
                return VarbitT(w)
            if w <= 0:
                raise self.err(node, f"width must be positive, got {w}")
            return BitT(w, d == "t_int")
        if d == "t_dontcare":
            return DontCareT()
        if d == "type_name":
            tok = node.children[-1]
            return self._named_type(str(tok), tok, tvars)
        if d == "specialized_type":
            base = node.children[0].children[-1]
            args = tuple(self.resolve_type(a, tvars) for a in node.children[-1].children)
            return self._specialize(str(base), args, node)
        if d == "stack_type":
            elem = self.resolve_type(node.children[0], tvars)
            size = self.const_int(node.children[1])
            if size <= 0:
                raise self.err(node, f"array size must be positive, got {size}")
            if isinstance(elem, (HeaderT, UnionT)):
                return StackT(elem, size)
            return self.array_type(elem, size, node)
        if d == "tuple_type":
            return TupleT(tuple(self.resolve_type(a, tvars) for a in node.children[0].children))
        raise self.err(node, f"unsupported type syntax {d}")

    def array_type(self, elem: P4Type, size: int, node) -> P4Type:
        """``elem[size]`` of a non-header type: one ``ArrayT`` per element type and size."""
        if not isinstance(elem, (BitT, BoolT, ErrorT, EnumT, StructT, TypeVar)):
            raise self.err(node, f"array element type {elem} is not supported: elements are "
                                 "headers, header unions, bit<W>, int<W>, bool, error, enums, "
                                 "structs or arrays")
        key = (elem, size)  # structs and enums hash by identity (also after unpickling)
        t = self._arrays.get(key)
        if t is None:
            t = ArrayT(f"{elem}[{size}]", [(str(i), elem) for i in range(size)], elem=elem, size=size)
            self._arrays[key] = t
            if isinstance(elem, TypeVar):  # a generic body checked with T opaque: no code
                return t
            self.header_order.append(t)
            if self.type_namer is not None:
                self.type_namer(t)
        return t

    def _named_type(self, name: str, node, tvars: dict[str, P4Type]) -> P4Type:
        if name in tvars:
            return tvars[name]
        if name in self.types:
            return self.types[name]
        if name in self.externs or name in self.type_decls or name in self.parsers or name in self.controls:
            return NamedT(name)
        raise self.err(node, f"undeclared type {name}")

    def _specialize(self, base: str, args: tuple[P4Type, ...], node) -> P4Type:
        if base in self.externs:
            want = len(self.externs[base].type_params)
            # v1model programs commonly write register<bit<32>>(N): the index type is then free
            if want != len(args) and not (base in ("register", "counter", "meter", "direct_meter")
                                          and 1 <= len(args) < want):
                raise self.err(node, f"{base} expects {want} type arguments, got {len(args)}")
            return SpecializedT(base, args)
        if base in self.type_decls or base in self.parsers or base in self.controls \
                or base in self.generic_structs:
            return SpecializedT(base, args)
        raise self.err(node, f"type {base} is not generic")

    # ---------------------------------------------------------------- constants
    def const_int(self, node) -> int:
        """Evaluate a compile-time integer expression (widths, sizes, constants)."""
        if isinstance(node, Token):
            if node.type == "INTEGER":
                return parse_int(str(node))[0]
            raise self.err(node, f"expected an integer constant, got {node}")
        code, t = ExprChecker(self, GlobalScope(self)).expr(node)
        if not isinstance(t, (BitT, IntLitT)):
            raise self.err(node, f"expected an integer constant, got type {t}")
        try:
            return int(code)
        except ValueError:
            raise self.err(node, "expression is not a compile-time constant") from None

    def const_type(self, node) -> P4Type:
        """The type of a compile-time expression (``int`` for an untyped literal)."""
        if isinstance(node, Token):
            return parse_int(str(node))[1] or IntLitT()
        return ExprChecker(self, GlobalScope(self)).expr(node)[1]

    # ---------------------------------------------------------------- declarations
    def collect(self, tree: Tree) -> None:
        kinds: dict[str, str] = {}  # top-level name -> the table it was declared in
        sizes = self._space_sizes()
        for d in tree.children:
            if d is None:
                continue
            fn = getattr(self, "_d_" + d.data, None)
            if fn is None:
                raise self.err(d, f"unsupported declaration {d.data}")
            fn(d)
            now = self._space_sizes()
            for space, before, after in zip(_SPACES, sizes, now, strict=True):
                if after > before:
                    self._claim(kinds, next(reversed(getattr(self, space))), space, d)
            sizes = now

    def _space_sizes(self) -> list[int]:
        return [len(getattr(self, space)) for space in _SPACES]

    def _claim(self, kinds: dict[str, str], name: str, space: str, node) -> None:
        """One top-level namespace for types, constants, objects and callables (p4c).  A parser
        or control may take the name of an extern function declared before it: p4c compiles its
        sample with a ``control verify_checksum`` after v1model's function of that name."""
        if kinds.get(name) == "extern_funcs" and space in ("parsers", "controls"):
            return
        if kinds.setdefault(name, space) != space:
            raise self.err(node, f"Re-declaration of {name} with different type")

    def _name(self, node) -> str:
        return str(node.children[0]) if isinstance(node, Tree) else str(node)

    def _declare_type(self, name: str, t: P4Type, node) -> None:
        if name in self.types:
            raise self.err(node, f"duplicate declaration of type {name}")
        self.types[name] = t

    def _d_empty_decl(self, d: Tree) -> None:
        pass

    def _fields(self, d: Tree, owner: str) -> list[tuple[str, P4Type]]:
        out: list[tuple[str, P4Type]] = []
        seen = set()
        for f in d.children[2:]:
            fname = self._name(f.children[2])
            if f.children[0] is not None:
                anns = self.field_annotations[(owner, fname)] = ann_dict(f.children[0], self)
                if "match" in anns and (len(anns["match"]) != 1
                                        or anns["match"][0] not in self.match_kinds):
                    raise self.err(f, f"{fname}: @match must name one match_kind (p4c: "
                                      "expected a match_kind)")
            if fname in seen:
                raise self.err(f, f"duplicate field {fname} in {owner}")
            seen.add(fname)
            out.append((fname, self.resolve_type(f.children[1])))
        return out

    def _d_header_decl(self, d: Tree) -> None:
        name = self._name(d.children[1])
        fields = self._fields(d, name)
        nvar = 0
        for fname, ft in fields:
            if isinstance(ft, VarbitT):
                nvar += 1
            elif not is_fixed_width(ft):
                raise self.err(d, f"header {name}: field {fname} has type {ft}; headers hold only "
                                  "bit<W>, int<W>, varbit<W>, bool, serializable enums or structs of these")
        if nvar > 1:
            raise self.err(d, f"header {name} has more than one varbit field")
        h = HeaderT(name, fields, ann_dict(d.children[0], self))
        if h.width % 8:
            raise self.err(d, f"header {name} is {h.width} bits; BMv2 requires headers to be "
                              "a multiple of 8 bits")
        self._declare_type(name, h, d)
        self.header_order.append(h)

    def _d_header_union_decl(self, d: Tree) -> None:
        name = self._name(d.children[1])
        fields = self._fields(d, name)
        for fname, ft in fields:
            if not isinstance(ft, HeaderT):
                raise self.err(d, f"header_union {name}: member {fname} has type {ft}; a header union holds "
                                  "only headers")
        if not fields:
            raise self.err(d, f"header_union {name} has no members")
        u = UnionT(name, fields, ann_dict(d.children[0], self))
        self._declare_type(name, u, d)
        self.header_order.append(u)

    def _d_struct_decl(self, d: Tree) -> None:
        name = self._name(d.children[1])
        s = StructT(name, self._fields(d, name), ann_dict(d.children[0], self))
        self._declare_type(name, s, d)
        self.header_order.append(s)

    def _d_typedef_decl(self, d: Tree) -> None:
        t = self.resolve_type(d.children[2])
        name = self._name(d.children[3])
        if str(d.children[1]) == "type" and not isinstance(t, (BitT, BoolT, IntLitT)):
            raise self.err(d.children[3], f"{name}: `type' can only be applied to base types")
        if str(d.children[1]) == "type" and type(t) is BitT:  # other new types: aliases
            t = NewBitT(t.width, t.signed, name)
        self._declare_type(name, t, d)

    def _d_enum_decl(self, d: Tree) -> None:
        name = self._name(d.children[1])
        members = [self._name(m) for m in d.children[2:] if m is not None]
        declarations.unique_members(self, d, f"enum {name}", members)
        self._declare_type(name, EnumT(name, members), d)

    def _d_ser_enum_decl(self, d: Tree) -> None:
        under = self.resolve_type(d.children[1])
        name = self._name(d.children[2])
        if isinstance(under, NewBitT):
            shown = d.children[1].children[-1] if d.children[1].data == "type_name" else under
            raise self.err(d.children[1], f"{shown}: Illegal type for enum; only bit<> and int<> "
                                          "are allowed; note that type-declared types are not "
                                          "allowed even if they are fixed-size")
        if not isinstance(under, BitT):
            raise self.err(d, f"enum {name}: underlying type must be bit<W> or int<W>, not {under}")
        e = EnumT(name, [], under)
        for m in d.children[3:]:
            if m is None:
                continue
            mname = self._name(m.children[0])
            declarations.unique_members(self, m, f"enum {name}", [mname], e.members)
            e.members.append(mname)
            value = self.const_int(m.children[1])
            if isinstance(self.const_type(m.children[1]), IntLitT):
                declarations.ser_enum_value_fits(self, m, mname, value, under)
            e.values[mname] = value & under.mask
        self._declare_type(name, e, d)

    def _d_error_decl(self, d: Tree) -> None:
        declarations.unique_members(self, d, "error",
                                    [self._name(m) for m in d.children[1:] if m is not None], self.errors)
        for m in d.children[1:]:
            if m is not None and self._name(m) not in self.errors:
                self.errors.append(self._name(m))

    def _d_match_kind_decl(self, d: Tree) -> None:
        declarations.unique_members(self, d, "match_kind",
                                    [self._name(m) for m in d.children[1:] if m is not None],
                                    self.match_kinds)
        for m in d.children[1:]:
            if m is not None:
                self.match_kinds.append(self._name(m))

    def _d_const_decl(self, d: Tree) -> None:
        name = self._name(d.children[2])
        t = self.resolve_type(d.children[1])
        ec = ExprChecker(self, GlobalScope(self))
        code, et = ec.expr(d.children[3], expected=t)
        code = ec.convert(code, et, t, d.children[3])
        try:
            v = {"True": True, "False": False}[code] if isinstance(t, BoolT) else int(code)
        except (ValueError, KeyError):
            raise self.err(d, f"constant {name} is not a compile-time constant") from None
        if name in self.consts:
            raise self.err(d, f"duplicate declaration of constant {name}")
        self.consts[name] = Const(name, t, v)

    def params(self, node: Tree | None, tvars: dict[str, P4Type] | None = None) -> list[Param]:
        out: list[Param] = []
        if node is None:
            return out
        for p in node.children:
            if p is None:
                continue
            ann, dirn, t, nm, _default = p.children
            direction = str(dirn.children[0]) if dirn is not None else ""
            if any(q.name == self._name(nm) for q in out):
                raise self.err(p, f"duplicate parameter name {self._name(nm)}")
            ptype = self.resolve_type(t, tvars)
            if direction and self._is_extern(ptype):
                raise self.err(p, f"{self._name(nm)}: extern values cannot be passed in/out/inout")
            if isinstance(_default, Tree) and not isinstance(ptype, TypeVar) \
                    and not any(_default.find_data("ident")):  # names resolve where it is used
                ec = ExprChecker(self, GlobalScope(self))
                ec.convert(*ec.expr(_default, ptype), ptype, _default)
            out.append(Param(self._name(nm), direction, ptype, p,
                             ann_dict(ann, self)))
        return out

    def _is_extern(self, t: P4Type) -> bool:
        name = t.base if isinstance(t, SpecializedT) else getattr(t, "name", None)
        return isinstance(t, (SpecializedT, NamedT)) and name in self.externs

    @staticmethod
    def type_param_names(node: Tree | None) -> list[str]:
        if node is None:
            return []
        return [str(c.children[0]) for c in node.children if isinstance(c, Tree)]

    def _sig(self, ret_node, name_node, tp_node, params_node, outer: list[str]) -> FuncSig:
        tps = self.type_param_names(tp_node)
        tvars = {n: TypeVar(n) for n in outer + tps}
        return FuncSig(self._name(name_node), self.resolve_type(ret_node, tvars),
                       self.params(params_node, tvars), tps)

    def _d_extern_decl(self, d: Tree) -> None:
        name = self._name(d.children[1])
        tps = self.type_param_names(d.children[2])
        ext = ExternDecl(name, tps, {}, [])
        self.externs[name] = ext
        tvars = {n: TypeVar(n) for n in tps}
        for m in d.children[3:]:
            if m.data == "ctor_proto":
                ext.ctors.append(self.params(m.children[2], tvars))
            else:
                fp = m.children[1]
                sig = self._sig(fp.children[0], fp.children[1], fp.children[2], fp.children[3], tps)
                if any(len(o.params) == len(sig.params) for o in ext.methods.get(sig.name, [])):
                    # p4c overloads methods by their number of parameters only
                    raise self.err(m, f"extern {name}: duplicate method {sig.name} with "
                                      f"{len(sig.params)} parameters")
                ext.methods.setdefault(sig.name, []).append(sig)

    def _d_extern_func_decl(self, d: Tree) -> None:
        sig = self._sig(d.children[1], d.children[2], d.children[3], d.children[4], [])
        self.extern_funcs.setdefault(sig.name, []).append(sig)

    def _d_action_decl(self, d: Tree) -> None:
        name = self._name(d.children[1])
        if name in self.actions:
            raise self.err(d, f"duplicate action {name}")
        self.actions[name] = d

    def _d_function_decl(self, d: Tree) -> None:
        name = self._name(d.children[2])
        if name in self.functions:
            raise self.err(d, f"duplicate function {name}")
        self.functions[name] = d

    def _d_parser_type_decl(self, d: Tree) -> None:
        tps = self.type_param_names(d.children[2])
        self._unique(self.type_decls, d)
        self.type_decls[self._name(d.children[1])] = self.params(d.children[3], {n: TypeVar(n) for n in tps})

    _d_control_type_decl = _d_parser_type_decl
    _d_package_decl = _d_parser_type_decl

    def _d_parser_decl(self, d: Tree) -> None:
        if d.children[2] is not None:
            raise self.err(d, "generic parser: instantiate it with explicit type arguments "
                              "(P<...>() p;), its type arguments are not inferred here")
        self._unique(self.parsers, d)
        self.parsers[self._name(d.children[1])] = d

    def _d_control_decl(self, d: Tree) -> None:
        if d.children[2] is not None:
            raise self.err(d, "generic control: instantiate it with explicit type arguments "
                              "(C<...>() c;), its type arguments are not inferred here")
        self._unique(self.controls, d)
        self.controls[self._name(d.children[1])] = d

    def _unique(self, table: dict, d: Tree) -> None:
        if (name := self._name(d.children[1])) in table:
            raise self.err(d.children[1], f"duplicate declaration of {name}")

    def _d_instantiation(self, d: Tree) -> None:
        name = self._name(d.children[3])
        t = self.resolve_type(d.children[1])
        tname = t.base if isinstance(t, SpecializedT) else t.name if isinstance(t, NamedT) else str(t)
        if name in self.instances:
            raise self.err(d, f"duplicate instance {name}")
        if tname in self.externs:
            self.global_externs.append(d)  # e.g. a register shared by several controls
        self.instances[name] = d

    # ---------------------------------------------------------------- helpers
    def error_code(self, name: str, node) -> int:
        if name not in self.errors:
            raise self.err(node, f"undeclared error {name}")
        return self.errors.index(name)


def is_header(t: P4Type) -> bool:
    return isinstance(t, HeaderT)


def is_compound(t: P4Type) -> bool:
    return isinstance(t, (StructLikeT, StackT))


__all__ = ["Decls", "Param", "FuncSig", "ExternDecl", "Const", "ann_dict", "is_header",
           "is_compound", "StructT", "UnionT"]

"""Calls: actions, table apply, header/stack methods, packet_in/out, v1model externs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lark import Tree

from .call_args import bind_arguments, check_bindings, compatible
from .decls import ann_dict, is_fixed_width
from .exprs import Sym, is_const, wrap_code
from .fields import SIZE_METHODS, pyfield, size_in_bits
from .functions import call_function
from .implementation import profile_info
from .statements import text_of
from .types import (
    STACK_ONLY,
    ArrayT,
    BitT,
    BoolT,
    EnumT,
    ErrorT,
    HeaderT,
    IntLitT,
    NamedT,
    P4Type,
    SpecializedT,
    StackT,
    StructT,
    UnionT,
    VarbitT,
)
from .unions import union_next_member
from .v1model_functions import v1_function

SUPPORTED_EXTERNS = {"register", "counter", "direct_counter", "meter", "direct_meter", "action_profile",
                     "action_selector"}
EXTERN_FUNCS = {"mark_to_drop", "hash", "verify_checksum", "update_checksum", "verify_checksum_with_payload",
                "update_checksum_with_payload", "clone", "clone_preserving_field_list", "clone3", "resubmit",
                "recirculate",
                "resubmit_preserving_field_list", "recirculate_preserving_field_list", "random", "digest",
                "truncate", "assert", "assume", "log_msg", "verify"}



@dataclass
class StatefulExtern:
    """What a register/counter/meter declaration fixes at compile time; the target makes the
    stateful object from it when a switch is built."""

    name: str
    size: int = 0          # cells (0: direct)
    width: int = 0         # register element width
    signed: bool = False
    kind: int = 0          # CounterType / MeterType
    direct: bool = False
    table: str | None = None  # direct counter/meter: the table that owns it


@dataclass
class ExternInst:
    name: str      # P4Info name (MyIngress.r)
    extern: str    # extern type
    pyname: str
    obj: Any       # StatefulExtern, or implementation.ProfileInfo for a profile
    type_args: tuple
    annotations: dict
    table: str | None = None
    read_targets: list[str] = field(default_factory=list)  # direct_meter: read()'s destinations


def _args(n: Tree) -> tuple[Tree, list]:
    if n.data == "tcall":
        callee, _tlt, targs, args = n.children
    else:
        callee, args = n.children
        targs = None
    lst = [a for a in (args.children if args is not None else []) if a is not None]
    for a in lst:
        if isinstance(a, Tree) and a.data in ("named_arg", "dontcare_arg"):
            raise ValueError(a)
    return callee, lst, targs


class Calls:
    def __init__(self, prog):
        self.prog = prog

    # ------------------------------------------------------------ instantiation
    def instantiate(self, g, loc: Tree) -> None:
        ann, tnode, args_node, nm = loc.children
        local = str(nm.children[0])
        if g.kind != "control":
            raise g.err(loc, f"extern instance {local}: register/counter/meter instances are only "
                             "supported inside controls")
        t = g.d.resolve_type(tnode)
        base = t.base if isinstance(t, SpecializedT) else t.name if isinstance(t, NamedT) else str(t)
        targs = t.args if isinstance(t, SpecializedT) else ()
        if base not in g.d.externs:
            raise g.err(loc, f"{base} is not an extern type")
        if base not in SUPPORTED_EXTERNS:
            raise g.err(loc, f"extern {base} is not supported by this target")
        args = [a for a in (args_node.children if args_node is not None else []) if a is not None]
        vals = self.ctor_values(g, base, args, loc)
        annd = ann_dict(ann, g.d)
        qname = g.qualify(local, annd)
        pyname = f"X_{self.prog.pyident(qname)}"
        if base in ("action_profile", "action_selector"):
            obj = profile_info(qname, base, vals, annd)
        elif base == "register":
            # a serializable enum element is stored as its underlying bit<W> (p4c's BMv2 back end)
            elem = targs[0] if targs else None
            if isinstance(elem, EnumT) and isinstance(elem.underlying, BitT):
                elem = elem.underlying
            if not isinstance(elem, BitT):
                raise g.err(loc, "register needs a bit<W>/int<W> or serializable enum element type")
            obj = StatefulExtern(qname, vals[0], elem.width, elem.signed)
        elif base == "counter":
            obj = StatefulExtern(qname, vals[0], kind=vals[1])
        elif base == "direct_counter":
            obj = StatefulExtern(qname, kind=vals[0], direct=True)
        elif base == "meter":
            obj = StatefulExtern(qname, vals[0], kind=vals[1])
        else:
            obj = StatefulExtern(qname, kind=vals[0], direct=True)
        inst = ExternInst(qname, base, pyname, obj, targs, annd)
        self.prog.extern_insts[qname] = inst
        g.scope.declare(local, Sym("extern", t, pyname, False, inst))

    def ctor_values(self, g, base: str, args: list, loc: Tree) -> list:
        """Compile-time constructor arguments (ints; enum members as their names)."""
        ctors = g.d.externs[base].ctors
        if not any(len(c) == len(args) for c in ctors):
            raise g.err(loc, f"{base} constructor takes {' or '.join(str(len(c)) for c in ctors)} "
                             f"arguments, got {len(args)}")
        vals: list = []
        ctor = next(c for c in ctors if len(c) == len(args))
        for a, p in zip(args, ctor, strict=True):
            algo = getattr(p.type, "name", None) == "HashAlgorithm"
            c, t = g.ex(a) if algo or isinstance(p.type, NamedT) else (g.ex_to(a, p.type), None)
            if not is_const(c):
                raise g.err(a, "constructor arguments must be compile-time constants")
            if algo:
                if not (isinstance(t, EnumT) and t.name == "HashAlgorithm"):
                    raise g.err(a, f"{base}: the algorithm must be a HashAlgorithm member, got {t}")
                vals.append(t.members[int(c)])
            else:
                vals.append(int(c))
        return vals

    # ------------------------------------------------------------ dispatch
    def call_expr(self, g, n: Tree) -> tuple[str, P4Type]:
        r = self._dispatch(g, n, as_expr=True)
        if isinstance(r, list):
            raise g.err(n, "this call does not return a value")
        return r

    def call_stmt(self, g, n: Tree) -> list[str]:
        r = self._dispatch(g, n, as_expr=False)
        if isinstance(r, tuple):
            return [r[0]]
        return r

    def _dispatch(self, g, n: Tree, as_expr: bool):
        try:
            callee, args, targs = _args(n)
        except ValueError as e:
            raise g.err(e.args[0], "named and don't-care arguments are not supported") from None
        if isinstance(callee, Tree) and callee.data == "member":
            base, method = callee.children[0], str(callee.children[1].children[0])
            if isinstance(base, Tree) and base.data == "ident":
                sym = g.scope.lookup(str(base.children[-1]))
                if sym is None:
                    raise g.err(base, f"undeclared identifier {base.children[-1]}")
                if sym.kind == "table":
                    if method != "apply":
                        raise g.err(callee, f"tables have no method {method}")
                    if g.in_action is not None:
                        raise g.err(n, f"table {sym.info.local} cannot be applied inside an action")
                    if args:
                        raise g.err(n, "apply() takes no arguments")
                    if sym.info.applied and not g.prog.checking_unused:
                        raise g.err(n, f"table {sym.info.local} is applied more than once; "
                                       "p4c's BMv2 back end "
                                       "supports one apply site per table (simple_switch.md)")
                    sym.info.applied = True
                    return f"{sym.code}(L)", NamedT("__apply_result__")
                if sym.kind == "extern":
                    # a function may use a top-level instance (p4c inlines it into a control)
                    if g.kind not in ("control", "function"):
                        raise g.err(n, f"{sym.info.extern} {base.children[-1]} can only be used in controls")
                    return self.extern_method(g, sym, method, args, n)
                if sym.kind == "control":
                    if method != "apply":
                        raise g.err(callee, f"controls have no method {method}")
                    if g.in_action is not None:
                        raise g.err(n, f"{base.children[-1]}.apply(): apply cannot be called "
                                       "from actions")
                    return self.control_apply(g, sym, args, n, str(base.children[-1]))
                if sym.kind in ("packet_in", "packet_out"):
                    return self.packet_method(g, sym, method, args, targs, n)
                if sym.kind == "action":
                    raise g.err(n, f"action {base.children[-1]} has no methods")
            code, t = g.ex(base)
            if isinstance(t, HeaderT):
                return self.header_method(g, base, code, t, method, args, n)
            if isinstance(t, UnionT):
                return self.union_method(g, base, code, t, method, args, n)
            if isinstance(t, StackT) and method in ("push_front", "pop_front"):
                if len(args) != 1:
                    raise g.err(n, f"{method} takes 1 argument")
                k = g.ec()._const_of(args[0])
                if k < 0:
                    raise g.err(args[0], f"{method} count must not be negative, got {k}")
                g.lvalue(base)
                return []
            if isinstance(t, ArrayT) and method in STACK_ONLY + ("isValid", "setValid", "setInvalid"):
                what = "header stacks" if method in STACK_ONLY else "headers and header unions"
                raise g.err(callee, f"{method} is only defined for {what}; {t} is an array of {t.elem}")
            raise g.err(callee, f"type {t} has no method {method}")
        if isinstance(callee, Tree) and callee.data == "ident":
            name = str(callee.children[-1])
            sym = g.scope.lookup(name)
            if sym is not None and sym.kind == "action":
                if targs:
                    raise g.err(n, f"{name}: Cannot supply type parameters for an action "
                                   "invocation")
                return self.action_call(g, sym.info, args, n)
            if sym is None and name in getattr(self.prog, "functions", {}):
                finfo = self.prog.functions[name]
                return call_function(g, finfo, args, n, as_expr)
            if name in g.d.extern_funcs:
                return self.extern_func(g, name, args, targs, n)
            if sym is None:
                raise g.err(callee, f"undeclared function or action {name}")
            raise g.err(callee, f"{name} is not callable")
        raise g.err(n, "unsupported call")

    # ------------------------------------------------------------ actions
    def action_call(self, g, info, args, n) -> list:
        """Check a call of an action: where it may be called, its arguments (the call itself is
        lowered to ``ir.ActionCall``, copy-in/out and union membership included)."""
        if g.kind != "control":
            raise g.err(n, f"action {info.local} can only be called from a control")
        if g.in_action is not None and g.in_action is info:
            raise g.err(n, "recursive action call")
        # directionless parameters take any value here, as `in` ones (p4c's type checker: only
        # a table's default_action and entries need compile-time constants)
        bind_arguments(g, f"action {info.local}", info.params, args, n)
        if g.in_action is None:  # called from an apply block: p4c lists it in P4Info
            self.prog.direct_actions.add(info.name)
        return []

    def control_apply(self, g, sym, args, n, inst: str) -> list:
        """Check an apply of a sub-control: its arguments against the parameters (the apply is
        lowered to ``ir.ControlApply``, argument substitution as p4c's inliner, inlining.py)."""
        sub = sym.info
        if g.kind != "control":
            raise g.err(n, "controls can only be applied from controls")
        if len(args) != len(sub.params):
            shown = sub.name.removeprefix("__unused__.")
            raise g.err(n, f"{shown}.apply expects {len(sub.params)} arguments, got {len(args)}")
        check_bindings(g, sub.params, args)
        return []

    # ------------------------------------------------------------ headers
    def header_method(self, g, base, code, t, method, args, n):
        if args:
            raise g.err(n, f"{method}() takes no arguments")
        if method == "isValid":
            return f"{code}._v", BoolT()
        if method in SIZE_METHODS:  # compile-time sizes
            maximum, unit = SIZE_METHODS[method]
            return str(size_in_bits(t, maximum) // unit), IntLitT()
        if method == "setValid":
            # p4c compiles setValid() to BMv2's add_header: an invalid header is reset to 0 first
            g.lvalue(base)
            return []
        if method == "setInvalid":
            g.lvalue(base)  # BMv2 remove_header: only the validity bit changes
            return []
        raise g.err(n, f"headers have no method {method}")

    def union_method(self, g, base, code, t, method, args, n):
        """``isValid()`` (some member is valid) and ``setInvalid()`` (every member) of a header union."""
        if args:
            raise g.err(n, f"{method}() takes no arguments")
        members = [f"{code}.{pyfield(m)}" for m, _ in t.fields]
        if method == "isValid":
            return "(" + " or ".join(f"{c}._v" for c in members) + ")", BoolT()
        if method == "setInvalid":
            g.lvalue(base)
            return []
        raise g.err(n, f"header unions have no method {method} (set a member valid instead)")

    # ------------------------------------------------------------ packets
    def packet_method(self, g, sym, method, args, targs, n):
        pk = sym.code
        if sym.kind == "packet_out":
            if method != "emit" or len(args) != 1:
                raise g.err(n, "packet_out supports only emit(hdr)")
            _code, t = g.ex(args[0])
            self.check_emit(g, t, args[0])
            return []
        if g.kind != "parser":
            raise g.err(n, "packet_in methods can only be used in parsers")
        oob = self.prog.err_short
        if method == "extract":
            if len(args) not in (1, 2):
                raise g.err(n, f"extract takes 1 or 2 arguments, got {len(args)}")
            a = args[0]
            is_next = isinstance(a, Tree) and a.data == "member" and str(a.children[1].children[0]) == "next"
            umember = union_next_member(g, a)
            if umember is not None:  # extract(stack.next.member) on a stack of header unions
                _scode, st = g.ex(a.children[0].children[0])
                g.lvalue(a.children[0].children[0])
                st.elem.field_type(umember)
                return []
            if is_next:
                _scode, st = g.ex(a.children[0])
                g.lvalue(a.children[0])
                t = st.elem if isinstance(st, StackT) else None
                if t is None:
                    raise g.err(a, ".next needs a header stack")
            else:
                t = g.lvalue(a)
            if not isinstance(t, HeaderT):
                raise g.err(a, f"extract needs a header, got {t}")
            var = any(f.__class__.__name__ == "VarbitT" for _, f in t.fields)
            if len(args) == 2:
                if not var:
                    raise g.err(n, "two-argument extract needs a header with a varbit field; "
                                   f"{t.name} has none")
                g.ex_to(args[1], BitT(32))
            elif var:
                raise g.err(n, f"header {t.name} has a varbit field: use extract(hdr, sizeInBits)")
            if is_next:
                if not isinstance(st.elem, HeaderT):
                    raise g.err(a, "extract into .next of a stack of header unions: extract into a member "
                                   "of an indexed element instead")
            return []
        if method == "lookahead":
            if args or targs is None or len(targs.children) != 1:
                raise g.err(n, "lookahead<T>() takes one type argument and no arguments")
            t = g.d.resolve_type(targs.children[0])
            if isinstance(t, BitT):
                v = f"_look({pk}, {t.width}, {oob})"
                return (wrap_code(v, t) if t.signed else v), t
            if isinstance(t, HeaderT) or isinstance(t, StructT) and t.fields and is_fixed_width(t):
                if isinstance(t, HeaderT) and any(isinstance(ft, VarbitT) for _, ft in t.fields):
                    raise g.err(n, f"lookahead<{t.name}>: the header has a varbit field")
                return f"_lookh({pk}, X_{t.pyname}, {t.pyname})", t
            raise g.err(n, f"lookahead of type {t} is not supported")
        if method == "advance":
            if len(args) != 1:
                raise g.err(n, "advance takes 1 argument")
            g.ex_to(args[0], BitT(32))
            return []
        if method == "length":
            return f"({pk}.nbits >> 3)", BitT(32)
        raise g.err(n, f"packet_in has no method {method}")

    def check_emit(self, g, t: P4Type, node) -> None:
        if isinstance(t, HeaderT):
            return
        if isinstance(t, StackT):
            self.check_emit(g, t.elem, node)
            return
        if isinstance(t, (StructT, UnionT)):  # a union: its valid member, if any
            for _fname, ft in t.fields:
                self.check_emit(g, ft, node)
            return
        raise g.err(node, f"emit needs a header, stack or struct of headers, got {t}")

    # ------------------------------------------------------------ extern methods
    def extern_method(self, g, sym: Sym, method, args, n):
        inst: ExternInst = sym.info
        x = inst.pyname
        decl = g.d.externs[inst.extern]
        if method not in decl.methods:
            raise g.err(n, f"{inst.extern} has no method {method}")
        arities = sorted({len(s.params) for s in decl.methods[method]})
        if len(args) not in arities:
            raise g.err(n, f"{inst.extern}.{method} takes {' or '.join(map(str, arities))} arguments, "
                           f"got {len(args)}")
        if inst.extern == "register":
            elem = inst.type_args[0] if inst.type_args else None
            et = elem if isinstance(elem, EnumT) else BitT(inst.obj.width, inst.obj.signed)
            if method == "read" and len(args) == 1:
                return f"{x}.read({self.index(g, args[0], inst)})", et
            if method == "read":
                t = g.lvalue(args[0])
                if not compatible(t, et):
                    raise g.err(args[0], f"register {inst.name} holds {et}, cannot read into {t}")
                self.index(g, args[1], inst)
                return []
            if method == "write":
                self.index(g, args[0], inst)
                g.ex_to(args[1], et)
                return []
        if inst.extern == "counter":
            self.index(g, args[0], inst)
            return []
        if inst.extern == "direct_counter":
            return []  # BMv2 counts every hit of the owning table's entries
        if inst.extern == "meter":
            t = g.lvalue(args[1])
            self.index(g, args[0], inst)
            self._color(t, args[1], g)
            return []
        if inst.extern == "direct_meter":
            t = g.lvalue(args[0])
            self._color(t, args[0], g)
            # p4c's BMv2 back end (DirectMeterMap::setDestination): one result field per meter
            target = text_of(args[0])
            other = next((p for p in inst.read_targets if p != target), None)
            if other is not None:
                raise g.err(args[0], f"all meter operations must write to the same destination, "
                                     f"however {target} and {other} are different")
            inst.read_targets.append(target)
            return []
        raise g.err(n, f"{inst.extern}.{method} is not supported")

    def _color(self, t, node, g) -> None:
        if not isinstance(t, BitT) and not (isinstance(t, EnumT) and t.underlying):
            raise g.err(node, f"meter result must be bit<W>, got {t}")

    def index(self, g, node, inst) -> str:
        c, t = g.ex(node)
        want = inst.type_args[1] if inst.extern == "register" and len(inst.type_args) > 1 else \
            inst.type_args[0] if inst.extern in ("counter", "meter") and inst.type_args else None
        if want is not None:
            return g.ec().convert(c, t, want, node)
        if isinstance(t, IntLitT):
            return c
        if not isinstance(t, BitT) or t.signed:
            raise g.err(node, f"index must be bit<W>, got {t}")
        return c

    # ------------------------------------------------------------ extern functions
    def extern_func(self, g, name, args, targs, n):
        sigs = g.d.extern_funcs[name]
        if name not in EXTERN_FUNCS:
            raise g.err(n, f"extern function {name} is not supported by this target")
        arities = sorted({len(s.params) for s in sigs})
        if len(args) not in arities:
            raise g.err(n, f"{name} takes {' or '.join(map(str, arities))} arguments, got {len(args)}")
        ntps = {len(s.type_params) for s in sigs if len(s.params) == len(args)}
        given = [t for t in targs.children if t is not None] if targs is not None else []
        if given and len(given) not in ntps:  # p4c: type arguments must match type parameters
            raise g.err(n, f"{name}: {len(given)} type arguments supplied while "
                           f"{' or '.join(map(str, sorted(ntps)))} are expected")
        if name == "verify":
            if g.kind != "parser":
                raise g.err(n, "verify() can only be called in a parser")
            g.ec().expect_bool(args[0])
            _c, t = g.ex(args[1])
            if not isinstance(t, ErrorT):
                raise g.err(args[1], f"verify needs an error value, got {t}")
            return []
        # p4c inlines a function at each call site, so its body may call what a control may
        # (checks_v1model.py says which controls may call a function with checksum calls)
        if g.kind not in ("control", "function"):
            raise g.err(n, f"{name} can only be called in a control")
        return v1_function(self, g, name, args, n, targs)


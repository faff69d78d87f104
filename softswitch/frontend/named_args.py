"""Calls for the source rewrites (a mixin of ``desugar.Desugar``): which declaration a call binds
to, named and default arguments made positional (``bind_names``, the argument-binding pass of
``bind_arguments.py``), don't-care ``_`` arguments made temporaries, and a call with effects
inside an expression hoisted before the statement (p4c's DontcareArgs and SideEffectOrdering)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from lark import Token, Tree

from .treenav import name_of

#: expression kinds whose value never changes, so they need no saving before a call
CONSTANT_KINDS = {"int_lit", "true_lit", "false_lit", "string_lit", "error_member", "type_member",
                  "dots_expr"}
#: expression node kinds (children of other kinds, e.g. ``name`` or a type, are not values)
EXPR_KINDS = {"ident", "member", "index", "slice", "call", "tcall", "binop", "lt", "gt", "bor",
              "bxor", "band", "shl", "shr", "land", "lor", "lnot", "bnot", "neg", "pos", "cast",
              "ternary", "list_expr", "this_expr", "ctor_call"} | CONSTANT_KINDS


@dataclass
class Callee:
    """What a call binds to: its parameters (``param`` trees) and, for user functions, the
    return type (a type tree) and whether it has out/inout parameters."""

    params: list[Tree]
    type_params: set[str] = field(default_factory=set)
    ret: Tree | None = None
    effects: bool = False
    own_type_params: tuple[str, ...] = ()  # in order: what explicit type arguments bind


def param_nodes(node: Tree | None) -> list[Tree]:
    return [p for p in (node.children if node is not None else []) if p is not None]


def param_direction(p: Tree) -> str:
    return str(p.children[1].children[0]) if p.children[1] is not None else ""


def mk_node(data: str, children: list, like) -> Tree:
    """A synthetic node that reports errors at the position of ``like``."""
    meta = like.meta if isinstance(like, Tree) else None
    t = Tree(data, children, meta)
    if isinstance(like, Token) and like.line is not None:
        t.meta.line, t.meta.column, t.meta.empty = like.line, like.column, False
    return t


def bind_named(args: list, pnames: set[str], err, where, owner: str = "") -> dict[str, Tree]:
    """Named arguments (``f(a = 1, b = 2)``) as parameter name -> value, checked as p4c binds
    them: all named or none, each a parameter of the callee (``owner``, for messages), once."""
    prefix = f"{owner}: " if owner else ""
    if any(not (isinstance(a, Tree) and a.data == "named_arg") for a in args):
        raise err(where, f"{prefix}either all or none of the arguments must be named")
    out: dict[str, Tree] = {}
    for a in args:
        nm = str(a.children[0])
        if nm not in pnames:
            raise err(a, f"{owner} has no parameter named {nm}" if owner else f"no parameter named {nm}")
        if nm in out:
            raise err(a, f"{prefix}argument {nm} given twice")
        out[nm] = a.children[1]
    return out


class ArgumentBinding:
    """Call binding; uses ``Desugar``'s scopes (``local``, ``top``, ``objects``, ``blocks``,
    ``externs``) and helpers (``err``, ``fresh``, ``var``, ``ident``, ``ordered``,
    ``_type_name``)."""

    def callee(self, call: Tree) -> Callee | None:
        f = call.children[0]
        if isinstance(f, Tree) and f.data == "ident":
            name = str(f.children[-1])
            return self.local.get(name) or self.top.get(name)
        if isinstance(f, Tree) and f.data == "member" and isinstance(f.children[0], Tree) \
                and f.children[0].data == "ident":
            obj = self.objects.get(str(f.children[0].children[-1]))
            method = name_of(f.children[1])
            if obj in self.blocks and method == "apply":
                return self.blocks[obj]
            cands = self.externs.get(obj or "", {}).get(method, [])
            if len(cands) == 1:
                return cands[0]
            by_arity = [c for c in cands if len(c.params) == len(self._args(call))]
            if len(by_arity) == 1 and not any(a.data == "named_arg" for a in self._args(call)):
                return by_arity[0]  # p4c overloads extern methods by their number of parameters
            names = {name_of(a.children[0]) for a in self._args(call) if a.data == "named_arg"}
            fit = [c for c in cands if names and names <= {name_of(p.children[3]) for p in c.params}]
            return fit[0] if len(fit) == 1 else None
        return None

    @staticmethod
    def _args(call: Tree) -> list:
        node = call.children[-1]
        return [a for a in (node.children if node is not None else []) if a is not None]

    def call(self, e: Tree, pre: list, top: bool):
        """Binds named/default/don't-care arguments, hoists effects out of the arguments and,
        inside an expression, the call itself."""
        c = self.callee(e) if e.data in ("call", "tcall") else None
        args = self._bind(e, c, pre) if c is not None else self._args(e)
        outs = frozenset(i for i, p in enumerate(c.params) if param_direction(p) in ("out", "inout")) \
            if c is not None else frozenset(range(len(args)))
        args = self.ordered(args, pre, outs)
        if e.children[-1] is not None or args:
            e.children[-1] = mk_node("args", args, e)
        if top or c is None or not c.effects:
            return e
        tmp = self.fresh()
        ret = c.ret
        if ret is not None and isinstance(ret, Tree) and ret.data == "t_void":
            raise self.err(e, "a function returning void cannot be used in an expression")
        pre.append(self.var(tmp, copy.deepcopy(ret), None, e))
        pre.append(mk_node("assign_stmt", [self.ident(tmp, e), e], e))
        return self.ident(tmp, e)

    def _named(self, e: Tree):
        """Argument binding in an expression without hoisted calls."""
        if e.data == "call":
            c = self.callee(e)
            if c is not None:
                pre: list = []
                args = self._bind(e, c, pre)
                if pre:
                    raise self.err(e, "don't-care arguments are not allowed here")
                if args:
                    e.children[-1] = mk_node("args", args, e)
        for k in e.children:
            if isinstance(k, Tree) and k.data in EXPR_KINDS:
                self._named(k)
            elif isinstance(k, Tree) and k.data == "args":
                for a in k.children:
                    if isinstance(a, Tree) and a.data in EXPR_KINDS:
                        self._named(a)
        return e

    def _bind(self, call: Tree, c: Callee, pre: list) -> list:
        """``call``'s arguments in parameter order, don't-care ones made temporaries."""
        return self._dont_cares(self.bind_names(call, c), c, pre, call)

    def bind_names(self, call: Tree, c: Callee) -> list:
        """Named arguments in parameter order and missing ones from the parameters' defaults
        (the argument-binding pass, ``bind_arguments.py``); don't-care ``_`` stays."""
        args = self._args(call)
        named = [a for a in args if a.data == "named_arg"]
        by_name: dict[str, object] = {}
        if named:
            by_name = bind_named(args, {name_of(p.children[3]) for p in c.params}, self.err, call)
        elif len(args) >= len(c.params):
            return args
        out = []
        for i, p in enumerate(c.params):
            pname = name_of(p.children[3])
            a = by_name.get(pname) if named else (args[i] if i < len(args) else None)
            if a is None:
                default = p.children[4]
                if default is None:
                    if named:
                        raise self.err(call, f"missing argument for parameter {pname}")
                    break  # arity is checked by the generators
                a = copy.deepcopy(default)
            out.append(a)
        if not named and len(args) > len(c.params):
            out += args[len(c.params):]
        return out

    def _dont_cares(self, args: list, c: Callee, pre: list, call: Tree) -> list:
        """A don't-care ``_`` for a parameter becomes a fresh temporary declared in ``pre``."""
        return [self._dont_care(a, c.params[i], c, pre, call)
                if i < len(c.params) and isinstance(a, Tree) and a.data == "dontcare_arg" else a
                for i, a in enumerate(args)]

    @staticmethod
    def _type_argument(name: str, c: Callee, call: Tree) -> Tree | None:
        """The explicit type argument (``f<T>(...)``) bound to type parameter ``name``."""
        if call.data != "tcall" or name not in c.own_type_params:
            return None
        given = [t for t in call.children[2].children if t is not None]
        k = c.own_type_params.index(name)
        return given[k] if k < len(given) and len(given) == len(c.own_type_params) else None

    def _dont_care(self, a: Tree, p: Tree, c: Callee, pre: list, call: Tree):
        t = p.children[2]
        if param_direction(p) != "out":
            raise self.err(a, f"_ can only be passed to an out parameter ({name_of(p.children[3])} is not)")
        if self._type_name(t) in c.type_params:
            t = self._type_argument(self._type_name(t), c, call)
            if t is None:
                raise self.err(a, f"_ for parameter {name_of(p.children[3])} of a generic type needs "
                                  "explicit type arguments")
        tmp = self.fresh()
        pre.append(self.var(tmp, copy.deepcopy(t), None, a))
        return self.ident(tmp, a)

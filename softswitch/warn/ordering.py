"""p4c's ``[--Wwarn=ordering]`` warning (``SideEffectOrdering``, after unused declarations are
removed): an ``out``/``inout`` argument of a call that overlaps what the same call writes
through another argument or through a call nested in its arguments.

For each call p4c collects the arguments of every ``out``/``inout`` parameter in the call and
in the calls nested in its arguments (a table ``apply`` anywhere inside means "everything": it
copies all arguments and says nothing).  Each argument of an ``out``/``inout`` parameter
(leaving out those it copies anyway: arguments that themselves call something, and slices) is
compared with each of those written expressions other than itself; the first that may share
storage with it (the same variable, one a field or element of the other, elements of one stack
whose indexes may be equal) gives ``a: 'out' argument has fields in common with b`` at ``a``.

Only calls whose parameters are known from the program are checked (actions, functions, extern
functions and methods, control and parser ``apply``); anything else is left alone, so the
check never warns where p4c would not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lark import Tree

from ..check.statements import text_of
from ..frontend.literals import parse_int
from ..frontend.treenav import direction_of, name_of, params_of, type_name_of

Warn = Callable[[Tree, str, str], None]
_PURE = {"isValid", "minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"}



@dataclass
class Scope:
    """What names mean where a call is: callables with their parameters, tables, and the type
    of each object (instance or parameter)."""

    callables: dict[str, list[list[Tree]]] = field(default_factory=dict)
    tables: set[str] = field(default_factory=set)
    objects: dict[str, str] = field(default_factory=dict)


class Ordering:
    def __init__(self, tree: Tree, warn: Warn, live: set[tuple[str | None, str]]):
        self.tree = tree
        self.warn = warn
        self.live = live
        self.top = Scope()
        self.externs: dict[str, dict[str, list[list[Tree]]]] = {}
        self.blocks: dict[str, list[Tree]] = {}
        for d in tree.children:
            if not isinstance(d, Tree):
                continue
            if d.data == "function_decl":
                self.top.callables.setdefault(name_of(d.children[2]), []).append(params_of(d.children[4]))
            elif d.data == "action_decl":
                self.top.callables.setdefault(name_of(d.children[1]), []).append(params_of(d.children[2]))
            elif d.data == "extern_func_decl":
                self.top.callables.setdefault(name_of(d.children[2]), []).append(params_of(d.children[4]))
            elif d.data == "extern_decl":
                methods: dict[str, list[list[Tree]]] = {}
                for m in d.children[3:]:
                    if isinstance(m, Tree) and m.data == "method_proto":
                        _ret, nm, _tps, params = m.children[1].children
                        methods.setdefault(name_of(nm), []).append(params_of(params))
                self.externs[name_of(d.children[1])] = methods
            elif d.data in ("control_decl", "parser_decl"):
                self.blocks[name_of(d.children[1])] = params_of(d.children[3])
            elif d.data == "instantiation":
                tn = type_name_of(d.children[1])
                if tn is not None:
                    self.top.objects[name_of(d.children[3])] = tn

    # ------------------------------------------------------------ what to visit
    def run(self) -> None:
        for d in self.tree.children:
            if not isinstance(d, Tree):
                continue
            if d.data == "function_decl" and (None, name_of(d.children[2])) in self.live:
                self.code(d.children[5], self.scope(d.children[4], []))
            elif d.data == "action_decl" and (None, name_of(d.children[1])) in self.live:
                self.code(d.children[3], self.scope(d.children[2], []))
            elif d.data in ("control_decl", "parser_decl") and (None, name_of(d.children[1])) in self.live:
                self.block(d)

    def scope(self, params, locals_: list) -> Scope:
        s = Scope(dict(self.top.callables), set(), dict(self.top.objects))
        for p in params_of(params):
            tn = type_name_of(p.children[2])
            if tn is not None:
                s.objects[name_of(p.children[3])] = tn
        for c in locals_:
            if not isinstance(c, Tree):
                continue
            if c.data == "action_decl":
                s.callables[name_of(c.children[1])] = [params_of(c.children[2])]
            elif c.data == "table_decl":
                s.tables.add(name_of(c.children[1]))
            elif c.data == "instantiation" and type_name_of(c.children[1]) is not None:
                s.objects[name_of(c.children[3])] = type_name_of(c.children[1])
        return s

    def block(self, d: Tree) -> None:
        name = name_of(d.children[1])
        locals_ = d.children[5:-2] if d.data == "control_decl" else d.children[5:]
        s = self.scope(d.children[3], locals_)
        for c in locals_:
            if not isinstance(c, Tree) or c.data in ("table_decl", "instantiation"):
                continue
            if c.data == "action_decl":
                if (name, name_of(c.children[1])) in self.live:
                    self.code(c.children[3], s)
            elif c.data != "parser_state" or (name, name_of(c.children[2])) in self.live:
                self.code(c, s)
        if d.data == "control_decl":
            self.code(d.children[-1], s)

    def code(self, node, s: Scope) -> None:
        if not isinstance(node, Tree):
            return
        for t in node.iter_subtrees_topdown():
            if t.data in ("call", "tcall"):
                try:
                    self.call(t, s)
                except (LookupError, TypeError, AttributeError, ValueError):
                    continue  # malformed: the checks after this one report it; no warning here

    # ------------------------------------------------------------ one call
    def params_of(self, callee, nargs: int, s: Scope) -> list[Tree] | None | str:
        """The parameters a call binds, ``"table"`` for a table apply, None when unknown."""
        cands: list[list[Tree]] = []
        if isinstance(callee, Tree) and callee.data == "ident":
            cands = s.callables.get(str(callee.children[-1]), [])
        elif isinstance(callee, Tree) and callee.data in ("member", "type_member"):
            base, method = callee.children[0], name_of(callee.children[1])
            obj = str(base.children[-1]) if isinstance(base, Tree) and base.data in ("ident", "type_name") \
                else None
            if obj is None:
                return None
            if method == "apply" and obj in s.tables:
                return "table"
            tname = obj if callee.data == "type_member" else s.objects.get(obj)
            if method == "apply" and tname in self.blocks:
                cands = [self.blocks[tname]]
            elif tname in self.externs:
                cands = self.externs[tname].get(method, [])
        fit = [c for c in cands if len(c) == nargs]
        return fit[0] if len(fit) == 1 else None

    def bound(self, e: Tree, s: Scope) -> list[tuple[Tree, Tree]] | None | str:
        """(parameter, argument) pairs of call ``e`` in argument order; see ``params_of``."""
        args = [a for a in (e.children[-1].children if isinstance(e.children[-1], Tree) else [])
                if a is not None]
        params = self.params_of(e.children[0], len(args), s)
        if params is None or params == "table":
            return params
        by_name = {name_of(p.children[3]): p for p in params}
        out = []
        for i, a in enumerate(args):
            if isinstance(a, Tree) and a.data == "named_arg":
                p = by_name.get(str(a.children[0]))
                if p is None:
                    return None
                out.append((p, a.children[-1]))
            else:
                out.append((params[i], a))
        return out

    def call(self, e: Tree, s: Scope) -> None:
        pairs = self.bound(e, s)
        if not isinstance(pairs, list):
            return
        written: list[Tree] = []
        for t in e.iter_subtrees_topdown():
            if t.data not in ("call", "tcall"):
                continue
            inner = pairs if t is e else self.bound(t, s)
            if inner == "table":
                return  # p4c copies every argument and warns about none
            if isinstance(inner, list):
                written += [a for p, a in inner if direction_of(p) in ("out", "inout")]
        for p, a in pairs:
            if direction_of(p) not in ("out", "inout") or _effects(a) or \
                    isinstance(a, Tree) and a.data in ("slice", "dontcare_arg"):
                continue
            for w in written:
                if w is not a and _may_alias(a, w):
                    self.warn(a, "ordering", f"{text_of(a)}: 'out' argument has fields in common with "
                                             f"{text_of(w)}")
                    break


def _effects(e) -> bool:
    """Whether evaluating ``e`` calls anything but a pure builtin such as ``isValid``."""
    if not isinstance(e, Tree):
        return False
    for t in e.iter_subtrees():
        if t.data in ("call", "tcall"):
            c = t.children[0]
            if not (isinstance(c, Tree) and c.data == "member" and name_of(c.children[1]) in _PURE):
                return True
    return False


def _path(e) -> tuple[str, list] | None:
    """An lvalue as (variable, [field name or index (None: not constant)...]); a slice is the
    whole of what it slices, as in p4c's location sets."""
    steps: list = []
    while isinstance(e, Tree) and e.data in ("member", "index", "slice"):
        if e.data == "member":
            m = name_of(e.children[1])
            steps.append(None if m in ("next", "last") else m)
        elif e.data == "index":
            i = e.children[1]
            steps.append(parse_int(str(i.children[0]))[0] if isinstance(i, Tree) and i.data == "int_lit"
                         else None)
        else:
            steps = []
        e = e.children[0]
    if isinstance(e, Tree) and e.data == "ident":
        return str(e.children[-1]), steps[::-1]
    return None


def _may_alias(a, b) -> bool:
    pa, pb = _path(a), _path(b)
    if pa is None or pb is None or pa[0] != pb[0]:
        return False
    for x, y in zip(pa[1], pb[1], strict=False):  # a prefix of the other: overlap
        if x is not None and y is not None and x != y:
            return False
    return True


def check(tree: Tree, decls, live: set[tuple[str | None, str]]) -> None:
    """Record p4c's ordering warnings (``decls.warn``) in what p4c keeps (``unused.check``)."""
    Ordering(tree, decls.warn, live).run()


__all__ = ["check"]

"""Functions with a parameter of an extern type (``void put<T>(register<T> r, in T v) {
r.write(0, v); }``), bound to the instance each call passes, as p4c's inliner resolves them:
one copy of the function per distinct instances passed, with the parameter gone and its uses
naming the instance (a top-level one, or one of the calling control that
``subparsers.hoist_extern_arguments`` moved to the top level, keeping its control-plane
name).  The copy is declared before the declaration that calls it; a call inside a copy is
bound the same way.  The function itself goes away, as does a copy checked for a generic
function nothing calls (``specialize.CHECK_ONLY``): its body is checked in each bound copy.
Runs after generic functions are specialised, so ``T`` is known from the instance's type.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from lark import Token, Tree

from ..api import P4CompileError
from .treenav import name_of

Err = Callable[[object, str], P4CompileError]


def extern_names(tree: Tree) -> set[str]:
    """Names of the extern object types the program declares (its includes too)."""
    return {name_of(d.children[1]) for d in tree.children if isinstance(d, Tree) and d.data == "extern_decl"}


def _type_base(t) -> str:
    if isinstance(t, Tree) and t.data == "specialized_type":
        t = t.children[0]
    return str(t.children[-1]) if isinstance(t, Tree) and t.data == "type_name" else ""


def extern_params(tree: Tree) -> dict[str, list[int]]:
    """Function name -> positions of its directionless parameters of an extern type (functions
    having any; one with a direction is refused where parameters are declared, decls.py)."""
    externs = extern_names(tree)
    out: dict[str, list[int]] = {}
    for d in tree.children:
        if not (isinstance(d, Tree) and d.data == "function_decl") or d.children[4] is None:
            continue
        ps = [p for p in d.children[4].children if isinstance(p, Tree)]
        if any(p.children[1] is not None and _type_base(p.children[2]) in externs for p in ps):
            continue
        idx = [i for i, p in enumerate(ps) if _type_base(p.children[2]) in externs]
        if idx:
            out[name_of(d.children[2])] = idx
    return out


def passed_instances(node: Tree, params: dict[str, list[int]]) -> set[str]:
    """Names passed for extern-typed parameters by the function calls inside ``node``."""
    out: set[str] = set()
    for c in node.iter_subtrees():
        if c.data == "call" and isinstance(c.children[0], Tree) and c.children[0].data == "ident":
            idx = params.get(str(c.children[0].children[-1]), [])
            args = [a for a in (c.children[-1].children if c.children[-1] is not None else [])
                    if a is not None]
            out |= {str(args[i].children[-1]) for i in idx
                    if i < len(args) and isinstance(args[i], Tree) and args[i].data == "ident"}
    return out


def _substitute(node, values: dict[str, str]):
    if not isinstance(node, Tree):
        return node
    if node.data == "ident" and str(node.children[-1]) in values:
        return Tree("ident", [Token("IDENTIFIER", values[str(node.children[-1])])], node.meta)
    node.children = [_substitute(c, values) for c in node.children]
    return node


class _Binder:
    def __init__(self, tree: Tree, err: Err):
        self.err = err
        self.params = extern_params(tree)
        self.funcs = {name_of(d.children[2]): d for d in tree.children
                      if isinstance(d, Tree) and d.data == "function_decl"
                      and name_of(d.children[2]) in self.params}
        self.globals = {name_of(d.children[3]) for d in tree.children
                        if isinstance(d, Tree) and d.data == "instantiation"}
        self.copies: dict[tuple[str, tuple[str, ...]], str] = {}
        self.pending: list[Tree] = []

    def walk(self, node):
        if not isinstance(node, Tree):
            return node
        node.children = [self.walk(c) for c in node.children]
        if node.data == "call" and isinstance(node.children[0], Tree) \
                and node.children[0].data == "ident" and str(node.children[0].children[-1]) in self.funcs:
            return self.bind(node)
        return node

    def bind(self, call: Tree) -> Tree:
        fname = str(call.children[0].children[-1])
        idx = self.params[fname]
        args = [a for a in (call.children[-1].children if call.children[-1] is not None else [])
                if a is not None]
        insts: list[str] = []
        for i in idx:
            a = args[i] if i < len(args) else None
            if not (isinstance(a, Tree) and a.data == "ident" and str(a.children[-1]) in self.globals):
                raise self.err(a if a is not None else call,
                               f"{fname}: the argument for an extern parameter must name a "
                               "register, counter or meter instance (of the calling control or "
                               "the top level)")
            insts.append(str(a.children[-1]))
        key = (fname, tuple(insts))
        if key not in self.copies:
            self.copies[key] = f"{fname}@{'@'.join(insts)}"
            self.pending.append(self._copy(fname, idx, insts, self.copies[key]))
        kept = [a for i, a in enumerate(args) if i not in idx]
        return Tree("call", [Tree("ident", [Token("IDENTIFIER", self.copies[key])], call.children[0].meta),
                             Tree("args", kept or [None], call.children[-1].meta)], call.meta)

    def _copy(self, fname: str, idx: list[int], insts: list[str], name: str) -> Tree:
        new = copy.deepcopy(self.funcs[fname])
        ps = [p for p in new.children[4].children if isinstance(p, Tree)]
        values = {name_of(ps[i].children[3]): inst for i, inst in zip(idx, insts, strict=True)}
        left = [p for i, p in enumerate(ps) if i not in idx]
        new.children[2] = Tree("name", [Token("IDENTIFIER", name)], new.children[2].meta)
        new.children[4] = Tree("params", left or [None], new.children[4].meta)
        new.children[5] = _substitute(new.children[5], values)
        saved, self.pending = self.pending, []
        new = self.walk(new)  # calls inside it, bound first (declared before it)
        inner, self.pending = self.pending, saved
        self.pending += inner
        return new


def bind_extern_parameters(tree: Tree, err: Err) -> None:
    """Rewrite ``tree`` in place (see the module docstring)."""
    b = _Binder(tree, err)
    if not b.funcs:
        return
    out: list = []
    for d in tree.children:
        if isinstance(d, Tree) and d.data == "function_decl" and name_of(d.children[2]) in b.funcs:
            continue
        b.pending = []
        d = b.walk(d)
        out += b.pending + [d]
    tree.children = out


__all__ = ["bind_extern_parameters", "extern_params", "passed_instances"]

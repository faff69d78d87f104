"""``abstract`` methods of extern objects (P4_16: "abstract methods"), checked as p4c checks
them before anything else sees the program:

- an instance of an extern type with abstract methods needs an initializer block
  (``X() x = { void a(inout bit<32> v) { ... } };``) that implements each of them once, with
  the same return type and parameters (directions and types, the extern's type arguments
  substituted); a function that matches no abstract method, or an initializer for a type that
  has none, is an error;
- then the initializer goes away and an abstract prototype is an ordinary method prototype.

No extern of v1model has abstract methods, and this target implements no extern a program
declares itself, so an instance that passes these checks is refused later by name ("not
supported by this target"); what is checked here is what p4c rejects.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from lark import Tree

from ..api import P4CompileError
from ..frontend.declared_types import type_text
from ..frontend.treenav import name_of

Err = Callable[[object, str], P4CompileError]


def _type_name(t) -> str:
    if isinstance(t, Tree) and t.data == "specialized_type":
        t = t.children[0]
    return str(t.children[-1]) if isinstance(t, Tree) and t.data == "type_name" else ""


def _subst(t, values: dict[str, Tree]):
    t = copy.deepcopy(t)
    if not isinstance(t, Tree):
        return t
    if t.data == "type_name" and str(t.children[-1]) in values:
        return copy.deepcopy(values[str(t.children[-1])])
    for node in t.iter_subtrees():
        node.children = [copy.deepcopy(values[str(c.children[-1])])
                         if isinstance(c, Tree) and c.data == "type_name" and str(c.children[-1]) in values
                         else c for c in node.children]
    return t


def _signature(ret, params: Tree | None, values: dict[str, Tree]) -> tuple[str, list[str]]:
    """Return type and (direction, type) of each parameter, as comparable text."""
    ps = [p for p in (params.children if params is not None else []) if isinstance(p, Tree)]
    return (type_text(_subst(ret, values)),
            [f"{_direction(p)}{type_text(_subst(p.children[2], values))}" for p in ps])


def _direction(p: Tree) -> str:
    d = p.children[1]
    return f"{d.children[0]} " if isinstance(d, Tree) else f"{d} " if d is not None else ""


class _Abstracts:
    def __init__(self, tree: Tree, err: Err):
        self.err = err
        self.externs: dict[str, tuple[list[str], dict[str, Tree]]] = {}
        for d in tree.children:
            if isinstance(d, Tree) and d.data == "extern_decl":
                tps = d.children[2]
                tvars = [name_of(c) for c in tps.children if isinstance(c, Tree)] if tps is not None else []
                abstract = {name_of(m.children[1].children[1]): m.children[1]
                            for m in d.children[3:] if isinstance(m, Tree) and m.data == "abstract_proto"}
                self.externs[name_of(d.children[1])] = (tvars, abstract)

    def instance(self, inst: Tree) -> None:
        tref, name = inst.children[1], name_of(inst.children[3])
        ext = _type_name(tref)
        tvars, abstract = self.externs.get(ext, ([], {}))
        if inst.data == "instantiation":
            if abstract:
                missing = ", ".join(sorted(abstract))
                raise self.err(inst.children[3], f"{name}: {ext} has abstract methods ({missing}); "
                                                 "an instance must implement them in an initializer "
                                                 f"({ext}(...) {name} = {{ ... }};)")
            return
        init = inst.children[4]
        if not abstract:
            raise self.err(init, f"{name}: an initializer is only for instances of an extern with "
                                 f"abstract methods; {ext or 'this type'} has none")
        values: dict[str, Tree] = {}
        if isinstance(tref, Tree) and tref.data == "specialized_type":
            args = [a for a in tref.children[-1].children if a is not None]
            values = dict(zip(tvars, args, strict=False))
        done: set[str] = set()
        for f in init.children:
            if not (isinstance(f, Tree) and f.data == "function_decl"):
                continue
            fname = name_of(f.children[2])
            proto = abstract.get(fname)
            if proto is None:
                raise self.err(f.children[2], f"{fname}: no matching abstract method in extern {ext}")
            if fname in done:
                raise self.err(f.children[2], f"{fname}: abstract method implemented twice")
            done.add(fname)
            want = _signature(proto.children[0], proto.children[3], values)
            got = _signature(f.children[1], f.children[4], {})
            if want != got:
                raise self.err(f.children[2], f"{fname}: implementation does not match abstract "
                                              f"method {want[0]} {fname}({', '.join(want[1])}) "
                                              f"of extern {ext}")
        missing = sorted(set(abstract) - done)
        if missing:
            raise self.err(inst.children[3], f"{name}: abstract method {missing[0]} of {ext} is not "
                                             "implemented")
        inst.data = "instantiation"
        inst.children = inst.children[:4]


def check_abstract_methods(tree: Tree, err: Err) -> None:
    """Check every instance against its extern's abstract methods, then drop the initializers
    and the ``abstract`` marks (see the module docstring)."""
    a = _Abstracts(tree, err)
    insts = [n for n in tree.iter_subtrees_topdown() if n.data in ("instantiation", "instantiation_init")]
    for inst in insts:
        a.instance(inst)
    for call in tree.find_data("ctor_call"):
        ext = _type_name(call.children[0])
        if a.externs.get(ext, ([], {}))[1]:
            raise err(call, f"{ext}: extern type {ext} with abstract methods cannot be instantiated "
                            "using a constructor call; consider using a declaration")
    for p in tree.find_data("param"):
        if isinstance(p.children[2], Tree) and p.children[2].data == "t_string" and _direction(p):
            raise err(p.children[3], f"{name_of(p.children[3])}: a parameter with type string cannot "
                                     "have a direction")
    for node in tree.iter_subtrees():
        if node.data == "abstract_proto":
            node.data = "method_proto"


__all__ = ["check_abstract_methods"]

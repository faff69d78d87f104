"""Generic controls and parsers (``control G<T>(inout T x)``) specialised per instantiation with
explicit type arguments (``G<bit<8>>() g;``), as p4c's front end specialises them: a copy of the
block with ``T`` replaced by the type, one copy per distinct type arguments, named ``G_gN``
(P4Info names follow the instance, so the copy's name is never seen).  A generic block that is
instantiated without type arguments is left for the checks to reject.  A generic control nothing
instantiates is type-checked with opaque type parameters, as p4c checks unused declarations; a
generic parser nothing instantiates is dropped."""

from __future__ import annotations

import copy
from collections.abc import Callable

from lark import Token, Tree

from ..api import P4CompileError
from .treenav import name_of

Err = Callable[[object, str], P4CompileError]
_BLOCKS = ("control_decl", "parser_decl")



def _type_params(d: Tree) -> list[str]:
    tps = d.children[2]
    return [str(c.children[0]) for c in tps.children if isinstance(c, Tree)] if tps is not None else []


def _subst_types(node, values: dict[str, Tree]):
    """Replace type names bound in ``values`` by copies of their type trees."""
    if not isinstance(node, Tree):
        return node
    if node.data == "type_name" and str(node.children[-1]) in values:
        return copy.deepcopy(values[str(node.children[-1])])
    node.children = [_subst_types(c, values) for c in node.children]
    return node


def _text(t) -> str:
    if isinstance(t, Token):
        return str(t)
    return t.data + "(" + ",".join(_text(c) for c in t.children if c is not None) + ")"


def specialize_generic_blocks(tree: Tree, err: Err) -> None:
    """Rewrite ``tree`` in place (see the module docstring)."""
    generic = {name_of(d.children[1]): d for d in tree.children
               if isinstance(d, Tree) and d.data in _BLOCKS and d.children[2] is not None}
    if not generic:
        return
    copies: dict[str, list[Tree]] = {}
    done: dict[tuple[str, str], str] = {}
    unresolved: set[str] = set()
    for inst in tree.iter_subtrees():
        if inst.data != "instantiation":
            continue
        tref = inst.children[1]
        if isinstance(tref, Tree) and tref.data == "type_name" and name_of(tref) in generic:
            unresolved.add(name_of(tref))
            continue
        if not (isinstance(tref, Tree) and tref.data == "specialized_type"):
            continue
        base = name_of(tref.children[0])
        if base not in generic:
            continue
        targs = next(c for c in tref.children if isinstance(c, Tree) and c.data == "type_args")
        args = [c for c in targs.children if c is not None]
        decl = generic[base]
        tps = _type_params(decl)
        if len(args) != len(tps):
            raise err(tref, f"{base} takes {len(tps)} type arguments, {len(args)} given")
        key = (base, _text(targs))
        if key not in done:
            spec = copy.deepcopy(decl)
            new = f"{base}_g{len(done) + 1}"
            spec.children[1] = Tree("name", [Token("IDENTIFIER", new)])
            spec.children[2] = None
            values = dict(zip(tps, args, strict=True))
            spec.children[3:] = [_subst_types(c, values) for c in spec.children[3:]]
            copies.setdefault(base, []).append(spec)
            done[key] = new
        inst.children[1] = Tree("type_name", [Token("TYPE_IDENTIFIER", done[key])], tref.meta)
    taken = {name_of(d.children[1]) for d in tree.children
             if isinstance(d, Tree) and len(d.children) > 1 and isinstance(d.children[1], Tree)
             and d.children[1].data == "name"}
    out = []
    for d in tree.children:
        name = name_of(d.children[1]) if isinstance(d, Tree) and d.data in _BLOCKS else ""
        if name not in generic:
            out.append(d)
        elif name in copies or name in unresolved:
            out += copies.get(name, []) + ([d] if name in unresolved else [])
        elif d.data == "control_decl":
            out += _opaque_copy(d, taken)
    tree.children = out


def _opaque_copy(decl: Tree, taken: set[str]) -> list[Tree]:
    """A generic control nothing instantiates, as p4c checks it: its body with each type
    parameter an opaque type (an empty struct), so it may only copy and pass those values
    (the copy is type-checked as an unused control, never run).  Parsers are left out: their
    ``extract`` of a type-parameter value is legal for p4c but not for an empty struct."""
    structs: list[Tree] = []
    values: dict[str, Tree] = {}
    for tp in _type_params(decl):
        sname, k = tp, 0
        while sname in taken:
            k += 1
            sname = f"{tp}_{k}"
        taken.add(sname)
        structs.append(Tree("struct_decl", [None, Tree("name", [Token("TYPE_IDENTIFIER", sname)])],
                            decl.meta))
        values[tp] = Tree("type_name", [Token("TYPE_IDENTIFIER", sname)], decl.meta)
    spec = copy.deepcopy(decl)
    spec.children[2] = None
    spec.children[3:] = [_subst_types(c, values) for c in spec.children[3:]]
    return structs + [spec]


__all__ = ["specialize_generic_blocks"]

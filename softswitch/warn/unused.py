"""p4c's "unused" warnings for tables and instances (``RemoveAllUnusedDeclarations`` with
warnings on, early in its front end), on the program as written.

p4c collects the names the remaining program references, removes the declarations nothing
references, and repeats until nothing changes: controls and parsers (with all they hold),
actions, functions, tables, parser states (``start``, ``accept``, ``reject`` stay) and control
or parser instances; extern instances stay.  Of what it finds unreferenced in a block it still
visits it reports

- a table: ``[--Wwarn=unused] warning: Table t is not used; removing``;
- an instance (a register, a counter, a control or parser instance...):
  ``[--Wwarn=unused] warning: r: unused instance``, once; ``main`` never;
- a control or parser nothing instantiates: ``Control C is not used; removing`` /
  ``Parser P is not used; removing`` (on the first round only: what becomes unused once
  another unused block is gone is not reported, as recent p4c does);
- a parameter of an action or function it keeps that its body never names: ``'p' is unused``
  (parameters of controls, parsers, externs and prototypes are not checked, as p4c visits
  them only inside actions and functions).

``@noWarn("unused")`` on the declaration (or its action/function) silences it.

This module repeats that simulation over the syntax tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lark import Tree

from ..frontend.treenav import name_of, type_name_of

Warn = Callable[[Tree, str, str], None]
_KEEP_STATES = {"start", "accept", "reject"}



def _refs(node) -> set[str]:
    """Names ``node`` references: identifiers, action names, types of constructor calls and
    instances, transition targets (parameters and locals that shadow them are left out)."""
    out: set[str] = set()
    if not isinstance(node, Tree):
        return out
    for t in node.iter_subtrees():
        if t.data == "ident":
            out.add(str(t.children[-1]))
        elif t.data == "action_ref":
            out.add(name_of(t.children[1]))
        elif t.data in ("ctor_call", "instantiation", "type_member"):  # type_member: Sub.apply()
            n = type_name_of(t.children[1] if t.data == "instantiation" else t.children[0])
            if n is not None:
                out.add(n)
        elif t.data == "trans_direct":
            out.add(name_of(t.children[0]))
        elif t.data == "select_case":
            out.add(name_of(t.children[1]))
    declared = {name_of(p.children[3]) for p in node.find_data("param")}
    declared |= {name_of(v.children[2]) for v in node.iter_subtrees() if v.data in ("var_decl", "const_decl")}
    return out - declared


@dataclass
class _Item:
    kind: str            # block | action | function | table | instance | state
    name: str
    node: Tree
    owner: str | None    # the control/parser holding it (None: top level)
    removable: bool = True
    warned: bool = False


@dataclass
class _Program:
    items: list[_Item] = field(default_factory=list)
    local_names: dict[str, set[str]] = field(default_factory=dict)  # block -> names it declares


_LOCAL = {"action_decl": ("action", 1), "table_decl": ("table", 1), "instantiation": ("instance", 3),
          "parser_state": ("state", 2)}


def _collect(tree: Tree) -> _Program:
    prog = _Program()
    top = [n for n in tree.children if isinstance(n, Tree)]
    blocks = {name_of(n.children[1]) for n in top if n.data in ("control_decl", "parser_decl")}
    for n in top:
        if n.data in ("control_decl", "parser_decl"):
            b = name_of(n.children[1])
            prog.items.append(_Item("block", b, n, None))
            locals_ = n.children[5:-2] if n.data == "control_decl" else n.children[5:]
            names = set()
            for c in locals_:
                if isinstance(c, Tree) and c.data in _LOCAL:
                    kind, i = _LOCAL[c.data]
                    it = _Item(kind, name_of(c.children[i]), c, b)
                    it.removable = kind != "instance" or type_name_of(c.children[1]) in blocks
                    it.removable &= not (kind == "state" and it.name in _KEEP_STATES)
                    prog.items.append(it)
                if isinstance(c, Tree) and c.data in ("var_decl", "const_decl", "value_set_decl"):
                    names.add(name_of(c.children[2] if c.data != "value_set_decl" else c.children[-1]))
            prog.local_names[b] = names | {it.name for it in prog.items if it.owner == b}
        elif n.data in ("action_decl", "function_decl"):
            prog.items.append(_Item(n.data[:-5] if n.data == "action_decl" else "function",
                                    name_of(n.children[1 if n.data == "action_decl" else 2]), n, None))
        elif n.data == "instantiation":
            it = _Item("instance", name_of(n.children[3]), n, None)
            it.removable = type_name_of(n.children[1]) in blocks and it.name != "main"
            prog.items.append(it)
    return prog


def _own_code(it: _Item) -> list:
    """The code of an item that references other names (a block's own apply body only: its
    locals are items of their own)."""
    if it.kind != "block":
        return [it.node]
    n = it.node
    return [n.children[-1]] if n.data == "control_decl" else []


def _quiet(node: Tree) -> bool:
    """Whether ``node`` carries ``@noWarn("unused")`` (its first child is its annotations)."""
    anns = node.children[0] if node.children else None
    if not (isinstance(anns, Tree) and anns.data == "annotations"):
        return False
    for a in anns.children:
        body = a.children[1] if len(a.children) > 1 else None
        if str(a.children[0]) == "@noWarn" and body is not None and any(
                isinstance(v, Tree) and v.data == "string_lit" and str(v.children[0])[1:-1] == "unused"
                for v in body.children):
            return True
    return False


def _unused_params(it: _Item, warn: Warn) -> None:
    """p4c's ``'p' is unused`` for the parameters of an action or function its body never
    names."""
    node = it.node
    params, body = (node.children[2], node.children[3]) if node.data == "action_decl" else \
        (node.children[4], node.children[5])
    if _quiet(node):
        return
    named = {str(t.children[-1]) for t in body.iter_subtrees() if t.data == "ident"}
    for p in (params.children if isinstance(params, Tree) else []):
        if not (isinstance(p, Tree) and p.data == "param"):
            continue
        pname = name_of(p.children[3])
        if pname not in named and not _quiet(p):
            warn(p.children[3], "unused", f"'{pname}' is unused")


def _first_round(present: list[_Item], global_refs: set[str], local_refs: dict[str, set[str]],
                 warn: Warn) -> None:
    """The warnings p4c gives on its first round only: unused controls and parsers, unused
    parameters of the actions and functions that round keeps."""
    def used(it: _Item) -> bool:
        return it.name in (global_refs if it.owner is None else local_refs[it.owner])

    removed = {it.name for it in present if it.kind == "block" and not used(it)}
    for it in present:
        if it.kind == "block" and it.name in removed and not _quiet(it.node):
            kind = "Control" if it.node.data == "control_decl" else "Parser"
            warn(it.node.children[1], "unused", f"{kind} {it.name} is not used; removing")
        elif it.kind in ("action", "function") and it.owner not in removed and used(it):
            _unused_params(it, warn)


def run(tree: Tree, warn: Warn) -> set[tuple[str | None, str]]:
    """Warn as p4c does; returns what remains, as (control or parser or None, name)."""
    prog = _collect(tree)
    present = list(prog.items)
    first = True
    while True:
        global_refs: set[str] = set()
        local_refs: dict[str, set[str]] = {b: set() for b in prog.local_names}
        for it in present:
            for code in _own_code(it):
                refs = _refs(code)
                if it.owner is None and it.kind != "block":
                    global_refs |= refs
                    continue
                b = it.owner or it.name
                local_refs[b] |= refs & prog.local_names[b]
                global_refs |= refs - prog.local_names[b]
        if first:
            first = False
            _first_round(present, global_refs, local_refs, warn)
        kept: list[_Item] = []
        removed_blocks: set[str] = set()
        for it in present:
            if it.owner in removed_blocks:
                continue
            used = it.name in (global_refs if it.owner is None else local_refs[it.owner])
            if it.kind == "block" and not used:
                removed_blocks.add(it.name)
                continue
            if used or it.kind == "state" and not it.removable or it.kind == "instance" and it.name == "main":
                kept.append(it)
                continue
            if it.kind in ("table", "instance") and not it.warned:
                it.warned = True
                nm = it.node.children[1 if it.kind == "table" else 3]
                warn(nm, "unused", f"Table {it.name} is not used; removing" if it.kind == "table"
                     else f"{it.name}: unused instance")
            if not it.removable:
                kept.append(it)
        if len(kept) == len(present):
            return {(it.owner, it.name) for it in present}
        present = kept


def check(tree: Tree, decls) -> set[tuple[str | None, str]]:
    """Record p4c's unused-table and unused-instance warnings (``decls.warn``); returns what p4c
    keeps: (None, top-level name) and (control or parser, local name)."""
    return run(tree, decls.warn)


__all__ = ["check"]

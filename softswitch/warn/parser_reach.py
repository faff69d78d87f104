"""Reachability of a parser's ``accept`` state, as p4c's ``SimplifyParsers`` checks it (after
removing unused declarations, on each parser that remains, before sub-parsers are inlined):
``[--Wwarn=parser-transition] warning: accept state in P is unreachable`` when no transition
path from ``start`` leads there.  (A parser that reaches neither end is an error of
``parsergen.py``.)
"""

from __future__ import annotations

from lark import Tree

from ..frontend.treenav import name_of


def reachable(parser: Tree) -> set[str]:
    """The states reachable from ``start`` (``accept``/``reject`` included when reached; a
    state without a transition goes to ``reject``)."""
    states = {name_of(c.children[2]): c for c in parser.children[5:]
              if isinstance(c, Tree) and c.data == "parser_state"}
    seen: set[str] = set()
    work = ["start"]
    while work:
        s = work.pop()
        if s in seen:
            continue
        seen.add(s)
        if s not in states:
            continue
        if states[s].children[-1] is None:
            work.append("reject")
        for t in states[s].iter_subtrees():
            if t.data == "trans_direct":
                work.append(name_of(t.children[0]))
            elif t.data == "select_case":
                work.append(name_of(t.children[1]))
    return seen


def check(tree: Tree, decls, present: set[tuple[str | None, str]]) -> None:
    """``present``: what p4c keeps after removing unused declarations (``unused.check``)."""
    for node in tree.children:
        if not (isinstance(node, Tree) and node.data == "parser_decl"):
            continue
        nm = node.children[1]
        if (None, name_of(nm)) not in present:
            continue
        r = reachable(node)
        declared = {name_of(c.children[2]) for c in node.children[5:]
                    if isinstance(c, Tree) and c.data == "parser_state"} | {"accept", "reject"}
        if not r <= declared:
            continue  # a transition to an undeclared state: reported where it is checked
        if "accept" not in r:
            decls.warn(nm, "parser-transition", f"accept state in {name_of(nm)} is unreachable")


__all__ = ["check", "reachable"]

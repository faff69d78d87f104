"""Small accessors for the lark parse tree that the front end's analyses share (names,
parameter lists, directions, named types), so each reads the grammar's shapes one way."""

from __future__ import annotations

from lark import Tree


def name_of(node) -> str:
    """The identifier a name node (or a bare token) holds."""
    return str(node.children[0]) if isinstance(node, Tree) else str(node)


def params_of(node) -> list[Tree]:
    """The parameters of a parameter list node (none when it is absent)."""
    return [p for p in (node.children if isinstance(node, Tree) else []) if isinstance(p, Tree)]


def direction_of(param: Tree) -> str:
    """``in``, ``out``, ``inout`` or "" (directionless) of a parameter node."""
    return str(param.children[1].children[0]) if isinstance(param.children[1], Tree) else ""


def type_name_of(t) -> str | None:
    """The name a named (possibly specialised) type refers to; None for other types."""
    if isinstance(t, Tree) and t.data == "specialized_type":
        t = t.children[0]
    if isinstance(t, Tree) and t.data == "type_name":
        return str(t.children[-1])
    return None

"""Header unions in the Python generator: the members a member's validity affects."""

from __future__ import annotations

from lark import Tree

from .layout import pyfield
from .types import StackT, UnionT


def union_next_member(g, node) -> str | None:
    """The member name when ``node`` is ``stack.next.member`` on a stack of header unions."""
    if not (isinstance(node, Tree) and node.data == "member"):
        return None
    inner = node.children[0]
    if not (isinstance(inner, Tree) and inner.data == "member"
            and str(inner.children[1].children[0]) == "next"):
        return None
    _c, st = g.ex(inner.children[0])
    if not (isinstance(st, StackT) and isinstance(st.elem, UnionT)):
        return None
    return str(node.children[1].children[0])


def union_siblings(g, node) -> list[str]:
    """Code of the other members when ``node`` names a member of a header union: making that
    member valid invalidates them (BMv2's union membership, P4_16 spec "header unions")."""
    if not (isinstance(node, Tree) and node.data == "member"):
        return []
    ucode, ut = g.ex(node.children[0])
    if not isinstance(ut, UnionT):
        return []
    m = str(node.children[1].children[0])
    return [f"{ucode}.{pyfield(f)}" for f, _ in ut.fields if f != m]

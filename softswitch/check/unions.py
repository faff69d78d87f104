"""Header unions in the checks: extracts into ``stack.next.member``."""

from __future__ import annotations

from lark import Tree

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


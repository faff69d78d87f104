"""``{#}``, the invalid header or header union (P4_16 1.2.2), rewritten before the checks into
what it means: ``x = {#}`` is ``x.setInvalid()``, ``H x = {#}`` declares ``x`` invalid (as a
header variable starts), ``e == {#}`` is ``!e.isValid()`` and ``e != {#}`` is ``e.isValid()``
(BMv2's header equality: two invalid headers are equal).  ``(H){#}`` is the same value.  Any
other use is rejected by name."""

from __future__ import annotations

from collections.abc import Callable

from lark import Token, Tree

from .api import P4CompileError

Err = Callable[[object, str], P4CompileError]


def _is_invalid(e) -> bool:
    if isinstance(e, Tree) and e.data == "cast" and len(e.children) == 2:
        e = e.children[1]
    return isinstance(e, Tree) and e.data == "invalid_hdr"


def _method(base, name: str, like: Tree) -> Tree:
    member = Tree("member", [base, Tree("name", [Token("IDENTIFIER", name)])], like.meta)
    return Tree("call", [member, Tree("args", [None])], like.meta)


def _rewrite(t: Tree) -> None:
    d = t.data
    if d == "assign_stmt" and _is_invalid(t.children[1]):
        t.data, t.children = "call_stmt", [_method(t.children[0], "setInvalid", t)]
    elif d == "var_decl" and _is_invalid(t.children[3]):
        t.children[3] = None
    elif d == "binop" and len(t.children) == 3 and str(t.children[1]) in ("==", "!="):
        a, op, b = t.children
        if _is_invalid(a) or _is_invalid(b):
            other = b if _is_invalid(a) else a
            valid = _method(other, "isValid", t)
            if str(op) == "==":
                t.data, t.children = "lnot", [valid]
            else:
                t.data, t.children = valid.data, valid.children


def rewrite_invalid(tree: Tree, err: Err) -> None:
    """Rewrite every ``{#}`` of ``tree`` in place; one left over is an error."""
    for t in list(tree.iter_subtrees_topdown()):
        _rewrite(t)
    for t in tree.iter_subtrees():
        if t.data == "invalid_hdr":
            raise err(t, "{#} (an invalid header) is supported in assignments, initialisers and "
                         "==/!= comparisons only")


__all__ = ["rewrite_invalid"]

"""``static_assert(cond[, message])`` of P4_16's core.p4, evaluated at compile time as p4c's
StaticAssert pass does: the condition must fold to a constant; ``false`` stops compilation with
the message; ``true`` replaces the call (it returns ``bool``, so ``const bool ok =
static_assert(...)`` works), and a call statement becomes an empty statement."""

from __future__ import annotations

from lark import Tree

NAME = "static_assert"


def is_static_assert(n) -> bool:
    """Is ``n`` a call of ``static_assert`` (not shadowed: the caller checks the scope)?"""
    return isinstance(n, Tree) and n.data == "call" and isinstance(n.children[0], Tree) \
        and n.children[0].data == "ident" and str(n.children[0].children[-1]) == NAME


def fold(ec, n: Tree) -> None:
    """Check the call ``n`` with the expression checker ``ec`` and turn it into ``true``."""
    args = [a for a in (n.children[1].children if n.children[1] is not None else []) if a is not None]
    if len(args) not in (1, 2):
        raise ec.err(n, f"{NAME} takes 1 or 2 arguments, got {len(args)}")
    code = ec.expect_bool(args[0])
    if code not in ("True", "False"):
        raise ec.err(args[0], f"{NAME}: the condition is not a compile-time constant")
    msg = "static assertion failed"
    if len(args) == 2:
        m = args[1]
        if not (isinstance(m, Tree) and m.data == "string_lit"):
            raise ec.err(m, f"{NAME}: the message must be a string literal")
        msg = str(m.children[0])[1:-1] or msg
    if code == "False":
        raise ec.err(n, msg)
    n.data, n.children = "true_lit", []


__all__ = ["NAME", "fold", "is_static_assert"]

"""Where p4c refuses default values (P4_16 "default values", ``...``).

A list or struct expression holding ``...`` -- or ``...`` itself -- may initialise a variable or
be assigned, but p4c's type checker rejects it as a ``return`` value, as an operand of ``==`` or
``!=`` and as a call argument ("Default values {...} cannot be used in ...").  Which types have
a default at all (a varbit has none in p4c) is decided where the value meets its type
(``exprs.ExprChecker.convert``)."""

from __future__ import annotations

from lark import Token, Tree

from ..check.types import HeaderT, P4Type, StackT, StructLikeT, UnionT, VarbitT

_MSG = "Default values {...} cannot be used in "


def has_dots(e) -> bool:
    """Is ``e`` ``...``, or a list or struct expression (cast or not) that holds one?"""
    if not isinstance(e, Tree):
        return False
    if e.data == "dots_expr":
        return True
    if e.data == "cast":
        return has_dots(e.children[1])
    if e.data == "list_expr":
        return any(has_dots(x) for x in e.children[0].children if x is not None)
    if e.data == "struct_expr":
        return isinstance(e.children[-1], Token) or any(
            has_dots(kv.children[1]) for kv in e.children if isinstance(kv, Tree))
    return False


def check_default_uses(tree: Tree, err) -> None:
    """Raise (``err(node, message)``) at the first default value used where p4c refuses one."""
    for n in tree.iter_subtrees_topdown():
        if n.data == "return_stmt" and n.children and has_dots(n.children[0]):
            raise err(n.children[0], _MSG + "a return statement")
        if n.data == "binop" and str(n.children[1]) in ("==", "!=") \
                and (has_dots(n.children[0]) or has_dots(n.children[2])):
            raise err(n, _MSG + f"operation {n.children[1]}")
        if n.data in ("call", "tcall") and isinstance(n.children[-1], Tree):
            for a in n.children[-1].children:
                value = a.children[1] if isinstance(a, Tree) and a.data == "named_arg" else a
                if has_dots(value):
                    raise err(value, _MSG + "a call argument")


def varbit_default(t: P4Type) -> bool:
    """Would the default value of ``t`` need one of a varbit (which p4c does not support: a
    varbit, or a struct or tuple holding one outside a header)?"""
    if isinstance(t, VarbitT):
        return True
    if isinstance(t, StructLikeT) and not isinstance(t, (HeaderT, UnionT)):
        return any(varbit_default(ft) for _f, ft in t.fields)
    return False


def direct_varbit(t: P4Type) -> bool:
    """Does ``t`` (a struct, header or tuple) have a varbit field of its own?  p4c refuses to
    initialise such a type with ``{..., ...}`` ("Structs, headers and tuples containing varbit
    fields cannot be initialized using ...")."""
    return isinstance(t, StructLikeT) and not isinstance(t, StackT) \
        and any(isinstance(ft, VarbitT) for _f, ft in t.fields)

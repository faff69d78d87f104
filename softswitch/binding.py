"""Checks of call arguments against the parameters of actions and user functions: arity,
the types of out/inout arguments, compile-time action data."""

from __future__ import annotations

from lark import Tree

from .exprs import is_const
from .types import BitT, P4Type, same_type


def compatible(a: P4Type, b: P4Type) -> bool:
    """May an argument of type ``a`` bind to an out/inout parameter of type ``b``?"""
    return same_type(a, b) or (isinstance(a, BitT) and isinstance(b, BitT) and a == b)


_LITERALS = {"int_lit", "true_lit", "false_lit", "string_lit", "error_member", "type_member", "dots_expr"}


def compile_time(g, node) -> bool:
    """Is ``node`` a compile-time constant as p4c's type checker sees it: literals, constants,
    enum/error members, directionless (action data) parameters, and operators over those?"""
    if not isinstance(node, Tree):
        return True
    if node.data in _LITERALS:
        return True
    if node.data == "ident":
        sym = g.scope.lookup(str(node.children[-1]))
        info = getattr(sym, "info", None)
        return sym is not None and (sym.kind == "const" or getattr(info, "direction", None) == "")
    if node.data in ("member", "index", "call", "tcall", "list_expr", "struct_expr"):
        return is_const(g.ex(node)[0])
    return all(compile_time(g, c) for c in node.children if isinstance(c, Tree) and c.data != "name"
               and not c.data.startswith("t_") and c.data not in ("type_name", "specialized_type"))


def bind_arguments(g, what: str, params, args, n, constant_data: bool = False) -> None:
    """Check the arguments of a call of an action or function: arity, the types of out/inout
    arguments (assignable, of the parameter's type), the others convertible to the parameter's.
    ``constant_data``: the directionless parameters (of an action) take compile-time constants
    only (p4c: "argument used for directionless parameter must be a compile-time constant")."""
    if len(args) != len(params):
        raise g.err(n, f"{what} expects {len(params)} arguments, got {len(args)}")
    for p, a in zip(params, args, strict=True):
        if p.direction in ("out", "inout"):
            t = g.lvalue(a)
            if not compatible(t, p.type):
                raise g.err(a, f"argument of type {t} for {p.direction} parameter {p.name}: {p.type}")
        else:
            g.ex_to(a, p.type)
            if constant_data and not p.direction and not compile_time(g, a):
                raise g.err(a, f"argument for the directionless parameter {p.name} of {what} must be "
                               "a compile-time constant")

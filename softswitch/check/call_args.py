"""Checks of call arguments against the parameters of actions and user functions: arity,
the types of out/inout arguments."""

from __future__ import annotations

from .types import BitT, P4Type, same_type


def compatible(a: P4Type, b: P4Type) -> bool:
    """May an argument of type ``a`` bind to an out/inout parameter of type ``b``?"""
    return same_type(a, b) or (isinstance(a, BitT) and isinstance(b, BitT) and a == b)


def bind_arguments(g, what: str, params, args, n) -> None:
    """Check the arguments of a call of an action or function: arity, the types of out/inout
    arguments (assignable, of the parameter's type), the others convertible to the parameter's
    (an action's directionless parameters included: a direct call binds them as `in` ones)."""
    if len(args) != len(params):
        raise g.err(n, f"{what} expects {len(params)} arguments, got {len(args)}")
    check_bindings(g, params, args)


def check_bindings(g, params, args) -> None:
    """Each argument against its parameter (as many of both): out/inout ones assignable and of
    the parameter's type, the others convertible to it."""
    for p, a in zip(params, args, strict=True):
        if p.direction in ("out", "inout"):
            t = g.lvalue(a)
            if not compatible(t, p.type):
                raise g.err(a, f"argument of type {t} for {p.direction} parameter {p.name}: {p.type}")
        else:
            g.ex_to(a, p.type)

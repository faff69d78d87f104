"""Binding of call arguments to the parameters of actions and user functions (python
generator): arity, the types of out/inout arguments, copy-out setters of scalar ones."""

from __future__ import annotations

from lark import Tree

from .exprs import is_const
from .layout import default_code
from .types import BitT, P4Type, StackT, StructLikeT, same_type


def compatible(a: P4Type, b: P4Type) -> bool:
    """May an argument of type ``a`` bind to an out/inout parameter of type ``b``?"""
    return same_type(a, b) or (isinstance(a, BitT) and isinstance(b, BitT) and a == b)


_LITERALS = {"int_lit", "true_lit", "false_lit", "string_lit", "error_member", "type_member"}


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


def bind_arguments(g, what: str, params, args, scalar_outs, n,
                   constant_data: bool = False) -> tuple[list[str], list]:
    """Argument code for a call of an action or function: checks arity and the types of
    out/inout arguments; returns (argument codes, setters of scalar out/inout arguments).
    ``constant_data``: the directionless parameters (of an action) take compile-time constants
    only (p4c: "argument used for directionless parameter must be a compile-time constant")."""
    if len(args) != len(params):
        raise g.err(n, f"{what} expects {len(params)} arguments, got {len(args)}")
    codes, setters = [], []
    for i, (p, a) in enumerate(zip(params, args, strict=True)):
        if p.direction in ("out", "inout"):
            code, t, setter = g.lvalue(a)
            if not compatible(t, p.type):
                raise g.err(a, f"argument of type {t} for {p.direction} parameter {p.name}: {p.type}")
            # an `out` scalar is a fresh local in p4c's output (BMv2 zero-initialises it)
            codes.append(default_code(p.type, 0) if p.direction == "out" and i in scalar_outs else code)
            if i in scalar_outs:
                setters.append(setter)
        else:
            codes.append(g.ex_to(a, p.type))
            if constant_data and not p.direction and not compile_time(g, a):
                raise g.err(a, f"argument for the directionless parameter {p.name} of {what} must be "
                               "a compile-time constant")
    return codes, setters


def compound_copies(g, params, codes: list[str]) -> tuple[list[str], list[str], list[str]]:
    """p4c copies header, union, struct and stack arguments of actions and functions too
    (``RemoveActionParameters``, ``InlineActions``, ``InlineFunctions``): a new local copied in
    (``in``/``inout``) or fresh (``out``), copied back with BMv2's assignment after the call.
    Returns (lines before the call, argument codes to pass, copy-out lines)."""
    pre: list[str] = []
    passed = list(codes)
    post: list[str] = []
    for i, p in enumerate(params[:len(codes)]):
        if p.direction not in ("in", "inout", "out") or not isinstance(p.type, (StructLikeT, StackT)):
            continue
        tmp = g.fresh("_cp")
        fresh = default_code(p.type, g.prog.err_oob)
        pre.append(f"{tmp} = {fresh}" if p.direction == "out" else f"{tmp} = _fresh({fresh}, {codes[i]})")
        passed[i] = tmp
        if p.direction != "in":
            post.append(f"{codes[i]}._asg({tmp})")
    return pre, passed, post

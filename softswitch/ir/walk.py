"""Queries over IR statements shared by the backends."""

from __future__ import annotations

import dataclasses

from . import nodes as ir


def dynamic_elems(s: ir.Stmt) -> list[ir.StackElem]:
    """Stack elements with a run-time index that statement ``s`` itself evaluates (inner ones
    first; for ``if``/``switch`` only the condition; for a loop none, its test is an ``if``),
    probed before the statement runs."""
    roots = [s.cond] if isinstance(s, ir.If) else [s.value] if isinstance(s, ir.Switch) \
        else [] if isinstance(s, ir.Loop) else [s]
    out: list[ir.StackElem] = []

    def walk(x) -> None:
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, (ir.Expr, ir.Stmt)) and not isinstance(x, (ir.If, ir.Switch, ir.Loop)) \
                or x is s:
            for f in dataclasses.fields(x):
                walk(getattr(x, f.name))
            if isinstance(x, ir.StackElem) and x.which == "index" and not isinstance(x.index, ir.Const):
                out.append(x)

    for r in roots:
        if r is not None:
            walk(r)
    return out


def has_dynamic_index(e: ir.Expr) -> bool:
    """Does evaluating ``e`` index a header stack at a run-time index?"""
    return bool(dynamic_elems(ir.If(e, [], [])))


def stacks_used(p: ir.Program) -> list[ir.Stack]:
    """Every header-stack type the code of ``p`` uses (locals, parameters, values of blocks,
    actions, functions and tables), in first-seen order: a backend declares each once."""
    seen: dict[tuple, ir.Stack] = {}

    def walk(x) -> None:
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, ir.Stack):
            seen.setdefault((x.elem.pyname, x.size), x)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type) and isinstance(
                x, (ir.Expr, ir.Stmt, ir.Param, ir.Action, ir.Function, ir.Block, ir.Table)):
            for f in dataclasses.fields(x):
                walk(getattr(x, f.name))

    walk([list(p.blocks.values()), list(p.actions.values()), list(p.functions.values()),
          list(p.tables.values())])
    return list(seen.values())


__all__ = ["dynamic_elems", "has_dynamic_index", "stacks_used"]

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


def control_applies(stmts: list[ir.Stmt]) -> list[ir.ControlApply]:
    """The sub-control applies among ``stmts`` (inside ``if``/``switch`` too), in order."""
    out: list[ir.ControlApply] = []
    for s in stmts:
        if isinstance(s, ir.ControlApply):
            out.append(s)
        elif isinstance(s, ir.If):
            out += control_applies(s.then) + control_applies(s.els)
        elif isinstance(s, ir.Switch):
            for _labels, body in s.cases:
                out += control_applies(body)
    return out


def instance_children(b: ir.Block) -> list[str]:
    """The sub-control instances ``b`` applies (each once), whose frames live in ``b``'s frame."""
    return list(dict.fromkeys(ca.control for ca in control_applies(list(b.init) + list(b.body))))


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


def nodes_of(x, kind: type) -> list:
    """Every node of class ``kind`` in ``x`` (statements, expressions, lists), nested ones too."""
    out: list = []

    def walk(y) -> None:
        if isinstance(y, (list, tuple)):
            for z in y:
                walk(z)
        elif dataclasses.is_dataclass(y) and isinstance(y, (ir.Expr, ir.Stmt)):
            if isinstance(y, kind):
                out.append(y)
            for f in dataclasses.fields(y):
                walk(getattr(y, f.name))

    walk(x)
    return out


def direct_meter_target(actions: list[ir.Action], meter: str) -> ir.Expr | None:
    """The field BMv2 writes a direct meter's colour into on every hit of its table: p4c makes
    the one target of the meter's ``read`` calls its ``result_target``.  None when the calls
    name different targets or one the table cannot see (an action parameter or local); the
    ``read`` itself then assigns, as a fallback."""
    reads = [c for a in actions for c in nodes_of(a.body, ir.ExternCall)
             if c.name == "direct_meter.read" and c.inst == meter]
    if not reads or any(r.out != reads[0].out for r in reads):
        return None
    if any(ref.kind not in ("param", "var") for ref in nodes_of(reads[0].out, ir.Ref)):
        return None
    return reads[0].out


__all__ = ["control_applies", "direct_meter_target", "dynamic_elems", "has_dynamic_index",
           "instance_children", "nodes_of", "stacks_used"]

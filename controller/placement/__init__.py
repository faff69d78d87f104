"""``place``: the placement entry point, top of the placement chain.

The chain runs one way (each module imports only those before it):
``tree`` (result types, tree evaluation) <- ``solver`` (solver helpers) <-
``roots`` (root options) <- ``greedy`` (start) <- ``routes``, ``search`` (array routes, tabu
search), ``model``, ``assign``, ``scale`` (the tree-flow, root-assignment and scalable models)
<- this package's ``__init__``.  The result types are re-exported here, so
``from controller.placement import Placement`` keeps working for the deployment code.
"""

from __future__ import annotations

import time

from controller.placement import assign as placement_assign
from controller.placement import model as placement_model
from controller.placement import scale as placement_scale
from controller.placement.solver import Solution, keep_sigint_handler
from controller.placement.tree import (
    Aggregator,
    Bound,
    Child,
    JobPlacement,
    JobTree,
    LinkLoad,
    Objective,
    Placement,
    build_tree,
    evaluate,
    prune_relays,
)
from controller.topology import Topology

#: Below this many (job, candidate switch) pairs an unproven scalable answer is handed to the exact
#: model (root-assignment or tree-flow) for the remaining time.
EXACT_PAIRS: int = 4000
METHODS = ("auto", "scale", "assign", "general")
#: With a budget, share of the time limit spent on the scalable model without it (its bound holds).
BUDGET_BOUND_SHARE: float = 0.2

__all__ = ["Aggregator", "Bound", "Child", "JobPlacement", "JobTree", "LinkLoad", "Objective", "Placement",
           "build_tree", "evaluate", "place", "place_incremental", "prune_relays"]


def place(
    topo: Topology,
    budget: int | None = None,
    *,
    time_limit: float = 60.0,
    workers: int = 2,
    force_general: bool = False,
    method: str = "auto",
    previous: dict[int, str] | None = None,
) -> Placement:
    """Placement of every job in ``topo`` (CP-SAT), with its proven lower bounds.  ``budget``: at
    most this total ``deploy_cost`` of switches made programmable (None: every programmable switch
    is deployed).  ``method``: "auto" (the scalable decomposition without a budget, the tree-flow
    model with one; small unproven instances are finished by an exact model), or one model by name.
    ``previous`` (job id -> root) starts the scalable model from an earlier answer.
    Raises ``InfeasiblePlacement`` naming the binding constraints, ``SolverError`` on timeout.
    ``force_general`` is ``method="general"`` (kept for callers that cross-check the models)."""
    if budget is not None and budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    method = "general" if force_general else method
    placement_model.precheck(topo, budget)
    deadline = time.perf_counter() + time_limit
    scaled, relaxed_bound = None, 0
    if budget is None and method in ("auto", "scale"):
        with keep_sigint_handler():
            sol = placement_scale.solve(topo, time_limit=time_limit, workers=workers, previous=previous)
        if sol is not None and sol.extra.get("unlifted"):
            relaxed_bound = sol.bottleneck_bound
        elif sol is not None:
            try:
                scaled = _result(topo, budget, sol, "cp-sat/root-classes", sol.extra.get("routes"))
            except ValueError:  # a memory repair pushed a fan-in over the limit: exact models
                relaxed_bound = sol.bottleneck_bound
            small = sum(len(j.workers) > 1 for j in topo.jobs) * len(topo.switches) <= EXACT_PAIRS
            if scaled is not None and (scaled.optimal or method == "scale" or not small):
                return scaled
    if budget is not None and method == "auto":  # without the budget: a relaxation, so a bound
        with keep_sigint_handler():
            sol = placement_scale.solve(topo, time_limit=BUDGET_BOUND_SHARE * time_limit, workers=workers)
        relaxed_bound = 0 if sol is None else sol.bottleneck_bound
    left = max(deadline - time.perf_counter(), 1.0) if scaled is not None or relaxed_bound else time_limit
    exact = _exact(topo, budget, left, workers, method)
    if relaxed_bound > exact.bound.bottleneck_bytes:  # full aggregation, no memory/budget: a relaxation
        exact = Placement(**{**exact.__dict__, "bound": Bound(relaxed_bound, exact.bound.total_bytes),
                             "notes": (*exact.notes, "bound: the scalable model's relaxation")})
    if scaled is None:
        return exact
    better = min((scaled, exact), key=lambda p: p.objective.key())
    b = max(scaled.bound.bottleneck_bytes, exact.bound.bottleneck_bytes)
    return Placement(**{**better.__dict__, "bound": Bound(b, better.bound.total_bytes)})


def _exact(topo: Topology, budget: int | None, time_limit: float, workers: int, method: str) -> Placement:
    """The root-assignment model where it is exact (unless the tree-flow model is asked for)."""
    options = None if method == "general" else placement_assign.applicable(topo, budget)
    with keep_sigint_handler():
        if options is not None:
            return _result(topo, budget, placement_assign.solve(topo, options, time_limit=time_limit,
                                                                workers=workers), "cp-sat/root-assignment")
        return _result(
            topo,
            budget,
            placement_model.solve(topo, budget, time_limit=time_limit, workers=workers),
            "cp-sat/tree-flow",
        )


def _result(topo: Topology, budget: int | None, sol: Solution, solver: str, routes=None) -> Placement:
    """Evaluate a model's choice from the routes alone and attach its proven bounds."""
    result = evaluate(topo, prune_relays(topo, sol.choice, routes), budget, solve_time_s=round(sol.wall_s, 4),
                      optimal=sol.optimal, solver=solver, routes=routes)
    got = (result.objective.bottleneck_bytes, result.objective.total_bytes)
    if sol.choice and sol.optimal and got != (sol.bottleneck_bytes, sol.total_bytes):
        raise RuntimeError(f"model and routing disagree: model {sol.bottleneck_bytes, sol.total_bytes}, "
                           f"routes {got}")
    notes = tuple(f"{p['phase']}: {p['status']} in {p['wall_s']} s" for p in sol.phases)
    b_bound = max(result.bound.bottleneck_bytes, sol.bottleneck_bound)
    if result.optimal:
        bound = result.bound
    elif sol.total_bound is not None and b_bound >= result.objective.bottleneck_bytes:
        bound = Bound(b_bound, sol.total_bound)
    else:
        bound = Bound(b_bound)
    return Placement(
        **{**result.__dict__, "notes": notes, "bound": bound, "build_time_s": round(sol.build_s, 4)}
    )


def place_incremental(topo: Topology, previous: Placement, *, time_limit: float = 60.0,
                      workers: int = 2) -> Placement:
    """Placement after adding or removing jobs: the jobs ``previous`` placed keep their roots
    unless moving some lowers the bottleneck, and then as few move as possible.  Two scalable
    solves share the time: one with the earlier jobs fixed, one free with "fewest moves" right
    after the bottleneck; the free one is taken only if its bottleneck is strictly lower.  Its
    lower bound holds for both.  Without the scalable model (it does not apply), ``place``."""
    roots = {jp.job_id: jp.root for jp in previous.jobs if jp.root is not None}
    if previous.budget is not None:
        return place(topo, previous.budget, time_limit=time_limit, workers=workers)
    placement_model.precheck(topo, None)
    deadline = time.perf_counter() + time_limit
    with keep_sigint_handler():
        fixed = placement_scale.solve(topo, time_limit=time_limit / 2, workers=workers, previous=roots,
                                      mode="fixed")
        free = placement_scale.solve(topo, time_limit=max(deadline - time.perf_counter(), 1.0),
                                     workers=workers, previous=roots, mode="stay")
    if any(sol is None or sol.extra.get("unlifted") for sol in (fixed, free)):
        return place(topo, time_limit=time_limit, workers=workers)
    kept = _result(topo, None, fixed, "cp-sat/root-classes (others fixed)", fixed.extra.get("routes"))
    moved = _result(topo, None, free, "cp-sat/root-classes (fewest moves)", free.extra.get("routes"))
    best = moved if moved.objective.bottleneck_bytes < kept.objective.bottleneck_bytes else kept
    lower = max(kept.bound.bottleneck_bytes, moved.bound.bottleneck_bytes)
    proven = best.objective.bottleneck_bytes == lower
    total = moved.bound.total_bytes if proven else None
    changed = sorted(
        j for j, r in roots.items() if j in {jp.job_id for jp in best.jobs} and best.job(j).root != r
    )
    notes = (*best.notes, f"incremental: {len(changed)} earlier job(s) moved {changed}")
    return Placement(**{**best.__dict__, "bound": Bound(lower, total), "notes": notes,
                        "optimal": proven and total == best.objective.total_bytes,
                        "solve_time_s": round(kept.solve_time_s + moved.solve_time_s, 4),
                        "build_time_s": round(kept.build_time_s + moved.build_time_s, 4)})

"""``place``: the placement entry point, top of the placement chain.

The chain runs one way (each module imports only those before it):
``placement_tree`` (result types, tree evaluation) <- ``placement_solver`` (solver helpers) <-
``placement_roots`` (root options) <- ``placement_greedy`` (start) <- ``placement_routes``,
``placement_model``, ``placement_assign``, ``placement_scale`` (models) <- this module.
The result types are re-exported here, so ``from controller.placement import Placement`` keeps
working for the deployment code.
"""

from __future__ import annotations

from controller import placement_assign, placement_model
from controller.placement_solver import Solution, keep_sigint_handler
from controller.placement_tree import (
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

__all__ = ["Aggregator", "Bound", "Child", "JobPlacement", "JobTree", "LinkLoad", "Objective", "Placement",
           "build_tree", "evaluate", "place", "prune_relays"]


def place(topo: Topology, budget: int | None = None, *, time_limit: float = 60.0, workers: int = 2,
          force_general: bool = False) -> Placement:
    """Optimal placement of every job in ``topo`` (CP-SAT).  ``budget``: at most this total
    ``deploy_cost`` of switches made programmable (None: every programmable switch is deployed).
    Raises ``InfeasiblePlacement`` naming the binding constraints, ``SolverError`` on timeout.
    ``force_general`` skips the root-assignment shortcut (used to cross-check both models)."""
    if budget is not None and budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    placement_model.precheck(topo, budget)
    options = None if force_general else placement_assign.applicable(topo, budget)
    if options is not None:
        with keep_sigint_handler():
            sol = placement_assign.solve(topo, options, time_limit=time_limit, workers=workers)
        solver = "cp-sat/root-assignment"
    else:
        with keep_sigint_handler():
            sol = placement_model.solve(topo, budget, time_limit=time_limit, workers=workers)
        solver = "cp-sat/tree-flow"
    return _result(topo, budget, sol, solver)


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
    return Placement(**{**result.__dict__, "notes": notes, "bound": bound, "build_time_s": round(sol.build_s, 4)})

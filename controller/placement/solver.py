"""Solver helpers shared by every placement model (second link of the placement chain).

Which switches can aggregate a job, a configured CP-SAT solver, the solution record models hand
to ``placement.place``, and the SIGINT guard around a solve.  Nothing here knows a model.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from controller.topology import Job, Topology

#: Share of the time limit the final tidy-up phase (fewest regions) may use.
TIDY_FRACTION: float = 0.1


def capable(topo: Topology) -> list[str]:
    """Switches that can run the DHC program, sorted."""
    return sorted(n for n, s in topo.switches.items() if s.programmable)


def fits(topo: Topology, job: Job) -> list[str]:
    """Capable switches with room for one region of ``job``."""
    return [s for s in capable(topo) if topo.switches[s].register_slots >= job.region_slots]


def new_solver(time_limit: float, workers: int) -> cp_model.CpSolver:
    """A CP-SAT solver with this time limit (seconds, floored at 10 ms) and thread count."""
    s = cp_model.CpSolver()
    s.parameters.num_workers = workers
    s.parameters.max_time_in_seconds = max(time_limit, 0.01)
    return s


@dataclass
class Solution:
    """A model's answer: (root, aggregators) per job, its objective as the model sees it, and the
    proven lower bounds (bytes; 0 / None when the model proved nothing)."""

    choice: dict[int, tuple[str | None, set[str]]]
    bottleneck_bytes: int
    total_bytes: int
    optimal: bool
    wall_s: float
    phases: list[dict]
    bottleneck_bound: int = 0
    total_bound: int | None = None
    build_s: float = 0.0
    extra: dict = field(default_factory=dict)


def postorder(kids: dict[str, list[str]], root: str) -> list[str]:
    """Nodes of the tree ``kids`` below ``root`` (included), every child before its parent."""
    order, todo = [], [root]
    while todo:
        node = todo.pop()
        order.append(node)
        todo.extend(kids.get(node, ()))
    return order[::-1]


def proven_bound(solver: cp_model.CpSolver, status: int) -> int:
    """The objective's proven lower bound after a solve (the optimum if proven optimal)."""
    if status == cp_model.OPTIMAL:
        return round(solver.objective_value)
    if status == cp_model.FEASIBLE:
        return int(-(-solver.best_objective_bound // 1))  # integer objective: round the bound up
    return 0


@dataclass
class PhaseRun:
    """What :func:`minimise_in_turn` left: the last solved phase's values (tracked variable index
    -> value), whether every load phase so far was proven optimal, the per-phase log, each phase's
    proven lower bound (solver units; recorded while the phases before it were proven), and the
    status and index of the last phase run (index -1: every objective was a constant)."""

    values: dict[int, int]
    optimal: bool
    log: list[dict]
    bounds: dict[str, int]
    status: int = cp_model.UNKNOWN
    phase: int = -1


def minimise_in_turn(m: cp_model.CpModel, phases: list[tuple[str, object]], tracked: list, *,
                     start: float, time_limit: float, workers: int) -> PhaseRun:
    """Lexicographic optimisation shared by the placement models: minimise each objective in
    turn (skipping constants), fix each phase's optimum as a bound for the next and hint its
    solution; stop at the first phase that finds nothing or is not proven (later ones would rest
    on it).  The ``regions`` phase is a tidy-up: it never changes loads, so it gets a short slice
    of the time and does not count towards ``optimal``."""
    run = PhaseRun({}, True, [], {})
    for i, (name, objective) in enumerate(phases):
        if isinstance(objective, int):
            continue  # nothing left to optimise (e.g. no switch-to-switch traffic at all)
        left = time_limit - (time.perf_counter() - start)
        if name == "regions":
            left = min(left, max(TIDY_FRACTION * time_limit, 1.0))
        solver = new_solver(left, workers)
        m.minimize(objective)
        status = solver.solve(m)
        run.status, run.phase = status, i
        run.log.append({"phase": name, "status": solver.status_name(status),
                        "wall_s": round(solver.wall_time, 4), "value": solver.objective_value})
        if run.optimal:
            run.bounds[name] = proven_bound(solver, status)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break  # keep the previous phase's solution (the caller decides if there is none)
        if name != "regions":
            run.optimal &= status == cp_model.OPTIMAL
        run.values = {v.Index(): solver.value(v) for v in tracked}
        m.clear_hints()
        for v in tracked:
            m.add_hint(v, run.values[v.Index()])
        m.add(objective <= round(solver.objective_value))
        if not run.optimal:
            break
    return run


@contextlib.contextmanager
def keep_sigint_handler() -> Iterator[None]:
    """CP-SAT installs its own SIGINT handler for the solve and leaves SIG_DFL behind, after
    which Ctrl-C kills the process without running any cleanup (Mininet would stay up).
    Put back whatever Python had."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    try:
        yield
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGINT, previous)

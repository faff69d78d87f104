"""Solver helpers shared by every placement model (second link of the placement chain).

Which switches can aggregate a job, a configured CP-SAT solver, the solution record models hand
to ``placement.place``, and the SIGINT guard around a solve.  Nothing here knows a model.
"""

from __future__ import annotations

import contextlib
import signal
import threading
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

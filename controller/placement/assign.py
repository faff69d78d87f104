"""Root-assignment model: the exact placement when no register, fan-in or budget limit can bind.

For a fixed root r, aggregating at a switch never increases any link's load (it sends one stream
instead of everything it received), so "every capable switch on the tree aggregates" minimises
every link's load at once, and the fewest aggregators giving the same loads are the root plus
the switches where two or more streams meet.  When (a) no budget is set, (b) every capable switch
has room for the regions of all jobs that could ever use it, and (c) that full aggregation keeps
every fan-in within MAX_FAN_IN, the only decision left is the root of each job: loads become
linear in the root indicators ``y[j, r]`` and the LP bound is tight, so CP-SAT proves optimality
on k=8 fat-trees in seconds.  ``applicable`` checks (a)-(c); otherwise the general model
(``model``) is used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from math import gcd

from ortools.sat.python import cp_model

from controller.errors import SolverError
from controller.placement.roots import RootOption, root_options
from controller.placement.solver import Solution, fits, minimise_in_turn
from controller.topology import Topology


def applicable(topo: Topology, budget: int | None) -> dict[int, list[RootOption]] | None:
    """Root options per job if the assignment model is exact for this input, else None."""
    if budget is not None:
        return None
    jobs = [j for j in topo.jobs if j.needs_aggregation]
    demand: dict[str, int] = {}
    for job in jobs:
        for s in fits(topo, job):
            demand[s] = demand.get(s, 0) + job.region_slots
    if any(need > topo.switches[s].register_slots for s, need in demand.items()):
        return None
    out: dict[int, list[RootOption]] = {}
    for job in jobs:
        options, fanin_ok = root_options(topo, job)
        if not fanin_ok or not options:
            return None
        out[job.id] = options
    return out


def solve(topo: Topology, options: dict[int, list[RootOption]], *, time_limit: float = 60.0,
          workers: int = 2) -> Solution:
    """Lexicographic: bottleneck, total bytes, aggregator count — over root choices only."""
    start = time.perf_counter()
    if not options:  # only single-worker jobs: nothing to place
        return Solution({}, 0, 0, True, 0.0, [])
    rm = _root_model(topo, options)
    build_s = time.perf_counter() - start
    values, optimal, log, bound = _optimise(rm, start, time_limit, workers)
    choice: dict[int, tuple[str | None, set[str]]] = {}
    for jid, opts in options.items():
        o = next(o for o in opts if values[(jid, o.root)])
        choice[jid] = (o.root, set(o.aggregators))
    picked = {(jid, r) for (jid, r), v in values.items() if v}
    b_val = max(sum(w for w, (jid, r) in ts if (jid, r) in picked) for ts in rm.load_terms.values()) * rm.unit
    t_val = sum(sum(w for w, (jid, r) in ts if (jid, r) in picked) for ts in rm.load_terms.values()) * rm.unit
    return Solution(choice, b_val, t_val, optimal, time.perf_counter() - start, log, bound["bottleneck"] or 0,
                    bound["total"], build_s)


@dataclass
class _RootModel:
    """The root-choice model: ``y[(job, root)]``, the objectives in order, and each link's load
    terms (scaled weight, (job, root)) in units of ``unit`` bytes."""

    m: cp_model.CpModel
    y: dict[tuple[int, str], cp_model.IntVar]
    phases: list[tuple[str, cp_model.LinearExpr]]
    load_terms: dict[int, list[tuple[int, tuple[int, str]]]]
    unit: int


def _root_model(topo: Topology, options: dict[int, list[RootOption]]) -> _RootModel:
    m = cp_model.CpModel()
    jobs = {j.id: j for j in topo.jobs}
    y = {(jid, o.root): m.new_bool_var(f"y_{jid}_{o.root}") for jid, opts in options.items() for o in opts}
    for jid, opts in options.items():
        m.add_exactly_one(y[(jid, o.root)] for o in opts)
    terms: dict[int, list] = {}
    keyed: dict[int, list] = {}
    for jid, opts in options.items():
        size = jobs[jid].bytes_per_iteration
        for o in opts:
            for link, n in o.link_streams.items():
                terms.setdefault(link, []).append((size * n, y[(jid, o.root)]))
                keyed.setdefault(link, []).append((size * n, y[(jid, o.root)], (jid, o.root)))
    unit = gcd(*(w for ts in terms.values() for w, _ in ts))
    loads = {link: sum((w // unit) * v for w, v in ts) for link, ts in terms.items()}
    load_terms = {link: [(w // unit, key) for w, v, key in keyed[link]] for link in terms}
    upper = sum(w // unit for ts in terms.values() for w, _ in ts)
    bottleneck = m.new_int_var(0, upper, "bottleneck")
    for expr in loads.values():
        m.add(bottleneck >= expr)
    n_aggs = sum(len(o.aggregators) * y[(jid, o.root)] for jid, opts in options.items() for o in opts)
    phases = [("bottleneck", bottleneck), ("total", sum(loads.values())), ("regions", n_aggs)]
    return _RootModel(m, y, phases, load_terms, unit)


def _optimise(rm: _RootModel, start: float, time_limit: float, workers: int
              ) -> tuple[dict[tuple[int, str], int], bool, list[dict], dict[str, int | None]]:
    """The shared lexicographic phases (``solver.minimise_in_turn``).  Returns the last
    solution's root indicators, whether it is proven optimal, the per-phase log and the proven
    bounds (bytes)."""
    run = minimise_in_turn(rm.m, rm.phases, list(rm.y.values()), start=start,
                           time_limit=time_limit, workers=workers)
    if not run.values:
        raise SolverError(f"no placement found within {time_limit:.1f} s "
                          f"(solver status {run.log[-1]['status']}); raise --time-limit")
    total = run.bounds.get("total")
    bound = {"bottleneck": run.bounds.get("bottleneck", 0) * rm.unit,
             "total": None if total is None else total * rm.unit}
    return {key: run.values[v.Index()] for key, v in rm.y.items()}, run.optimal, run.log, bound

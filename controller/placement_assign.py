"""Root-assignment model: the exact placement when no register, fan-in or budget limit can bind.

For a fixed root r, aggregating at a switch never increases any link's load (it sends one stream
instead of everything it received), so "every capable switch on the tree aggregates" minimises
every link's load at once, and the fewest aggregators giving the same loads are the root plus
the switches where two or more streams meet.  When (a) no budget is set, (b) every capable switch
has room for the regions of all jobs that could ever use it, and (c) that full aggregation keeps
every fan-in within MAX_FAN_IN, the only decision left is the root of each job: loads become
linear in the root indicators ``y[j, r]`` and the LP bound is tight, so CP-SAT proves optimality
on k=8 fat-trees in seconds.  ``applicable`` checks (a)-(c); otherwise the general model
(``placement_model``) is used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from math import gcd

from ortools.sat.python import cp_model

from controller.errors import SolverError
from controller.placement_model import TIDY_FRACTION, Solution, _capable, _solver, postorder
from controller.topology import Job, Topology
from dhc.wire import MAX_FAN_IN


@dataclass(frozen=True)
class RootOption:
    """Job j rooted at ``root`` with full aggregation: its aggregators and per-link streams."""

    root: str
    aggregators: frozenset[str]
    link_streams: dict[int, int]


def _fits(topo: Topology, job: Job) -> list[str]:
    return [s for s in _capable(topo) if topo.switches[s].register_slots >= job.region_slots]


def root_options(topo: Topology, job: Job) -> tuple[list[RootOption], bool]:
    """Every useful root of ``job`` and whether full aggregation respects the fan-in limit under
    all of them.  Roots receiving a single stream are dropped: rooting at that stream's sender
    gives the same tree minus one link."""
    fits = set(_fits(topo, job))
    attached: dict[str, int] = {}
    for w in job.workers:
        sw = topo.attachment(w).switch
        attached[sw] = attached.get(sw, 0) + 1
    options: list[RootOption] = []
    fanin_ok = True
    for r in sorted(fits):
        up, kids = topo.upward_tree(attached, r)   # node -> link toward r; children
        streams: dict[str, int] = {}  # node -> streams it sends upward
        inflow: dict[str, int] = {}
        for node in postorder(kids, r):
            inflow[node] = attached.get(node, 0) + sum(streams[c] for c in kids.get(node, ()))
            streams[node] = 1 if node in fits else inflow[node]
        aggs = frozenset(n for n in inflow if n in fits and (inflow[n] >= 2 or n == r))
        if any(inflow[n] > MAX_FAN_IN for n in aggs):
            fanin_ok = False
        if inflow[r] < 2:
            continue
        link_streams = {link: streams[node] for node, link in up.items()}
        for w in job.workers:
            link_streams[topo.attachment(w).link] = 1
        options.append(RootOption(r, aggs, link_streams))
    return options, fanin_ok


def applicable(topo: Topology, budget: int | None) -> dict[int, list[RootOption]] | None:
    """Root options per job if the assignment model is exact for this input, else None."""
    if budget is not None:
        return None
    jobs = [j for j in topo.jobs if j.needs_aggregation]
    demand: dict[str, int] = {}
    for job in jobs:
        for s in _fits(topo, job):
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
    optimal, log = True, []
    values: dict[tuple[int, str], int] = {}
    for name, objective in phases:
        left = time_limit - (time.perf_counter() - start)
        if name == "regions":  # a tidy-up: it never changes loads, so it gets a short slice
            left = min(left, max(TIDY_FRACTION * time_limit, 1.0))
        solver = _solver(left, workers)
        m.minimize(objective)
        status = solver.solve(m)
        log.append({"phase": name, "status": solver.status_name(status), "wall_s": round(solver.wall_time, 4),
                    "value": solver.objective_value})
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            if not values:
                raise SolverError(f"no placement found within {time_limit:.1f} s "
                                  f"(solver status {solver.status_name(status)}); raise --time-limit")
            break
        if name != "regions":
            optimal &= status == cp_model.OPTIMAL
        values = {key: solver.value(v) for key, v in y.items()}
        m.clear_hints()
        for key, v in y.items():
            m.add_hint(v, values[key])
        m.add(objective <= round(solver.objective_value))
        if not optimal:
            break
    choice: dict[int, tuple[str | None, set[str]]] = {}
    for jid, opts in options.items():
        o = next(o for o in opts if values[(jid, o.root)])
        choice[jid] = (o.root, set(o.aggregators))
    picked = {(jid, r) for (jid, r), v in values.items() if v}
    b_val = max(sum(w for w, (jid, r) in ts if (jid, r) in picked) for ts in load_terms.values()) * unit
    t_val = sum(sum(w for w, (jid, r) in ts if (jid, r) in picked) for ts in load_terms.values()) * unit
    return Solution(choice, b_val, t_val, optimal, time.perf_counter() - start, log)

"""CP-SAT model of the aggregation-tree placement (see docs/placement.md for the mathematics).

Per job j with at least two workers and per candidate root r, the routes of j's workers toward r
form a tree T(j, r) (routes are unique and prefix-consistent).  The model picks one root per job
(``y``), the aggregating switches (``a``), and propagates stream counts bottom-up along the tree
of the chosen root: a switch sends 1 stream upward if it aggregates, otherwise everything it
received (``f``).  ``g`` is the stream count on a directed tree arc; an arc exists only under the
roots whose tree contains it (``z``).  Every relation is linear or a linear equality enforced by
one literal, which CP-SAT handles natively.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from controller.errors import BindingConstraint, InfeasiblePlacement, SolverError
from controller.placement.greedy import greedy_choice
from controller.placement.solver import Solution, minimise_in_turn, new_solver, postorder
from controller.placement.solver import capable as capable_switches
from controller.topology import Job, Topology
from dhcwire.p4names import MAX_FAN_IN

#: Which stream formulation ``build`` uses by default (see docs/placement.md).
PER_ROOT: bool = False


@dataclass
class _JobVars:
    job: Job
    y: dict[str, cp_model.IntVar]                      # root choice
    a: dict[str, cp_model.IntVar]                      # aggregates (only capable switches)
    inflow: dict[str, cp_model.LinearExpr] = field(default_factory=dict)
    g: dict[tuple, cp_model.IntVar] = field(default_factory=dict)  # (tail, link[, root]) -> streams
    tree_streams: cp_model.IntVar | None = None


@dataclass
class Model:
    """A built model plus the handles needed to read a solution or explain infeasibility."""

    model: cp_model.CpModel
    jobs: list[_JobVars]
    link_load: dict[int, cp_model.LinearExpr]   # switch-switch links, in scaled byte units
    host_load: dict[int, int]                   # host links: constant, scaled units
    unit: int                                   # bytes per scaled unit
    deploy: dict[str, cp_model.IntVar | int]
    assumptions: dict[int, BindingConstraint] = field(default_factory=dict)


def precheck(topo: Topology, budget: int | None) -> None:
    """Infeasibility that needs no solver, reported with the constraint that causes it."""
    capable = capable_switches(topo)
    binding: list[BindingConstraint] = []
    for job in topo.jobs:
        if not job.needs_aggregation:
            continue
        if not capable:
            binding.append(
                BindingConstraint(
                    "no-candidate",
                    f"job {job.id}",
                    f"{len(job.workers)} workers need aggregation but no switch is programmable",
                )
            )
            continue
        fits = [s for s in capable if topo.switches[s].register_slots >= job.region_slots]
        if not fits:
            best = max(topo.switches[s].register_slots for s in capable)
            binding.append(BindingConstraint(
                "memory", f"job {job.id}",
                f"needs {job.region_slots} register slots (2 x window {job.window}); "
                f"the largest programmable switch has {best}"))
            continue
        cheapest = min(topo.switches[s].deploy_cost for s in fits)
        if budget is not None and cheapest > budget:
            binding.append(BindingConstraint(
                "budget", "network",
                f"budget {budget} is below the cost {cheapest} of the cheapest switch that could "
                f"aggregate job {job.id} ({len(job.workers)} workers)"))
    if binding:
        raise InfeasiblePlacement(binding)


class _Assumptions:
    """With ``diagnose``, one assumption literal per guarded constraint, so an infeasible model
    yields the constraints in its core (by literal index); without it, guards are empty."""

    def __init__(self, m: cp_model.CpModel, diagnose: bool) -> None:
        self.m = m
        self.diagnose = diagnose
        self.by_index: dict[int, BindingConstraint] = {}

    def guard(self, kind: str, where: str, detail: str) -> list:
        if not self.diagnose:
            return []
        lit = self.m.new_bool_var(f"assume_{kind}_{where}")
        self.m.add_assumption(lit)
        self.by_index[lit.Index()] = BindingConstraint(kind, where, detail)
        return [lit]


def build(topo: Topology, budget: int | None, *, diagnose: bool = False, root_cut: bool = True,
          per_root: bool | None = None) -> Model:
    """Build the CP-SAT model.  With ``diagnose`` every memory, fan-in and budget constraint is
    guarded by an assumption literal so an infeasible model yields the constraints that conflict.

    Variables and constraints are created in a fixed order (the helpers below are called in
    sequence): CP-SAT's search, and so the placement found within a time limit, depends on it."""
    m = cp_model.CpModel()
    capable = capable_switches(topo)
    jobs = [j for j in topo.jobs if j.needs_aggregation]
    unit = math.gcd(*(j.bytes_per_iteration for j in jobs)) if jobs else 1
    guards = _Assumptions(m, diagnose)
    deploy = _deploy_vars(m, topo, capable, budget, guards)
    fanin_guard: dict[str, list] = {}
    out: list[_JobVars] = []
    for job in jobs:
        jv = _job_vars(m, topo, job, capable, PER_ROOT if per_root is None else per_root)
        for s in jv.a:
            if s not in fanin_guard:
                fanin_guard[s] = guards.guard("fan-in", s,
                                              f"an aggregator accepts at most {MAX_FAN_IN} children")
            m.add(jv.inflow[s] <= MAX_FAN_IN).only_enforce_if([jv.a[s], *fanin_guard[s]])
            if budget is not None:
                m.add_implication(jv.a[s], deploy[s])
        for r, y in jv.y.items():
            m.add_implication(y, jv.a[r])
            if root_cut:  # a root with one child is dominated by rooting at that child
                m.add(jv.inflow[r] >= 2).only_enforce_if(y)
        out.append(jv)
    _memory_limits(m, topo, capable, out, guards)
    link_load, host_load = _loads(topo, out, unit)
    return Model(m, out, link_load, host_load, unit, deploy, guards.by_index)


def _deploy_vars(m: cp_model.CpModel, topo: Topology, capable: list[str], budget: int | None,
                 guards: _Assumptions) -> dict[str, cp_model.IntVar | int]:
    """Whether each capable switch is made programmable: always without a budget, else a choice
    whose total cost the budget bounds."""
    if budget is None:
        return {s: 1 for s in capable}
    deploy = {s: m.new_bool_var(f"d_{s}") for s in capable}
    m.add(sum(topo.switches[s].deploy_cost * d for s, d in deploy.items()) <= budget).only_enforce_if(
        guards.guard("budget", "network", f"switches made programmable may cost at most {budget}"))
    return deploy


def _job_vars(m: cp_model.CpModel, topo: Topology, job: Job, capable: list[str], per_root: bool) -> _JobVars:
    """One job's root choice (exactly one root whose region fits), aggregator choice and stream
    counts along the tree of each candidate root."""
    fits = [s for s in capable if topo.switches[s].register_slots >= job.region_slots]
    attached: dict[str, int] = {}
    for w in job.workers:
        sw = topo.attachment(w).switch
        attached[sw] = attached.get(sw, 0) + 1
    arcs: dict[tuple[str, int], list[str]] = {}   # (tail, link) -> roots whose tree uses it
    nodes: set[str] = set(attached) | set(fits)
    for r in fits:
        up, _ = topo.upward_tree(attached, r)
        for node, link in up.items():
            arcs.setdefault((node, link), []).append(r)
        nodes |= set(up) | {r}
    jv = _JobVars(job, {r: m.new_bool_var(f"y_{job.id}_{r}") for r in fits},
                  {s: m.new_bool_var(f"a_{job.id}_{s}") for s in sorted(nodes) if s in fits})
    m.add_exactly_one(jv.y.values())
    if per_root:
        _per_root_streams(m, topo, jv, attached, fits)
    else:
        _shared_streams(m, topo, jv, attached, arcs, nodes)
    return jv


def _memory_limits(m: cp_model.CpModel, topo: Topology, capable: list[str], out: list[_JobVars],
                   guards: _Assumptions) -> None:
    """The regions a switch holds fit its register slots (stated only where they could overflow)."""
    for s in capable:
        terms = [(jv.job.region_slots, jv.a[s]) for jv in out if s in jv.a]
        cap = topo.switches[s].register_slots
        if terms and sum(w for w, _ in terms) > cap:
            need = ", ".join(f"job {jv.job.id}: {jv.job.region_slots}" for jv in out if s in jv.a)
            m.add(sum(w * a for w, a in terms) <= cap).only_enforce_if(
                guards.guard("memory", s, f"{cap} register slots; regions of candidate jobs ({need})"))


def _loads(topo: Topology, out: list[_JobVars],
           unit: int) -> tuple[dict[int, cp_model.LinearExpr], dict[int, int]]:
    """Bytes per iteration (in ``unit``s) on each switch-switch link (a linear expression of the
    stream counts) and on each host link (a constant: every worker sends its own stream)."""
    link_load: dict[int, cp_model.LinearExpr] = {}
    per_link: dict[int, list] = {}
    for jv in out:
        for key, g in jv.g.items():
            per_link.setdefault(key[1], []).append((jv.job.bytes_per_iteration // unit, g))
    for link, terms in per_link.items():
        link_load[link] = sum(w * g for w, g in terms)
    host_load: dict[int, int] = {}
    for jv in out:
        for w in jv.job.workers:
            i = topo.attachment(w).link
            host_load[i] = host_load.get(i, 0) + jv.job.bytes_per_iteration // unit
    return link_load, host_load


def _shared_streams(m: cp_model.CpModel, topo: Topology, jv: _JobVars, attached: dict[str, int],
                    arcs: dict[tuple[str, int], list[str]], nodes: set[str]) -> None:
    """Streams per arc shared by all roots: g[e] = f[tail] if e is in the chosen tree, else 0."""
    n = len(jv.job.workers)
    jid = jv.job.id
    for (tail, link) in sorted(arcs):
        jv.g[(tail, link)] = m.new_int_var(0, n, f"g_{jid}_{tail}_{link}")
    incoming: dict[str, list] = {s: [] for s in nodes}
    for (tail, link), g in jv.g.items():
        incoming[topo.links[link].other(tail)].append(g)
    f: dict[str, cp_model.IntVar] = {}
    for s in sorted(nodes):
        jv.inflow[s] = attached.get(s, 0) + sum(incoming[s])
        f[s] = m.new_int_var(0, n, f"f_{jid}_{s}")
        a = jv.a.get(s)
        if a is None:
            m.add(f[s] == jv.inflow[s])
            continue
        m.add(f[s] == 1).only_enforce_if(a)
        m.add(f[s] == jv.inflow[s]).only_enforce_if(~a)
        m.add(jv.inflow[s] >= 1).only_enforce_if(a)  # an aggregator lies on the tree
    size = {r: 0 for r in jv.y}
    for (tail, link), roots in sorted(arcs.items()):
        if len(roots) == 1:
            z = jv.y[roots[0]]
        else:
            z = m.new_bool_var(f"z_{jid}_{tail}_{link}")
            m.add(z == sum(jv.y[r] for r in roots))
        g = jv.g[(tail, link)]
        m.add(g == f[tail]).only_enforce_if(z)
        m.add(g == 0).only_enforce_if(~z)
        m.add(g >= z)  # every arc of the chosen tree lies on some worker's route (tight LP)
        for r in roots:
            size[r] += 1
    jv.tree_streams = m.new_int_var(min(size.values()), max(size.values()), f"streams_{jid}")
    m.add(jv.tree_streams == sum(size[r] * y for r, y in jv.y.items()))
    m.add(sum(jv.g.values()) >= jv.tree_streams)


def _per_root_streams(m: cp_model.CpModel, topo: Topology, jv: _JobVars, attached: dict[str, int],
                      fits: list[str]) -> None:
    """Streams per (root, arc): h[r,u] streams leave u toward r; zero unless r is the root.
    Lower-bounded only (minimisation makes them exact), each within its own tight big-M."""
    jid = jv.job.id
    inflow: dict[str, list] = {}
    sizes = {}
    for r in fits:
        y = jv.y[r]
        up, kids = topo.upward_tree(attached, r)
        below: dict[str, int] = {}
        for node in postorder(kids, r):
            below[node] = attached.get(node, 0) + sum(below[k] for k in kids.get(node, ()))
        h = {u: m.new_int_var(0, below[u], f"h_{jid}_{r}_{u}") for u in up}
        for u in (*up, r):
            into = attached.get(u, 0) * y + sum(h[v] for v in kids.get(u, ()))
            inflow.setdefault(u, []).append(into)
            if u == r:
                continue
            jv.g[(u, up[u], r)] = h[u]
            m.add(h[u] >= y)
            m.add(h[u] <= below[u] * y)
            if u in jv.a:
                m.add(h[u] >= into - below[u] * jv.a[u])
            else:
                m.add(h[u] >= into)
        sizes[r] = len(up)
    for u, terms in inflow.items():
        jv.inflow[u] = sum(terms)
    jv.tree_streams = m.new_int_var(min(sizes.values()), max(sizes.values()), f"streams_{jid}")
    m.add(jv.tree_streams == sum(sizes[r] * y for r, y in jv.y.items()))


def _value(expr, values: dict[int, int]) -> int:
    """Value of a linear expression under a stored assignment (variable index -> value)."""
    if isinstance(expr, int):
        return expr
    coeffs, constant = expr.get_integer_var_value_map()
    return int(constant + sum(c * values[v.Index()] for v, c in coeffs.items()))


def explain(topo: Topology, budget: int | None) -> InfeasiblePlacement:
    """Re-solve with assumption literals and name the constraints in an infeasible core."""
    built = build(topo, budget, diagnose=True, root_cut=False)
    solver = new_solver(30.0, 1)  # cores from assumptions need a single worker
    status = solver.solve(built.model)
    if status == cp_model.INFEASIBLE:
        core = [built.assumptions[i] for i in solver.sufficient_assumptions_for_infeasibility()
                if i in built.assumptions]
        if core:
            return InfeasiblePlacement(core)
    return InfeasiblePlacement([BindingConstraint(
        "tree", "network", "every worker must reach an aggregating root along shortest paths; "
        "no combination of programmable switches allows it")])


def solve(topo: Topology, budget: int | None, *, time_limit: float = 60.0, workers: int = 2) -> Solution:
    """Lexicographic optimisation: bottleneck, then total bytes, then deploy cost and regions."""
    precheck(topo, budget)
    start = time.perf_counter()
    built = build(topo, budget)
    build_s = time.perf_counter() - start
    m = built.model
    jobs = built.jobs
    if not jobs:
        return Solution({}, 0, 0, True, time.perf_counter() - start, [])
    objectives = _objectives(m, topo, built)
    tracked = [v for jv in jobs for v in (*jv.y.values(), *jv.a.values(), *jv.g.values())]
    start_choice = greedy_choice(topo, budget)
    if start_choice is not None:
        _hint_choice(m, jobs, start_choice)
    run = _optimise(m, topo, budget, objectives, tracked, start=start, time_limit=time_limit,
                    workers=workers, has_start=start_choice is not None)
    if run.fell_back:
        return Solution(start_choice, 0, 0, False, time.perf_counter() - start, run.log,
                        run.bound["bottleneck"] * built.unit, None, build_s)
    choice = _read_choice(topo, jobs, run.values)
    b_val = max(max((_value(e, run.values) for e in built.link_load.values()), default=0),
                objectives.host_max)
    t_val = sum(_value(e, run.values) for e in built.link_load.values()) + objectives.host_total
    total_bound = None if run.bound["total"] is None else run.bound["total"] * built.unit
    return Solution(
        choice,
        b_val * built.unit,
        t_val * built.unit,
        run.optimal,
        time.perf_counter() - start,
        run.log,
        run.bound["bottleneck"] * built.unit,
        total_bound,
        build_s,
    )


@dataclass
class _Objectives:
    """The lexicographic objectives, in order, and the constant host-link loads they rest on."""

    phases: list[tuple[str, cp_model.LinearExpr | int]]
    host_max: int      # the busiest host link (a floor for the bottleneck)
    host_total: int    # bytes on all host links (added to the switch-link total)


def _objectives(m: cp_model.CpModel, topo: Topology, built: Model) -> _Objectives:
    """Bottleneck (a variable bounding every link's load), total switch-link bytes (bounded below
    by the tree sizes, which tightens the LP), then deploy cost before the number of regions."""
    jobs = built.jobs
    upper = sum(jv.job.bytes_per_iteration // built.unit * len(jv.job.workers) for jv in jobs)
    host_max = max(built.host_load.values())
    bottleneck = m.new_int_var(host_max, max(upper, host_max), "bottleneck")
    for expr in built.link_load.values():
        m.add(bottleneck >= expr)
    total = sum(built.link_load.values())
    m.add(total >= sum(jv.job.bytes_per_iteration // built.unit * jv.tree_streams for jv in jobs))
    host_total = sum(built.host_load.values())
    n_aggs = sum(a for jv in jobs for a in jv.a.values())
    n_pairs = sum(len(jv.a) for jv in jobs) + 1
    deploy_cost = sum(
        topo.switches[s].deploy_cost * d for s, d in built.deploy.items() if not isinstance(d, int)
    )
    phases = [("bottleneck", bottleneck), ("total", total), ("regions", deploy_cost * n_pairs + n_aggs)]
    return _Objectives(phases, host_max, host_total)


def _hint_choice(m: cp_model.CpModel, jobs: list[_JobVars],
                 choice: dict[int, tuple[str | None, set[str]]]) -> None:
    """Start the search from a known placement (the greedy one)."""
    for jv in jobs:
        root, aggs = choice[jv.job.id]
        for r, y in jv.y.items():
            m.add_hint(y, int(r == root))
        for s_name, a in jv.a.items():
            m.add_hint(a, int(s_name in aggs))


@dataclass
class _PhaseRun:
    """What the phases of ``_optimise`` left: the last solution's values (variable index ->
    value), whether every phase up to it was proven optimal, the per-phase log and the proven
    bounds (scaled units); ``fell_back`` when no phase found a solution and the greedy start stands."""

    values: dict[int, int]
    optimal: bool
    log: list[dict]
    bound: dict[str, int | None]
    fell_back: bool = False


def _optimise(m: cp_model.CpModel, topo: Topology, budget: int | None, objectives: _Objectives,
              tracked: list, *, start: float, time_limit: float, workers: int, has_start: bool) -> _PhaseRun:
    """The shared lexicographic phases (``solver.minimise_in_turn``) with this model's bounds
    (the host links' fixed share added back) and failures: an infeasible first phase is
    explained; when no phase found a solution, the greedy start stands if there is one."""
    phases = minimise_in_turn(m, objectives.phases, tracked, start=start, time_limit=time_limit,
                              workers=workers)
    total = phases.bounds.get("total")
    run = _PhaseRun(phases.values, phases.optimal, phases.log,
                    {"bottleneck": max(objectives.host_max, phases.bounds.get("bottleneck", 0)),
                     "total": None if total is None else total + objectives.host_total})
    if run.values or phases.phase < 0:
        return run
    if phases.status == cp_model.INFEASIBLE and phases.phase == 0:
        raise explain(topo, budget)
    if not has_start:
        raise SolverError(f"no placement found within {time_limit:.1f} s "
                          f"(solver status {phases.log[-1]['status']}); raise --time-limit")
    run.log.append({"phase": "greedy start", "status": "FEASIBLE (solver found none)",
                    "wall_s": 0.0, "value": None})
    run.fell_back = True
    return run


def _read_choice(topo: Topology, jobs: list[_JobVars],
                 values: dict[int, int]) -> dict[int, tuple[str | None, set[str]]]:
    """(root, aggregators) per job from a solution; an unproven solution may hold regions off
    the tree: they carry nothing, so they are dropped."""
    choice = {}
    for jv in jobs:
        root = next(r for r, y in jv.y.items() if values[y.Index()])
        on_tree = {n for w in jv.job.workers for n in topo.path(topo.attachment(w).switch, root)}
        choice[jv.job.id] = (root, {s for s, a in jv.a.items() if values[a.Index()] and s in on_tree})
    return choice

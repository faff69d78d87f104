"""Scalable placement with a proven bound: kept-link relaxation over root classes, then lifting.

With full aggregation (every switch with room aggregates) a job's tree, and so every link load,
is fixed by its root.  Dropping memory, fan-in and the constraints of some links gives a
relaxation, so its optimum is a lower bound on the true bottleneck.  Links kept: the switch
links with an end where hosts attach (in a fat-tree, edge-aggregation links; all links of a
leaf-spine).  On the kept links many roots of one job put identical streams (in a fat-tree,
every core and aggregation switch of one core group), so roots collapse into *classes* and the
relaxed model has a few choices per job instead of one per switch:

1. **relax** (CP-SAT): one class per job; minimise the bottleneck over kept links (host links
   enter as a constant), then, with it fixed, the total where a class costs its smallest tree.
   Its proven optimum / bound is a lower bound on the true bottleneck (and total).
2. **lift** (CP-SAT): with the classes fixed, the kept-link loads are fixed; pick one root per
   job inside its class for the dropped links: minimise their bottleneck (never below step 1's),
   then the total.  Register memory is added lazily for the switches a lifted answer overfills.
3. **refine**: if a dropped link ends up above the relaxed bottleneck, keep it too and repeat —
   the relaxation tightens until lifting meets it or time runs out; the gap is reported either way.

Routes and trees are numba kernels (``routes``); model rows are assembled with numpy.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from math import gcd

import numpy as np
from ortools.sat.python import cp_model

from controller.placement.routes import JobArrays, RouteTable, TreeLinks, job_root_table, tree_links
from controller.placement.search import descend
from controller.placement.solver import Solution, new_solver, proven_bound
from controller.topology import Job, Topology
from dhcwire.p4names import MAX_FAN_IN

#: Share of the remaining time the relaxed bottleneck solve may use (per refinement round).
RELAX_SHARE: float = 0.5
#: Share of the remaining time the local search may use before CP-SAT (when above the bound).
SEARCH_SHARE: float = 0.3


@dataclass
class Classes:
    """Root classes: every (job, root) pair with identical kept-link streams is one class."""

    job: np.ndarray        # class -> job row
    rep: np.ndarray        # class -> representative root (switch index)
    min_size: np.ndarray   # class -> smallest tree (streams on switch links) among its roots
    min_aggs: np.ndarray   # class -> fewest aggregators among its roots with the smallest tree
    pair_class: np.ndarray  # useful pair -> class
    pair_job: np.ndarray
    pair_root: np.ndarray
    pair_size: np.ndarray
    lift_ok: np.ndarray    # useful pair -> fan-in within limit (full aggregation is valid)


@dataclass
class _Rows:
    """Linear rows ``sum coeff * var <= bound`` grouped by link."""

    link: np.ndarray
    var: np.ndarray
    coeff: np.ndarray


@dataclass
class Context:
    topo: Topology
    routes: RouteTable
    ja: JobArrays
    weight: np.ndarray     # job row -> bytes per iteration / unit
    unit: int
    host_max: int          # heaviest host link (scaled)
    host_total: int
    prev: np.ndarray | None = None  # job row -> root of an earlier answer (-1: none)
    mode: str = "hint"              # how ``prev`` is used: "hint", "stay" (fewest moves), "fixed"
    log: list[dict] = field(default_factory=list)


def _previous_of(prev: np.ndarray | None, job: np.ndarray, root: np.ndarray, index: np.ndarray,
                 n_jobs: int) -> np.ndarray:
    """job row -> position (in ``index``) of the pair whose root is the job's previous root, or -1."""
    out = np.full(n_jobs, -1, np.int64)
    if prev is not None:
        hit = root == prev[job]
        out[job[hit]] = index[hit]
    return out


def _stay_rows(m: cp_model.CpModel, xs: list, at: np.ndarray, mode: str) -> tuple | None:
    """Fix the previous choice ("fixed") or return the number of jobs that move ("stay")."""
    kept = at[at >= 0]
    if mode == "fixed":
        for i in kept:
            m.add(xs[int(i)] == 1)
        return None
    if mode == "stay" and len(kept):
        return ("moves", len(kept) - sum(xs[int(i)] for i in kept))
    return None


def kept_links(topo: Topology, routes: RouteTable, extra: set[int] = frozenset()) -> np.ndarray:
    """Switch links with an end where hosts attach, plus ``extra``."""
    with_hosts = np.zeros(len(routes.names), np.bool_)
    for h in topo.hosts:
        with_hosts[routes.index[topo.attachment(h).switch]] = True
    a, b = routes.link_a, routes.link_b
    both = (a >= 0) & (b >= 0)
    kept = both & (with_hosts[np.maximum(a, 0)] | with_hosts[np.maximum(b, 0)])
    for i in extra:
        kept[i] = True
    return kept


def root_classes(ctx: Context, kept: np.ndarray) -> Classes:
    table = job_root_table(ctx.routes, ctx.ja, kept, MAX_FAN_IN)
    pj, pr = np.nonzero(table.useful)
    order = np.lexsort((pr, table.h2[pj, pr], table.h1[pj, pr], pj))
    pj, pr = pj[order], pr[order]
    h1, h2 = table.h1[pj, pr], table.h2[pj, pr]
    new = np.ones(len(pj), np.bool_)
    new[1:] = (pj[1:] != pj[:-1]) | (h1[1:] != h1[:-1]) | (h2[1:] != h2[:-1])
    pair_class = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    size = table.size[pj, pr]
    aggs = table.n_aggs[pj, pr]
    spread = int(aggs.max(initial=0)) + 1
    best = np.minimum.reduceat(size * spread + aggs, starts) if len(starts) else np.zeros(0, np.int64)
    return Classes(pj[starts], pr[starts], best // spread, best % spread, pair_class, pj, pr, size,
                   table.fanin_ok[pj, pr])


def _rows(ctx: Context, tl: TreeLinks, pairs: np.ndarray, var_of_pair: np.ndarray, keep: np.ndarray) -> _Rows:
    """Rows of the loads that ``pairs`` (trees ``tl``) put on the links selected by ``keep``."""
    owner = np.repeat(np.arange(len(pairs)), np.diff(tl.ptr))
    sel = keep[tl.link]
    coeff = ctx.weight[pairs[owner[sel], 0]] * tl.streams[sel]
    return _Rows(tl.link[sel], var_of_pair[owner[sel]], coeff)


def _add_rows(m: cp_model.CpModel, rows: _Rows, xs: list, bound: cp_model.IntVar) -> None:
    order = np.argsort(rows.link, kind="stable")
    link, var, coeff = rows.link[order], rows.var[order], rows.coeff[order]
    cuts = np.flatnonzero(np.diff(link)) + 1
    for v, c in zip(np.split(var, cuts), np.split(coeff, cuts), strict=True):
        if len(v):
            m.add(cp_model.LinearExpr.weighted_sum([xs[i] for i in v], c.tolist()) <= bound)


def _greedy(n_jobs: int, owner: np.ndarray, rows: _Rows, cost: np.ndarray, weight: np.ndarray,
            n_links: int, allowed: np.ndarray) -> np.ndarray:
    """One option per job: jobs heaviest first, each the option giving the lowest resulting
    bottleneck, then the smallest cost.  Returns the chosen option per job row."""
    order = np.argsort(rows.var, kind="stable")
    var, link, coeff = rows.var[order], rows.link[order], rows.coeff[order]
    bounds = np.searchsorted(var, np.arange(len(owner) + 1))
    by_job = [np.flatnonzero((owner == j) & allowed) for j in range(n_jobs)]
    load = np.zeros(n_links, np.int64)
    pick = np.full(n_jobs, -1, np.int64)
    for j in sorted(range(n_jobs), key=lambda j: -weight[j] * max((cost[o] for o in by_job[j]), default=0)):
        best = None
        for o in by_job[j]:
            seg = slice(bounds[o], bounds[o + 1])
            peak = int((load[link[seg]] + coeff[seg]).max(initial=0))
            key = (peak, int(cost[o]), int(o))
            if best is None or key < best:
                best = key
        if best is None:
            continue
        o = best[2]
        pick[j] = o
        seg = slice(bounds[o], bounds[o + 1])
        np.add.at(load, link[seg], coeff[seg])
    return pick


def _lexi(m: cp_model.CpModel, xs: list, phases: list, hint: np.ndarray, deadline: float,
          shares: list[float], workers: int, ctx: Context, tag: str) -> tuple[np.ndarray | None, list]:
    """Minimise the phases in order, fixing each optimum (or best value found) before the next.
    Returns the last assignment and per phase (status, value, proven bound).  The first phase's
    objective is a variable whose upper bound is the hint's value, so the hint is complete."""
    for x, v in zip(xs, hint, strict=True):
        m.add_hint(x, int(v))
    first = phases[0][1]
    m.add_hint(first, first.proto.domain[-1])
    values, out = None, []
    for (name, objective), share in zip(phases, shares, strict=True):
        left = deadline - time.perf_counter()
        if left <= 0.05:
            break
        solver = new_solver(left * share, workers)
        # presolve's symmetry breaking can cut off the hint (the group symmetry of a fat-tree), and
        # then a large model may end without any solution; bounds come from certificates instead
        solver.parameters.symmetry_level = 0
        m.minimize(objective)
        status = solver.solve(m)
        ctx.log.append({"phase": f"{tag} {name}", "status": solver.status_name(status),
                        "wall_s": round(solver.wall_time, 4), "value": solver.objective_value})
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            out.append((status, None, proven_bound(solver, status)))
            break
        values = np.array([solver.value(x) for x in xs], np.int64)
        out.append((status, round(solver.objective_value), proven_bound(solver, status)))
        m.clear_hints()
        for x, v in zip(xs, values, strict=True):
            m.add_hint(x, int(v))
        m.add(objective <= round(solver.objective_value))  # unproven: later phases still improve
    return values, out


class CliqueBound:
    """Pigeonhole certificates for the relaxed model: a set S of jobs and a colouring of every
    class of every job in S with m colours such that two classes of one colour (of different
    jobs) overload a shared kept link (their two loads alone exceed B).  If |S| > m, two jobs of S
    share a colour whatever they choose, so no answer has bottleneck <= B.  (In a fat-tree the
    colours are the core groups and S is a set of heavy jobs that pairwise share edge switches;
    CP-SAT alone cannot refute such pigeonhole instances in reasonable time.)"""

    def __init__(self, cls: Classes, rows: _Rows) -> None:
        order = np.argsort(rows.var, kind="stable")
        var, link, coeff = rows.var[order], rows.link[order], rows.coeff[order]
        cuts = np.searchsorted(var, np.arange(len(cls.job) + 1))
        self.load = [
            dict(
                zip(link[cuts[c] : cuts[c + 1]].tolist(), coeff[cuts[c] : cuts[c + 1]].tolist(), strict=True)
            )
            for c in range(len(cls.job))
        ]
        self.links = [frozenset(d) for d in self.load]
        starts = np.searchsorted(cls.job, np.arange(int(cls.job.max(initial=-1)) + 2))
        self.by_job = [list(range(starts[j], starts[j + 1])) for j in range(len(starts) - 1)]
        self.heavy = [max((max(d.values(), default=0) for d in (self.load[c] for c in cs)), default=0)
                      for cs in self.by_job]

    def _clash(self, a: int, b: int, limit: int) -> bool:
        la = self.load[a]
        lb = self.load[b]
        return any(la[k] + lb[k] > limit for k in self.links[a] & self.links[b])

    def refutes(self, limit: int) -> bool:
        """Is there a certificate that no answer keeps every kept link <= ``limit``?"""
        order = sorted(range(len(self.by_job)), key=lambda j: (-self.heavy[j], j))
        for first in order[:3]:
            colours = self.by_job[first]
            members: list[dict[int, list[int]]] = [{k: [c] for k, c in enumerate(colours)}]
            for j in order:
                if j == first:
                    continue
                col: dict[int, list[int]] = {}
                for c in self.by_job[j]:
                    k = next((k for k in range(len(colours))
                              if all(self._clash(c, o, limit) for s in members for o in s.get(k, ()))), None)
                    if k is None:
                        break
                    col.setdefault(k, []).append(c)
                else:
                    members.append(col)
                    if len(members) > len(colours):
                        return True
        return False

    def bound(self, low: int, high: int) -> int:
        """Largest B in [low, high] not refuted (bisection: refutable limits form a prefix)."""
        if low >= high or not self.refutes(low):
            return low
        lo, hi = low, high  # refutes(lo) holds; answer in (lo, hi]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.refutes(mid):
                lo = mid
            else:
                hi = mid
        return hi


@dataclass
class Relaxed:
    pick: np.ndarray        # job row -> class
    value: int              # relaxed bottleneck found (scaled, host links included)
    bound: int              # proven lower bound on the true bottleneck (scaled)
    optimal: bool
    total_bound: int | None  # proven lower bound on the switch-link total (scaled), if optimal


def relax(ctx: Context, cls: Classes, kept: np.ndarray, deadline: float, workers: int,
          hint_roots: np.ndarray | None) -> Relaxed:
    """Step 1: one class per job, kept links only; its optimum bounds the true one from below."""
    n_jobs, n_cls = len(ctx.ja.jobs), len(cls.job)
    pairs = np.stack([cls.job, cls.rep], axis=1)
    rows = _rows(ctx, tree_links(ctx.routes, ctx.ja, pairs), pairs, np.arange(n_cls), kept)
    cost = ctx.weight[cls.job] * cls.min_size
    pick = _greedy(n_jobs, cls.job, rows, cls.min_size, ctx.weight, len(kept), np.ones(n_cls, np.bool_))
    at = _previous_of(hint_roots, cls.pair_job, cls.pair_root, cls.pair_class, n_jobs)
    pick = np.where(at >= 0, at, pick)  # a previous answer: its roots' classes under today's kept links
    prev_at = _previous_of(ctx.prev, cls.pair_job, cls.pair_root, cls.pair_class, n_jobs)
    if ctx.mode != "hint":
        pick = np.where(prev_at >= 0, prev_at, pick)
    load = np.zeros(len(kept), np.int64)
    chosen = np.isin(rows.var, pick)
    np.add.at(load, rows.link[chosen], rows.coeff[chosen])
    upper = max(ctx.host_max, int(load.max(initial=0)))
    t = time.perf_counter()
    floor = CliqueBound(cls, rows).bound(ctx.host_max, upper)
    ctx.log.append({"phase": "relax pigeonhole bound", "status": f"bottleneck >= {floor * ctx.unit}",
                    "wall_s": round(time.perf_counter() - t, 4), "value": floor})
    if upper > floor:
        t = time.perf_counter()
        frozen = (prev_at >= 0) if ctx.mode == "fixed" else np.zeros(n_jobs, np.bool_)
        pick, peak = descend(cls.job, np.searchsorted(cls.job, np.arange(n_jobs + 1)), rows.var, rows.link,
                             rows.coeff, len(kept), pick, floor, t + SEARCH_SHARE * (deadline - t), frozen)
        upper = max(ctx.host_max, peak)
        ctx.log.append({"phase": "relax local search", "status": f"bottleneck <= {upper * ctx.unit}",
                        "wall_s": round(time.perf_counter() - t, 4), "value": upper})
    m = cp_model.CpModel()
    xs = [m.new_bool_var(f"x{c}") for c in range(n_cls)]
    starts = np.searchsorted(cls.job, np.arange(n_jobs + 1))
    for j in range(n_jobs):
        m.add_exactly_one(xs[starts[j]:starts[j + 1]])
    bottleneck = m.new_int_var(floor, upper, "bottleneck")
    _add_rows(m, rows, xs, bottleneck)
    total = cp_model.LinearExpr.weighted_sum(xs, cost.tolist())
    regions = cp_model.LinearExpr.weighted_sum(xs, cls.min_aggs.tolist())
    hint = np.zeros(n_cls, np.int64)
    hint[pick] = 1
    stay = _stay_rows(m, xs, prev_at, ctx.mode)
    phases = [("bottleneck", bottleneck), *([stay] if stay else []), ("total", total), ("regions", regions)]
    shares = [RELAX_SHARE, *([0.3] if stay else []), 0.5, 0.2]
    values, out = _lexi(m, xs, phases, hint, deadline, shares, workers, ctx, "relax")
    if values is not None:
        pick = np.array([starts[j] + int(np.argmax(values[starts[j]:starts[j + 1]])) for j in range(n_jobs)])
    b_status, b_value, b_bound = out[0] if out else (cp_model.UNKNOWN, None, 0)
    optimal = b_status == cp_model.OPTIMAL
    at_total = 2 if stay else 1
    total_bound = out[at_total][2] if optimal and len(out) > at_total and ctx.mode != "fixed" else None
    return Relaxed(pick, upper if b_value is None else b_value, max(floor, b_bound), optimal, total_bound)


@dataclass
class Lifted:
    pairs: np.ndarray        # job row -> (job row, root)
    aggs: list[np.ndarray]   # job row -> aggregating switches
    bottleneck: int          # dropped-link bottleneck, at least the relaxed one (scaled)
    total: int               # switch-link total (scaled)
    dropped_over: set[int]   # dropped links loaded above the relaxed bottleneck
    statuses: list
    repaired: bool = False   # memory forced partial aggregation: loads only known by evaluation


def lift(ctx: Context, cls: Classes, kept: np.ndarray, rel: Relaxed, deadline: float, workers: int,
         hint_roots: np.ndarray | None) -> Lifted | None:
    """Step 2: a root per job inside its class, for the dropped links and register memory."""
    n_jobs = len(ctx.ja.jobs)
    sel = np.flatnonzero(cls.lift_ok & (cls.pair_class == rel.pick[cls.pair_job]))
    owner = cls.pair_job[sel]
    if len(np.unique(owner)) < n_jobs:
        return None  # some class has no root whose full aggregation respects the fan-in limit
    pairs = np.stack([owner, cls.pair_root[sel]], axis=1)
    size = cls.pair_size[sel]
    tl = tree_links(ctx.routes, ctx.ja, pairs)
    dropped = ~kept & (ctx.routes.link_a >= 0) & (ctx.routes.link_b >= 0)
    rows = _rows(ctx, tl, pairs, np.arange(len(sel)), dropped)
    n_aggs = np.diff(tl.agg_ptr)
    memory: set[int] = set()
    statuses: list = []
    for _ in range(4):  # lazily added register-memory rows
        pick = _greedy(n_jobs, owner, rows, size, ctx.weight, len(kept), np.ones(len(sel), np.bool_))
        at = _previous_of(hint_roots, owner, pairs[:, 1], np.arange(len(sel)), n_jobs)
        pick = np.where(at >= 0, at, pick)
        prev_at = _previous_of(ctx.prev, owner, pairs[:, 1], np.arange(len(sel)), n_jobs)
        load = np.zeros(len(kept), np.int64)
        chosen = np.isin(rows.var, pick)
        np.add.at(load, rows.link[chosen], rows.coeff[chosen])
        m = cp_model.CpModel()
        xs = [m.new_bool_var(f"z{i}") for i in range(len(sel))]
        starts = np.searchsorted(owner, np.arange(n_jobs + 1))
        for j in range(n_jobs):
            m.add_exactly_one(xs[starts[j]:starts[j + 1]])
        floor = rel.value
        bottleneck = m.new_int_var(floor, max(floor, int(load.max(initial=0))), "dropped")
        _add_rows(m, rows, xs, bottleneck)
        _memory_rows(ctx, m, xs, tl, owner, memory)
        total = cp_model.LinearExpr.weighted_sum(xs, (ctx.weight[owner] * size).tolist())
        regions = cp_model.LinearExpr.weighted_sum(xs, n_aggs.tolist())
        hint = np.zeros(len(sel), np.int64)
        hint[pick] = 1
        stay = _stay_rows(m, xs, prev_at, ctx.mode)
        phases = [
            ("bottleneck", bottleneck),
            *([stay] if stay else []),
            ("total", total),
            ("regions", regions),
        ]
        shares = [0.5, *([0.5] if stay else []), 0.6, 0.5]
        values, out = _lexi(m, xs, phases, hint, deadline, shares, workers, ctx, "lift")
        statuses = out
        if values is None:  # memory rows made it infeasible (or no time): repair the last answer
            if not memory:
                return None
            break
        pick = np.array([starts[j] + int(np.argmax(values[starts[j]:starts[j + 1]])) for j in range(n_jobs)])
        over = _overfull(ctx, tl, owner, pick)
        if not over:
            break
        memory |= over
    return _lifted(ctx, rel, rows, tl, pairs, owner, size, pick, len(kept), statuses)


def _lifted(ctx: Context, rel: Relaxed, rows: _Rows, tl: TreeLinks, pairs: np.ndarray, owner: np.ndarray,
            size: np.ndarray, pick: np.ndarray, n_links: int, statuses: list) -> Lifted | None:
    """The picked pairs as a Lifted answer with their dropped-link loads; where register memory
    still overflows, a repaired answer with partial aggregation (None if even that fails)."""
    if _overfull(ctx, tl, owner, pick):
        fixed = _repair(ctx, pairs, owner, size, pick, tl)
        if fixed is None:
            return None
        pick, aggs = fixed
        return Lifted(pairs[pick], [np.array(a, np.int64) for a in aggs], np.iinfo(np.int64).max, 0, set(),
                      statuses, repaired=True)
    chosen = np.isin(rows.var, pick)
    load = np.zeros(n_links, np.int64)
    np.add.at(load, rows.link[chosen], rows.coeff[chosen])
    peak = max(rel.value, int(load.max(initial=0)))
    return Lifted(
        pairs[pick],
        [tl.aggs[tl.agg_ptr[i] : tl.agg_ptr[i + 1]] for i in pick],
        peak,
        int((ctx.weight[owner[pick]] * size[pick]).sum()),
        set(np.flatnonzero(load > rel.value).tolist()),
        statuses,
    )


def _repair(ctx: Context, pairs: np.ndarray, owner: np.ndarray, size: np.ndarray, pick: np.ndarray,
            tl: TreeLinks) -> tuple[np.ndarray, list[list[int]]] | None:
    """Partial aggregation where register memory is short.  On each overfull switch the lightest
    jobs it aggregates (not as their root) stop aggregating there — their streams pass through to
    the next aggregator — and, if roots alone overfill it, the lightest rooted jobs move to the
    smallest other root of theirs with room.  Returns (pick, aggregators per job) or None."""
    slots = np.array([j.region_slots for j in ctx.ja.jobs], np.int64)
    cap = np.array([ctx.topo.switches[n].register_slots for n in ctx.routes.names], np.int64)
    pick = pick.copy()
    aggs = [tl.aggs[tl.agg_ptr[i]:tl.agg_ptr[i + 1]].tolist() for i in pick]
    used = np.zeros(len(cap), np.int64)
    for j, a in enumerate(aggs):
        used[a] += slots[j]
    for _ in range(len(cap)):
        over = np.flatnonzero(used > cap)
        if not len(over):
            return pick, aggs
        s = int(over[0])
        rooted = [j for j, a in enumerate(aggs) if s in a and pairs[pick[j], 1] == s]
        for j in sorted(
            (j for j, a in enumerate(aggs) if s in a and j not in rooted), key=lambda j: ctx.weight[j]
        ):
            if used[s] <= cap[s]:
                break
            aggs[j].remove(s)
            used[s] -= slots[j]
        for j in sorted(rooted, key=lambda j: ctx.weight[j]):
            if used[s] <= cap[s]:
                break
            options = [i for i in np.flatnonzero(owner == j)[np.argsort(size[owner == j], kind="stable")]
                       if used[pairs[i, 1]] + slots[j] <= cap[pairs[i, 1]]]
            if not options:
                return None
            used[aggs[j]] -= slots[j]
            pick[j] = options[0]
            aggs[j] = [pairs[options[0], 1]]  # the new root alone; others join if they have room
            for a in tl.aggs[tl.agg_ptr[options[0]]:tl.agg_ptr[options[0] + 1]].tolist():
                if a != aggs[j][0] and used[a] + slots[j] <= cap[a]:
                    aggs[j].append(a)
            used[aggs[j]] += slots[j]
        if used[s] > cap[s]:
            return None
    return None


def _agg_usage(
    ctx: Context, tl: TreeLinks, owner: np.ndarray, idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(pair index, switch) for every aggregator of the pairs ``idx``."""
    counts = tl.agg_ptr[idx + 1] - tl.agg_ptr[idx]
    pos = (
        np.concatenate([np.arange(tl.agg_ptr[i], tl.agg_ptr[i + 1]) for i in idx])
        if len(idx)
        else np.zeros(0, int)
    )
    return np.repeat(idx, counts), tl.aggs[pos]


def _overfull(ctx: Context, tl: TreeLinks, owner: np.ndarray, pick: np.ndarray) -> set[int]:
    pair, sw = _agg_usage(ctx, tl, owner, pick)
    slots = np.array([j.region_slots for j in ctx.ja.jobs], np.int64)
    used = np.zeros(len(ctx.routes.names), np.int64)
    np.add.at(used, sw, slots[owner[pair]])
    cap = np.array([ctx.topo.switches[n].register_slots for n in ctx.routes.names], np.int64)
    return set(np.flatnonzero(used > cap).tolist())


def _memory_rows(ctx: Context, m: cp_model.CpModel, xs: list, tl: TreeLinks, owner: np.ndarray,
                 switches: set[int]) -> None:
    if not switches:
        return
    pair, sw = _agg_usage(ctx, tl, owner, np.arange(len(owner)))
    slots = np.array([j.region_slots for j in ctx.ja.jobs], np.int64)
    for s in sorted(switches):
        at = pair[sw == s]
        cap = ctx.topo.switches[ctx.routes.names[s]].register_slots
        m.add(cp_model.LinearExpr.weighted_sum([xs[i] for i in at], slots[owner[at]].tolist()) <= cap)


def solve(topo: Topology, *, time_limit: float = 60.0, workers: int = 2,
          previous: dict[int, str] | None = None, mode: str = "hint") -> Solution | None:
    """Relax, lift, refine until proven or out of time.  ``previous``: job id -> root of an
    earlier answer; ``mode``: "hint" (a start), "stay" (after the bottleneck, move as few of those
    jobs as possible), "fixed" (they keep their roots; no bound is claimed then).  None if the
    decomposition does not apply (a job without a useful root, or one whose fan-in forbids full
    aggregation everywhere).  If no answer could be lifted, the Solution has no choice, only the
    relaxation's bound, and ``extra["unlifted"]``."""
    start = time.perf_counter()
    deadline = start + time_limit
    jobs = [j for j in topo.jobs if j.needs_aggregation]
    if not jobs:
        return Solution({}, 0, 0, True, 0.0, [])
    ctx = _context(topo, jobs)
    routes, unit = ctx.routes, ctx.unit
    hint = None if previous is None else np.array(
        [routes.index.get(previous.get(j.id) or "", -1) for j in jobs], np.int64)
    if mode != "hint":
        ctx.prev, ctx.mode = hint, mode
    kept = kept_links(topo, routes)
    cls = root_classes(ctx, kept)
    build_s = time.perf_counter() - start
    if len(np.unique(cls.job)) < len(jobs):
        return None
    best: tuple[Lifted, Relaxed] | None = None
    lower = ctx.host_max
    while True:
        rel = relax(ctx, cls, kept, deadline, workers, hint)
        if ctx.mode != "fixed":  # a restricted model bounds nothing
            lower = max(lower, rel.bound)
        lifted = lift(ctx, cls, kept, rel, deadline, workers, hint)
        if lifted is None:
            break
        if best is None or (lifted.bottleneck, lifted.total) < (best[0].bottleneck, best[0].total):
            best = (lifted, rel)
        if (
            lifted.repaired
            or not (rel.optimal and lifted.dropped_over)
            or time.perf_counter() > deadline - 0.1
        ):
            break
        kept = kept.copy()  # refine: the dropped links that decided the bottleneck are kept now
        kept[list(lifted.dropped_over)] = True
        hint = lifted.pairs[:, 1]
        t = time.perf_counter()
        cls = root_classes(ctx, kept)
        build_s += time.perf_counter() - t
        ctx.log.append({"phase": f"refine: {len(lifted.dropped_over)} more kept links", "status": "",
                        "wall_s": round(time.perf_counter() - t, 4), "value": None})
    if best is None:  # no lifted answer (register memory or fan-in): the relaxation's bound stays
        return Solution({}, 0, 0, False, time.perf_counter() - start, ctx.log, lower * unit, None, build_s,
                        extra={"unlifted": True})
    return _solution(ctx, jobs, *best, lower, start, build_s)


def _context(topo: Topology, jobs: list[Job]) -> Context:
    """Routes, job arrays, the byte unit (gcd of the jobs' bytes per iteration) and the constant
    host-link loads (every worker sends its own stream), in scaled units."""
    routes = RouteTable.build(topo)
    ja = JobArrays.build(topo, routes, jobs)
    unit = gcd(*(j.bytes_per_iteration for j in jobs))
    host: dict[int, int] = {}
    for j in jobs:
        for w in j.workers:
            i = topo.attachment(w).link
            host[i] = host.get(i, 0) + j.bytes_per_iteration // unit
    return Context(topo, routes, ja, np.array([j.bytes_per_iteration // unit for j in jobs], np.int64), unit,
                   max(host.values()), sum(host.values()))


def _solution(ctx: Context, jobs: list[Job], lifted: Lifted, rel: Relaxed, lower: int, start: float,
              build_s: float) -> Solution:
    """The best lifted answer as a Solution: optimal only if the bottleneck meets a proven
    relaxation bound and the total phase was proven on top of it."""
    unit = ctx.unit
    names = ctx.routes.names
    choice = {j.id: (names[int(lifted.pairs[i, 1])], {names[int(s)] for s in lifted.aggs[i]})
              for i, j in enumerate(jobs)}
    b_proven = not lifted.repaired and rel.optimal and lifted.bottleneck == rel.value and lower == rel.value
    at_total = 2 if ctx.mode == "stay" and ctx.prev is not None and (ctx.prev >= 0).any() else 1
    t_done = len(lifted.statuses) > at_total and lifted.statuses[at_total][0] == cp_model.OPTIMAL
    total_bound = (
        (rel.total_bound + ctx.host_total) * unit if b_proven and rel.total_bound is not None else None
    )
    optimal = b_proven and t_done and total_bound == (lifted.total + ctx.host_total) * unit
    b_model = 0 if lifted.repaired else lifted.bottleneck * unit  # repaired: only evaluation knows
    return Solution(choice, b_model, (lifted.total + ctx.host_total) * unit, optimal,
                    time.perf_counter() - start, ctx.log, lower * unit, total_bound, build_s,
                    extra={"routes": ctx.routes})

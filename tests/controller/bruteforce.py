"""Exhaustive placement search: the test oracle the solvers are checked against on small instances.

It shares nothing with the solver models except the topology's routes and ``build_tree``: it
enumerates every root and every subset of capable switches on that root's tree for each job,
every combination across jobs, and keeps the lexicographically smallest objective.  No
dominance argument, no root restriction: exponential, for tests only.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from controller.placement.tree import Placement, build_tree, evaluate
from controller.topology import Job, Topology


@dataclass(frozen=True)
class _Option:
    root: str | None
    aggregators: frozenset[str]
    link_bytes: tuple[tuple[int, int], ...]


def job_options(topo: Topology, job: Job) -> list[_Option]:
    """Every valid tree of ``job`` (any root, any aggregator subset on that root's tree)."""
    if not job.needs_aggregation:
        return [_Option(None, frozenset(), ())]
    capable = [
        s for s, sw in topo.switches.items() if sw.programmable and sw.register_slots >= job.region_slots
    ]
    out = []
    for root in capable:
        on_tree = {root}
        for w in job.workers:
            on_tree |= {n for n in topo.path(topo.attachment(w).switch, root)}
        others = sorted(s for s in on_tree if s in capable and s != root)
        for k in range(len(others) + 1):
            for subset in itertools.combinations(others, k):
                aggs = frozenset((root, *subset))
                try:
                    tree = build_tree(topo, job, root, aggs)
                except ValueError:
                    continue
                out.append(_Option(root, aggs, tuple((link, n * job.bytes_per_iteration)
                                                     for link, n in tree.link_streams.items())))
    return out


def brute_force(topo: Topology, budget: int | None = None, limit: int = 2_000_000) -> Placement | None:
    """The optimal placement by enumeration, or None if no placement is feasible."""
    per_job = [job_options(topo, job) for job in topo.jobs]
    combos = 1
    for opts in per_job:
        combos *= len(opts)
    if combos > limit:
        raise ValueError(f"{combos} combinations exceed the brute-force limit {limit}")
    all_programmable_cost = sum(s.deploy_cost for s in topo.switches.values() if s.programmable)
    best_key, best_choice = None, None
    for combo in itertools.product(*per_job):
        used: dict[str, int] = {}
        for job, opt in zip(topo.jobs, combo, strict=True):
            for s in opt.aggregators:
                used[s] = used.get(s, 0) + job.region_slots
        if any(n > topo.switches[s].register_slots for s, n in used.items()):
            continue
        if budget is None:
            cost = all_programmable_cost
        else:
            cost = sum(topo.switches[s].deploy_cost for s in used)
            if cost > budget:
                continue
        loads: dict[int, int] = {}
        for opt in combo:
            for link, b in opt.link_bytes:
                loads[link] = loads.get(link, 0) + b
        key = (max(loads.values(), default=0), sum(loads.values()), cost,
               sum(len(o.aggregators) for o in combo))
        if best_key is None or key < best_key:
            best_key, best_choice = key, combo
    if best_choice is None:
        return None
    choice = {
        job.id: (opt.root, set(opt.aggregators)) for job, opt in zip(topo.jobs, best_choice, strict=True)
    }
    return evaluate(topo, choice, budget, optimal=True, solver="brute-force")

"""A quick feasible placement used as the solver's starting hint (never reported as optimal;
fourth link of the placement chain).

Jobs, largest first, take the root with the smallest full-aggregation tree that still fits the
remaining register memory and deployment budget, then as many of that tree's aggregators as
fit.  Without a start, CP-SAT can spend its whole time limit looking for a first solution of a
large budgeted instance; with it, it only has to improve one.
"""

from __future__ import annotations

from controller.placement.roots import root_options
from controller.placement.tree import build_tree
from controller.topology import Topology


def greedy_choice(topo: Topology, budget: int | None) -> dict[int, tuple[str | None, set[str]]] | None:
    """(root, aggregators) per job, or None if the greedy pass finds no feasible placement."""
    free = {s: sw.register_slots for s, sw in topo.switches.items()}
    deployed: set[str] = set()
    spent = 0
    choice: dict[int, tuple[str | None, set[str]]] = {}

    def can_use(s: str, slots: int) -> bool:
        if free[s] < slots:
            return False
        return budget is None or s in deployed or spent + topo.switches[s].deploy_cost <= budget

    for job in sorted(topo.jobs, key=lambda j: (-j.bytes_per_iteration * len(j.workers), j.id)):
        if not job.needs_aggregation:
            choice[job.id] = (None, set())
            continue
        options, _ = root_options(topo, job)
        options.sort(key=lambda o: (sum(o.link_streams.values()), o.root))
        placed = False
        for opt in options:
            if not can_use(opt.root, job.region_slots):
                continue
            aggs = {opt.root}
            cost = 0 if budget is None or opt.root in deployed else topo.switches[opt.root].deploy_cost
            for s in sorted(opt.aggregators - {opt.root}):
                extra = 0 if budget is None or s in deployed or s in aggs else topo.switches[s].deploy_cost
                if free[s] >= job.region_slots and (budget is None or spent + cost + extra <= budget):
                    aggs.add(s)
                    cost += extra
            try:
                build_tree(topo, job, opt.root, aggs)
            except ValueError:
                continue
            for s in aggs:
                free[s] -= job.region_slots
            if budget is not None:
                spent += sum(topo.switches[s].deploy_cost for s in aggs - deployed)
                deployed |= aggs
            choice[job.id] = (opt.root, aggs)
            placed = True
            break
        if not placed:
            return None
    return choice

"""Placement results and their exact evaluation (the bottom of the placement chain).

A job's aggregation tree is fully determined by its root and its set of aggregating switches:
routes are unique shortest paths (``controller.topology``), so every worker's contribution
travels the route toward the root and stops at the first aggregator on it, and each aggregator's
partial stops at the next aggregator on its own route toward the root.  ``build_tree`` derives
that tree; ``evaluate`` derives loads, register regions and the objective from the trees alone.
Every solver (``model``, ``assign``, ``scale``) and the brute-force
test oracle hand their choice of (root, aggregators) per job to ``evaluate``, so the numbers users
see never come from a model's own bookkeeping.  Routes come from ``topo`` or from any object with
the same ``next_hop_link`` (``routes.RouteTable``, array-backed, for large networks).

Objective, compared lexicographically (smaller is better):
1. bottleneck: the largest per-direction link load, in bytes per iteration;
2. total: the sum of per-direction link loads over all links;
3. deployment cost of the switches made programmable (budget mode only; otherwise constant);
4. number of (job, aggregating switch) pairs (fewer register regions for the same traffic).
A link carries, in each direction, one stream of ``bytes_per_iteration`` per child whose route to
its parent crosses it (contribution up, result down along the same route reversed).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Protocol

from controller.topology import Job, Topology
from dhcwire.p4names import MAX_FAN_IN


@dataclass(frozen=True)
class Child:
    """A child of an aggregator and the bit (``index`` 0..31) it owns in the worker bitmap."""

    name: str
    kind: str  # "host" | "switch"
    index: int


@dataclass(frozen=True)
class Aggregator:
    """One switch aggregating one job: where its partial goes and which register entries it uses
    (``region_base`` .. ``region_base + region_slots - 1``, disjoint from its other jobs')."""

    switch: str
    parent: str | None  # None at the root
    children: tuple[Child, ...]
    region_base: int
    region_slots: int


@dataclass(frozen=True)
class JobPlacement:
    job_id: int
    root: str | None  # None: a single-worker job, nothing to aggregate
    aggregators: tuple[Aggregator, ...]
    first_aggregator: dict[str, str]  # worker -> the switch that receives its contribution
    bytes_per_iteration: int
    window: int

    def aggregator(self, switch: str) -> Aggregator:
        for agg in self.aggregators:
            if agg.switch == switch:
                return agg
        raise KeyError(f"{switch} does not aggregate job {self.job_id}")


@dataclass(frozen=True)
class LinkLoad:
    """Load of one link, the same in each direction (streams of all jobs, and their bytes)."""

    a: str
    a_port: int
    b: str
    b_port: int
    streams: int
    bytes: int


@dataclass(frozen=True)
class Objective:
    bottleneck_bytes: int
    total_bytes: int
    deploy_cost: int
    aggregator_count: int

    def key(self) -> tuple[int, int, int, int]:
        return (self.bottleneck_bytes, self.total_bytes, self.deploy_cost, self.aggregator_count)


@dataclass(frozen=True)
class Bound:
    """Proven lower bounds (bytes per iteration).  ``total_bytes`` is a bound on the total among
    placements whose bottleneck equals the best found; it is only given when that bottleneck is
    proven optimal (the total is minimised second)."""

    bottleneck_bytes: int = 0
    total_bytes: int | None = None


def relative_gap(value: int, bound: int | None) -> float | None:
    """(value - bound) / value, 0.0 when both are 0; None without a bound."""
    if bound is None:
        return None
    return 0.0 if value <= 0 else max(value - bound, 0) / value


@dataclass(frozen=True)
class Placement:
    """Everything the deployment needs, JSON round-trippable."""

    topology: str
    budget: int | None
    jobs: tuple[JobPlacement, ...]
    deployed: tuple[str, ...]  # switches running the DHC program
    link_loads: tuple[LinkLoad, ...]
    objective: Objective
    solve_time_s: float = 0.0
    optimal: bool = False
    solver: str = ""
    notes: tuple[str, ...] = field(default=())
    bound: Bound = field(default_factory=Bound)
    build_time_s: float = 0.0  # model building (routes, options, CP-SAT model), inside solve_time_s

    def gaps(self) -> dict[str, float | None]:
        """Relative distance of the bottleneck and the total to their proven lower bounds."""
        return {"bottleneck": relative_gap(self.objective.bottleneck_bytes, self.bound.bottleneck_bytes),
                "total": relative_gap(self.objective.total_bytes, self.bound.total_bytes)}

    def job(self, job_id: int) -> JobPlacement:
        for jp in self.jobs:
            if jp.job_id == job_id:
                return jp
        raise KeyError(f"no job {job_id} in placement")

    def regions(self) -> dict[tuple[str, int], tuple[int, int]]:
        """(switch, job id) -> (base, size) of the job's register region on that switch."""
        return {
            (a.switch, jp.job_id): (a.region_base, a.region_slots) for jp in self.jobs for a in jp.aggregators
        }

    def to_dict(self) -> dict:
        return {**asdict(self), "gap": self.gaps()}

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, d: dict) -> Placement:
        jobs = tuple(
            JobPlacement(
                job_id=j["job_id"], root=j["root"],
                aggregators=tuple(
                    Aggregator(a["switch"], a["parent"], tuple(Child(**c) for c in a["children"]),
                               a["region_base"], a["region_slots"]) for a in j["aggregators"]),
                first_aggregator=dict(j["first_aggregator"]),
                bytes_per_iteration=j["bytes_per_iteration"], window=j["window"])
            for j in d["jobs"])
        return cls(topology=d["topology"], budget=d["budget"], jobs=jobs, deployed=tuple(d["deployed"]),
                   link_loads=tuple(LinkLoad(**ll) for ll in d["link_loads"]),
                   objective=Objective(**d["objective"]), solve_time_s=d["solve_time_s"],
                   optimal=d["optimal"], solver=d["solver"], notes=tuple(d.get("notes", ())),
                   bound=Bound(**d.get("bound", {})), build_time_s=d.get("build_time_s", 0.0))

    @classmethod
    def from_json(cls, text: str) -> Placement:
        return cls.from_dict(json.loads(text))


class Routes(Protocol):
    """What tree building needs from routing: the link a node uses toward a destination."""

    def next_hop_link(self, node: str, dst: str) -> int: ...


@dataclass
class JobTree:
    """A job's tree before register regions are assigned."""

    job: Job
    root: str | None
    parent: dict[str, str | None]          # aggregator -> parent aggregator
    children: dict[str, list[tuple[str, str]]]  # aggregator -> [(child, kind)]
    first_aggregator: dict[str, str]
    link_streams: dict[int, int]           # link index -> streams of this job (per direction)


def build_tree(topo: Topology, job: Job, root: str | None, aggregators: set[str] | frozenset[str],
               routes: Routes | None = None) -> JobTree:
    """The tree of ``job`` rooted at ``root`` with exactly these aggregating switches (routes of
    ``routes``, default ``topo``'s own).
    Raises ValueError if the choice is not a valid tree (an aggregator off the tree or without
    children, a fan-in above MAX_FAN_IN, a root missing or not aggregating)."""
    if not job.needs_aggregation:
        if root is not None or aggregators:
            raise ValueError(f"job {job.id} has one worker and needs no aggregator")
        return JobTree(job, None, {}, {}, {}, {})
    hop = (routes or topo).next_hop_link
    if root is None or root not in aggregators:
        raise ValueError(f"job {job.id}: the root must be one of its aggregators")
    parent: dict[str, str | None] = {root: None}
    children: dict[str, list[tuple[str, str]]] = {a: [] for a in aggregators}
    first: dict[str, str] = {}
    streams: dict[int, int] = {}

    def send(child: str, src: str) -> str:
        """Follow the route from ``src`` toward the root; return the first aggregator reached."""
        node = src
        while node not in aggregators:
            link = hop(node, root)
            streams[link] = streams.get(link, 0) + 1
            node = topo.links[link].other(node)
        return node

    pending = []
    for w in job.workers:
        att = topo.attachment(w)
        streams[att.link] = streams.get(att.link, 0) + 1
        agg = send(w, att.switch)
        first[w] = agg
        children[agg].append((w, "host"))
    for agg in sorted(aggregators):
        if agg != root:
            pending.append(agg)
    for agg in pending:
        link = hop(agg, root)
        streams[link] = streams.get(link, 0) + 1
        up = send(agg, topo.links[link].other(agg))
        parent[agg] = up
        children[up].append((agg, "switch"))
    # an aggregator nobody sends to is off the tree (its own partial would be empty)
    for agg, kids in children.items():
        if not kids:
            raise ValueError(f"job {job.id}: {agg} aggregates but has no children (not on the tree)")
        if len(kids) > MAX_FAN_IN:
            raise ValueError(f"job {job.id}: {agg} has {len(kids)} children > fan-in limit {MAX_FAN_IN}")
    for agg in children:
        children[agg].sort(key=lambda c: (c[1] != "host", c[0]))
    return JobTree(job, root, parent, children, first, streams)


def evaluate(topo: Topology, choice: dict[int, tuple[str | None, set[str] | frozenset[str]]],
             budget: int | None = None, *, solve_time_s: float = 0.0, optimal: bool = False,
             solver: str = "", routes: Routes | None = None) -> Placement:
    """Turn (root, aggregators) per job into a full ``Placement``: check memory and budget, assign
    register regions, compute loads and the objective."""
    trees = [build_tree(topo, job, *choice.get(job.id, (None, set())), routes) for job in topo.jobs]
    used: dict[str, int] = {}
    bases: dict[tuple[str, int], int] = {}
    for tree in sorted(trees, key=lambda t: t.job.id):
        for agg in sorted(tree.children):
            bases[(agg, tree.job.id)] = used.get(agg, 0)
            used[agg] = used.get(agg, 0) + tree.job.region_slots
    for sw_name, slots in used.items():
        if slots > topo.switches[sw_name].register_slots:
            raise ValueError(
                f"{sw_name} needs {slots} register slots, has {topo.switches[sw_name].register_slots}"
            )
    if budget is None:
        deployed = sorted(n for n, s in topo.switches.items() if s.programmable)
        off = [n for n in used if not topo.switches[n].programmable]
        if off:
            raise ValueError(f"switches {off} aggregate but are not programmable")
    else:
        deployed = sorted(used)
        bad = [n for n in deployed if not topo.switches[n].programmable]
        if bad:
            raise ValueError(f"switches {bad} aggregate but cannot be made programmable")
    cost = sum(topo.switches[n].deploy_cost for n in deployed)
    if budget is not None and cost > budget:
        raise ValueError(f"deployment cost {cost} exceeds budget {budget}")

    link_streams: dict[int, int] = {}
    link_bytes: dict[int, int] = {}
    for tree in trees:
        for link, n in tree.link_streams.items():
            link_streams[link] = link_streams.get(link, 0) + n
            link_bytes[link] = link_bytes.get(link, 0) + n * tree.job.bytes_per_iteration
    loads = tuple(LinkLoad(ln.a, ln.a_port, ln.b, ln.b_port, link_streams.get(i, 0), link_bytes.get(i, 0))
                  for i, ln in enumerate(topo.links))
    objective = Objective(max(link_bytes.values(), default=0), sum(link_bytes.values()), cost,
                          sum(len(t.children) for t in trees))
    jobs = []
    for tree in trees:
        aggs = tuple(
            Aggregator(a, tree.parent[a],
                       tuple(Child(name, kind, i) for i, (name, kind) in enumerate(tree.children[a])),
                       bases[(a, tree.job.id)], tree.job.region_slots)
            for a in sorted(tree.children, key=lambda s: (s != tree.root, s)))
        jobs.append(JobPlacement(tree.job.id, tree.root, aggs, dict(sorted(tree.first_aggregator.items())),
                                 tree.job.bytes_per_iteration, tree.job.window))
    host_max = max((link_bytes.get(i, 0) for i in host_links(topo)), default=0)
    bound = Bound(objective.bottleneck_bytes, objective.total_bytes) if optimal else Bound(host_max)
    return Placement(topo.name, budget, tuple(jobs), tuple(deployed), loads, objective,
                     solve_time_s, optimal, solver, bound=bound)


def host_links(topo: Topology) -> list[int]:
    """Indexes of the host links: their load is the same under every placement."""
    return sorted({topo.attachment(h).link for h in topo.hosts})


def prune_relays(topo: Topology, choice: dict[int, tuple[str | None, set[str]]],
                 routes: Routes | None = None) -> dict[int, tuple[str | None, set[str]]]:
    """Drop non-root aggregators with a single child: the child's one stream then passes through
    unchanged, so no load, fan-in or tree changes, and a register region is freed."""
    out = {}
    jobs = {j.id: j for j in topo.jobs}
    for jid, (root, aggs) in choice.items():
        aggs = set(aggs)
        while root is not None:
            tree = build_tree(topo, jobs[jid], root, aggs, routes)
            relays = {a for a, kids in tree.children.items() if a != root and len(kids) == 1}
            if not relays:
                break
            aggs.discard(min(relays))  # one at a time: removing one can change another's count
        out[jid] = (root, aggs)
    return out



"""Placement results and their exact evaluation.

A job's aggregation tree is fully determined by its root and its set of aggregating switches:
routes are unique shortest paths (``controller.topology``), so every worker's contribution
travels the route toward the root and stops at the first aggregator on it, and each aggregator's
partial stops at the next aggregator on its own route toward the root.  ``build_tree`` derives
that tree; ``evaluate`` derives loads, register regions and the objective from the trees alone.
The ILP (``placement_model``) and the brute force (``bruteforce``) both hand their choice of
(root, aggregators) per job to ``evaluate``, so the numbers users see never come from the model's
own bookkeeping.

Objective, compared lexicographically (smaller is better):
1. bottleneck: the largest per-direction link load, in bytes per iteration;
2. total: the sum of per-direction link loads over all links;
3. deployment cost of the switches made programmable (budget mode only; otherwise constant);
4. number of (job, aggregating switch) pairs (fewer register regions for the same traffic).
A link carries, in each direction, one stream of ``bytes_per_iteration`` per child whose route to
its parent crosses it (contribution up, result down along the same route reversed).
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from dataclasses import asdict, dataclass, field

from controller.topology import Job, Topology
from dhc.wire import MAX_FAN_IN


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

    def job(self, job_id: int) -> JobPlacement:
        for jp in self.jobs:
            if jp.job_id == job_id:
                return jp
        raise KeyError(f"no job {job_id} in placement")

    def regions(self) -> dict[tuple[str, int], tuple[int, int]]:
        """(switch, job id) -> (base, size) of the job's register region on that switch."""
        return {(a.switch, jp.job_id): (a.region_base, a.region_slots) for jp in self.jobs for a in jp.aggregators}

    def to_dict(self) -> dict:
        return asdict(self)

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
                   optimal=d["optimal"], solver=d["solver"], notes=tuple(d.get("notes", ())))

    @classmethod
    def from_json(cls, text: str) -> Placement:
        return cls.from_dict(json.loads(text))


@dataclass
class JobTree:
    """A job's tree before register regions are assigned."""

    job: Job
    root: str | None
    parent: dict[str, str | None]          # aggregator -> parent aggregator
    children: dict[str, list[tuple[str, str]]]  # aggregator -> [(child, kind)]
    first_aggregator: dict[str, str]
    link_streams: dict[int, int]           # link index -> streams of this job (per direction)


def build_tree(topo: Topology, job: Job, root: str | None, aggregators: set[str] | frozenset[str]) -> JobTree:
    """The tree of ``job`` rooted at ``root`` with exactly these aggregating switches.
    Raises ValueError if the choice is not a valid tree (an aggregator off the tree or without
    children, a fan-in above MAX_FAN_IN, a root missing or not aggregating)."""
    if not job.needs_aggregation:
        if root is not None or aggregators:
            raise ValueError(f"job {job.id} has one worker and needs no aggregator")
        return JobTree(job, None, {}, {}, {}, {})
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
            link = topo.next_hop_link(node, root)
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
        link = topo.next_hop_link(agg, root)
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
             solver: str = "") -> Placement:
    """Turn (root, aggregators) per job into a full ``Placement``: check memory and budget, assign
    register regions, compute loads and the objective."""
    trees = [build_tree(topo, job, *choice.get(job.id, (None, set()))) for job in topo.jobs]
    used: dict[str, int] = {}
    bases: dict[tuple[str, int], int] = {}
    for tree in sorted(trees, key=lambda t: t.job.id):
        for agg in sorted(tree.children):
            bases[(agg, tree.job.id)] = used.get(agg, 0)
            used[agg] = used.get(agg, 0) + tree.job.region_slots
    for sw_name, slots in used.items():
        if slots > topo.switches[sw_name].register_slots:
            raise ValueError(f"{sw_name} needs {slots} register slots, has {topo.switches[sw_name].register_slots}")
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
    return Placement(topo.name, budget, tuple(jobs), tuple(deployed), loads, objective,
                     solve_time_s, optimal, solver)


def prune_relays(topo: Topology, choice: dict[int, tuple[str | None, set[str]]]
                 ) -> dict[int, tuple[str | None, set[str]]]:
    """Drop non-root aggregators with a single child: the child's one stream then passes through
    unchanged, so no load, fan-in or tree changes, and a register region is freed."""
    out = {}
    jobs = {j.id: j for j in topo.jobs}
    for jid, (root, aggs) in choice.items():
        aggs = set(aggs)
        while root is not None:
            tree = build_tree(topo, jobs[jid], root, aggs)
            relays = {a for a, kids in tree.children.items() if a != root and len(kids) == 1}
            if not relays:
                break
            aggs.discard(min(relays))  # one at a time: removing one can change another's count
        out[jid] = (root, aggs)
    return out


@contextlib.contextmanager
def _keep_sigint_handler():
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


def place(topo: Topology, budget: int | None = None, *, time_limit: float = 60.0, workers: int = 2,
          force_general: bool = False) -> Placement:
    """Optimal placement of every job in ``topo`` (CP-SAT).  ``budget``: at most this total
    ``deploy_cost`` of switches made programmable (None: every programmable switch is deployed).
    Raises ``InfeasiblePlacement`` naming the binding constraints, ``SolverError`` on timeout.
    ``force_general`` skips the root-assignment shortcut (used to cross-check both models)."""
    from controller import placement_assign, placement_model  # heavy; keep out of plain imports

    if budget is not None and budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    placement_model.precheck(topo, budget)
    options = None if force_general else placement_assign.applicable(topo, budget)
    if options is not None:
        with _keep_sigint_handler():
            sol = placement_assign.solve(topo, options, time_limit=time_limit, workers=workers)
        solver = "cp-sat/root-assignment"
    else:
        with _keep_sigint_handler():
            sol = placement_model.solve(topo, budget, time_limit=time_limit, workers=workers)
        solver = "cp-sat/tree-flow"
    result = evaluate(topo, prune_relays(topo, sol.choice), budget, solve_time_s=round(sol.wall_s, 4), optimal=sol.optimal,
                      solver=solver)
    got = (result.objective.bottleneck_bytes, result.objective.total_bytes)
    if sol.choice and sol.optimal and got != (sol.bottleneck_bytes, sol.total_bytes):
        raise RuntimeError(f"model and routing disagree: model {sol.bottleneck_bytes, sol.total_bytes}, "
                           f"routes {got}")
    notes = tuple(f"{p['phase']}: {p['status']} in {p['wall_s']} s" for p in sol.phases)
    return Placement(**{**result.__dict__, "notes": notes})

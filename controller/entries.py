"""Topology + placement -> every switch resolved, and its intended state (pure, no I/O).

:class:`controller.plan.DeploymentPlan` calls :func:`switch_plans` once per deployment and reads
entries, groups, lanes and the manifest off the result.

Conventions (agreed with the data plane, ``p4src/README.md``):

* One address per switch: the switch's topology ``ip``/``mac`` is its ``own_addr`` for every job,
  is in ``local_addr`` and in ``arp_table``.
* ``arp_table`` of every switch answers for every host and every switch address with that node's
  real MAC (proxy ARP), so hosts can resolve anyone they talk to.
* ``ipv4_lpm``: a /32 to every host and every other switch via the topology's unique shortest-path
  next hop; ``dmac`` is the next hop's MAC (the host's if attached, else the neighbour switch's).
* Multicast group of a job on a switch = the job id (ids must be 1..65535: group 0 is reserved).
* Rids: per switch, 1, 2, ... over the switch's (job id, child index) pairs in sorted order.
* ``stats_idx``: per switch, 0, 1, ... over the switch's job ids in sorted order (< DHC_MAX_JOBS).
* Register region: ``region_base`` from the placement (even; the job owns ``2 * window`` cells).
* Epoch: ``epochs[job]`` (default 0) is the job's current session; its one ``epoch_table`` entry
  per switch is :func:`epoch_entry` (job, epoch).  A session reset replaces that entry on every
  switch of the job (``installed_epoch`` reads the current one back from a switch's state).

Rids and ``stats_idx`` are functions of the *whole placement*, so ``jobs add``/``jobs remove`` of
one job must use the same placement file as the deployment (they never renumber other jobs).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

from controller.controls import CONTROLS, ChildPlan, JobPlan, Route, SwitchPlan, epoch_entry, installed_epoch
from controller.deploy.errors import PlanError
from controller.intent import SwitchState
from controller.placement import Aggregator, JobPlacement, Placement
from controller.topology import Topology
from dhcwire.lanes import LEVEL_OPS
from dhcwire.p4names import DEFAULT_MAX_JOBS, MAX_FAN_IN

__all__ = ["check_placement", "epoch_entry", "installed_epoch", "state_of", "switch_epochs", "switch_plans"]

MAX_RID = 0xFFFF


def _next_mac(topo: Topology, switch: str, dst: str) -> tuple[int, str]:
    """(egress port, MAC of the next hop) from ``switch`` towards node ``dst``."""
    link = topo.links[topo.next_hop_link(switch, dst)]
    nb = link.other(switch)
    mac = topo.hosts[nb].mac if nb in topo.hosts else topo.switches[nb].mac
    return link.port_of(switch), mac


def _node_ip(topo: Topology, name: str) -> str:
    return topo.hosts[name].ip if name in topo.hosts else topo.switches[name].ip


def check_placement(topo: Topology, placement: Placement, max_jobs: int = DEFAULT_MAX_JOBS) -> None:
    """Raise PlanError naming the first problems that make the placement undeployable here."""
    problems: list[str] = []
    if placement.topology != topo.name:
        problems.append(f"placement is for topology {placement.topology!r}, not {topo.name!r}")
    topo_jobs = {j.id: j for j in topo.jobs}
    per_switch: dict[str, list[tuple[int, Aggregator]]] = {}
    for jp in placement.jobs:
        if jp.job_id not in topo_jobs:
            problems.append(f"job {jp.job_id}: not in the topology's job list")
            continue
        if jp.root is None:
            continue
        if not 1 <= jp.job_id <= 0xFFFF:
            problems.append(
                f"job {jp.job_id}: job ids must be 1..65535 (the id is its multicast group; 0 is reserved)"
            )
        workers = set(topo_jobs[jp.job_id].workers)
        for w, agg in jp.first_aggregator.items():
            if w not in workers:
                problems.append(f"job {jp.job_id}: {w} is not a worker of the job")
            if agg not in {a.switch for a in jp.aggregators}:
                problems.append(
                    f"job {jp.job_id}: worker {w}'s first aggregator {agg} does not aggregate the job"
                )
        for a in jp.aggregators:
            sw = topo.switches.get(a.switch)
            if sw is None:
                problems.append(f"job {jp.job_id}: aggregator {a.switch} is not a switch of the topology")
                continue
            per_switch.setdefault(a.switch, []).append((jp.job_id, a))
            problems += _aggregator_problems(topo, jp, a, sw.register_slots)
    for sw, aggs in sorted(per_switch.items()):
        problems += _switch_problems(sw, aggs, max_jobs)
    if problems:
        raise PlanError("placement cannot be deployed:\n" + "\n".join(f"  - {p}" for p in problems))


def _aggregator_problems(topo: Topology, jp: JobPlacement, a: Aggregator, pool: int) -> list[str]:
    """What is wrong with one aggregator of a job: its region (even base, two cells per window
    slot, inside the switch's pool of ``pool`` cells), its children and its parent."""
    problems: list[str] = []
    if a.region_base % 2:
        problems.append(f"job {jp.job_id} on {a.switch}: region base {a.region_base} is odd")
    if a.region_slots != 2 * jp.window:
        problems.append(f"job {jp.job_id} on {a.switch}: region of {a.region_slots} cells, "
                        f"window {jp.window} needs {2 * jp.window}")
    if a.region_base < 0 or a.region_base + a.region_slots > pool:
        problems.append(
            f"job {jp.job_id} on {a.switch}: region {a.region_base}..."
            f"{a.region_base + a.region_slots - 1} outside the pool of {pool}"
        )
    if not 1 <= len(a.children) <= MAX_FAN_IN:
        problems.append(
            f"job {jp.job_id} on {a.switch}: {len(a.children)} children (1..{MAX_FAN_IN})"
        )
    if sorted(c.index for c in a.children) != list(range(len(a.children))):
        problems.append(
            f"job {jp.job_id} on {a.switch}: child indexes are not 0..{len(a.children) - 1}"
        )
    for c in a.children:
        if c.name not in topo.hosts and c.name not in topo.switches:
            problems.append(f"job {jp.job_id} on {a.switch}: unknown child {c.name}")
    if (a.parent is None) != (a.switch == jp.root):
        problems.append(f"job {jp.job_id} on {a.switch}: only the root {jp.root} has no parent")
    return problems


def _switch_problems(sw: str, aggs: list[tuple[int, Aggregator]], max_jobs: int) -> list[str]:
    """What is wrong with the jobs one switch aggregates together: too many jobs or children,
    overlapping register regions."""
    problems: list[str] = []
    if len(aggs) > max_jobs:
        problems.append(f"{sw}: {len(aggs)} jobs > {max_jobs} per-job counter cells (DHC_MAX_JOBS)")
    if sum(len(a.children) for _, a in aggs) > MAX_RID:
        problems.append(f"{sw}: more than {MAX_RID} children in total: out of replica ids")
    spans = sorted((a.region_base, a.region_base + a.region_slots, j) for j, a in aggs)
    for (_, e0, j0), (b1, _, j1) in pairwise(spans):
        if b1 < e0:
            problems.append(f"{sw}: register regions of jobs {j0} and {j1} overlap")
    return problems


def _job_plan(topo: Topology, jp: JobPlacement, agg: Aggregator, stats_idx: int,
              rids: dict[tuple[int, int], int], epoch: int) -> JobPlan:
    sw = topo.switches[agg.switch]
    children = []
    for c in sorted(agg.children, key=lambda c: c.index):
        port, mac = _next_mac(topo, agg.switch, c.name)
        children.append(ChildPlan(c.name, c.kind, c.index, port, _node_ip(topo, c.name), mac,
                                  rids[(jp.job_id, c.index)]))
    uplink = parent_child_id = 0
    parent_addr = None
    if agg.parent is not None:
        uplink, _ = _next_mac(topo, agg.switch, agg.parent)
        parent_child_id = next(c.index for c in jp.aggregator(agg.parent).children if c.name == agg.switch)
        parent_addr = topo.switches[agg.parent].ip
    return JobPlan(
        jp.job_id,
        agg.region_base,
        jp.window,
        jp.job_id,
        agg.parent is None,
        uplink,
        parent_child_id,
        sw.ip,
        parent_addr,
        stats_idx,
        tuple(children),
        tuple(sorted((int(lv), int(op)) for lv, op in LEVEL_OPS.items())),
        epoch,
    )


def switch_plans(topo: Topology, placement: Placement, max_jobs: int = DEFAULT_MAX_JOBS,
                 epochs: Mapping[int, int] | None = None) -> dict[str, SwitchPlan]:
    """Every switch of the topology, with addresses, routes and allocations resolved.
    ``epochs``: job id -> current epoch (jobs not in it use epoch 0)."""
    check_placement(topo, placement, max_jobs)
    epochs = dict(epochs or {})
    for job, ep in sorted(epochs.items()):
        epoch_entry(job, ep)  # range check: ValueError names the job
    aggs: dict[str, list[tuple[JobPlacement, Aggregator]]] = {s: [] for s in topo.switches}
    for jp in placement.jobs:
        for a in jp.aggregators:
            aggs[a.switch].append((jp, a))
    arp = tuple(sorted([(h.ip, h.mac) for h in topo.hosts.values()]
                       + [(s.ip, s.mac) for s in topo.switches.values()]))
    plans = {}
    for name, sw in topo.switches.items():
        routes = []
        for dst in (*topo.hosts, *topo.switches):
            if dst != name:
                port, mac = _next_mac(topo, name, dst)
                routes.append(Route(_node_ip(topo, dst), mac, port))
        mine = sorted(aggs[name], key=lambda x: x[0].job_id)
        pairs = sorted((jp.job_id, c.index) for jp, a in mine for c in a.children)
        rids = {pair: i + 1 for i, pair in enumerate(pairs)}
        jobs = tuple(
            _job_plan(topo, jp, a, i, rids, epochs.get(jp.job_id, 0)) for i, (jp, a) in enumerate(mine)
        )
        hosts = tuple(sorted((ln.port_of(name), topo.hosts[ln.other(name)].ip) for ln in topo.links
                             if name in (ln.a, ln.b) and ln.other(name) in topo.hosts))
        plans[name] = SwitchPlan(name, sw.ip, sw.mac, tuple(sorted(routes, key=lambda r: r.ip)), arp, jobs,
                                 hosts)
    return plans


def state_of(plan: SwitchPlan) -> SwitchState:
    """The entries, default actions and multicast groups the controls derive from one plan."""
    st = SwitchState(plan.name)
    for control in CONTROLS:
        for d in control.defaults(plan):
            st.defaults[d.table] = d
        for e in control.entries(plan):
            st.add(e)
        for g in control.groups(plan):
            st.add_group(g)
    return st


def switch_epochs(states: Mapping[str, SwitchState]) -> dict[int, int]:
    """job id -> epoch installed on the switches (read-back states); ValueError if the switches
    of one job disagree (a reset that did not reach every switch)."""
    found: dict[int, dict[int, list[str]]] = {}
    for name, st in states.items():
        for job in sorted(st.jobs()):
            ep = installed_epoch(st, job)
            if ep is not None:
                found.setdefault(job, {}).setdefault(ep, []).append(name)
    out = {}
    for job, by_epoch in sorted(found.items()):
        if len(by_epoch) > 1:
            raise ValueError(
                f"job {job}: switches hold different epochs "
                + ", ".join(f"{ep} on {', '.join(sorted(sw))}" for ep, sw in sorted(by_epoch.items()))
            )
        (out[job],) = by_epoch
    return out

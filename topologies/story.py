"""The whole DHC story on one machine: network, placement, deployment, AllReduce, check.

``make run`` calls ``python -m topologies.run_story``, which is a thin CLI over ``Story``:

1. load the topology file (the one description of network and jobs);
2. place aggregators with the ILP (``controller.placement.place``);
3. start Mininet with one P4 target per switch (softswitch unless BMv2 is present);
4. deploy: push ``p4src/dhc.p4`` and every table entry and multicast group over P4Runtime,
   write the job manifest;
5. run one ``dhc-agent`` per worker host, concurrently, every job at once;
6. check that every worker holds the exact expected sum; read the switches' counters;
7. tear everything down (also on Ctrl-C or error).
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from controller.bmv2_build import Bmv2Build
from controller.p4rt_client import SwitchAddress
from controller.placement import Placement, place
from controller.plan import DeploymentPlan
from controller.rollout import rollout
from controller.status import collect as collect_status
from controller.status import to_json as status_json
from controller.targets import lanes_for_target
from controller.topology import Topology
from dhcwire.p4names import DEFAULT_MAX_JOBS
from topologies.net import NetHandle, choose_target, running_net
from topologies.shaping import format_rate, gbps_to_bps
from topologies.workload import WorkerOutcome, Workload, agent_command, collect, expected_sum


@dataclass
class StoryResult:
    topology: str
    target: str
    placement: Placement
    outcomes: list[WorkerOutcome] = field(default_factory=list)
    deploy_seconds: float = 0.0
    run_seconds: float = 0.0
    status: dict = field(default_factory=dict)
    #: what the links were shaped to: a tc rate for every link, or "per topology file"
    bandwidth: str = "per topology file"
    #: jobs whose lanes per packet the target cannot run, moved to its K: job -> (asked, used)
    lanes_changed: dict[int, tuple[int, int]] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        return bool(self.outcomes) and all(o.exact for o in self.outcomes)


def link_rates(topo: Topology) -> str:
    """The topology's link rates in words, e.g. ``10gbit on every link``."""
    rates = sorted({format_rate(gbps_to_bps(ln.bandwidth_gbps)) for ln in topo.links})
    return (f"{rates[0]} on every link" if len(rates) == 1
            else "per topology file (" + ", ".join(rates) + ")")


def switch_addresses(handle: NetHandle) -> dict[str, SwitchAddress]:
    return {n: SwitchAddress(n, addr, handle.device_ids[n]) for n, addr in handle.grpc_addresses.items()}


@contextlib.contextmanager
def deployed_net(topo: Topology, placement: Placement, workdir: Path, target: str = "auto",
                 log_level: str = "warn", bandwidth: str | None = None,
                 ) -> Iterator[tuple[NetHandle, Path, float]]:
    """A running, deployed network and its job manifest; torn down on exit.  ``bandwidth``
    (a tc rate such as ``100mbit``) shapes every link; None keeps each link's topology rate."""
    # BMv2: p4c with the same defines the softswitch build uses (cached by content); a job at a K
    # BMv2 cannot run is refused here (PlanError), before the network starts
    source = Bmv2Build() if choose_target(target) == "bmv2" else None
    if source is not None:   # compiled now, so the deploy time below does not include p4c
        lanes = DeploymentPlan.build(topo, placement, DEFAULT_MAX_JOBS).lanes
        for pool in sorted({sw.register_slots for sw in topo.switches.values()}):
            source.config(lanes, pool, DEFAULT_MAX_JOBS)
    with running_net(topo, target, log_dir=str(workdir / "logs"), log_level=log_level,
                     bandwidth=bandwidth) as handle:
        t0 = time.perf_counter()
        manifest = workdir / "manifest.json"
        rollout(topo, switch_addresses(handle), placement=placement, manifest=manifest, timeout=60.0,
                source=source)
        yield handle, manifest, time.perf_counter() - t0


def run_jobs(handle: NetHandle, manifest: Path, topo: Topology, workload: Workload, workdir: Path,
             jobs: list[int] | None = None, deadline_s: float = 600.0) -> list[WorkerOutcome]:
    """Every worker of every (selected) job at once; returns their outcomes."""
    procs: dict[tuple[int, str], object] = {}
    for job in topo.jobs:
        if (jobs is not None and job.id not in jobs) or not job.needs_aggregation:
            continue
        expect = workdir / f"expected-job{job.id}.npy"
        expected_sum(workload, len(job.workers), expect)
        for rank, host in enumerate(job.workers):
            cmd = agent_command(manifest, host, rank, workload, expect, job.id)
            procs[(job.id, host)] = handle.host(host).popen(
                cmd, stdout=-1, stderr=-1, cwd=str(Path(__file__).resolve().parents[1]))
    outcomes: list[WorkerOutcome] = []
    end = time.monotonic() + deadline_s
    try:
        for job_id in sorted({j for j, _ in procs}):
            mine = {h: p for (j, h), p in procs.items() if j == job_id}
            outcomes += collect(mine, job_id, max(1.0, end - time.monotonic()))
    except BaseException:  # Ctrl-C or an error: leave no agent behind
        for p in procs.values():
            if p.poll() is None:
                p.kill()
        raise
    return outcomes


def run_story(topo: Topology, workload: Workload, target: str = "auto",
              workdir: Path | None = None, log_level: str = "warn",
              bandwidth: str | None = None) -> StoryResult:
    """Place, deploy and run every job once on ``target``; the jobs take the target's K where
    the topology's lanes per packet are more than it runs (``controller.targets``)."""
    topo, lanes_changed = lanes_for_target(topo, choose_target(target))
    placement = place(topo)
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="dhc-story-")
        workdir = Path(tmp.name)
    try:
        result = StoryResult(topology=topo.name, target=choose_target(target), placement=placement,
                             bandwidth=bandwidth or link_rates(topo), lanes_changed=lanes_changed)
        with deployed_net(topo, placement, workdir, target, log_level, bandwidth) as (
                handle, manifest, dt):
            result.deploy_seconds = dt
            t0 = time.perf_counter()
            result.outcomes = run_jobs(handle, manifest, topo, workload, workdir)
            result.run_seconds = time.perf_counter() - t0
            result.status = status_json(collect_status(switch_addresses(handle)))
        return result
    finally:
        if tmp is not None:
            tmp.cleanup()

"""One fabric's switches as the job service drives them: place, deploy, new epochs, removal.

Every method takes the fabric's lock: placement and deployment are serialised per fabric, so two
jobs joining at the same moment are placed one after the other (``place_incremental`` sees the
first when it places the second) and no register region is handed out twice.  The program is
pushed once, built for the fabric's lane count (one ``DHC_LANES`` per P4 program); every later
deployment is of entries only (a push would wipe every job's entries).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from controller.deploy.apply import deploy, remove_job
from controller.deploy.errors import SwitchError
from controller.entries import DEFAULT_MAX_JOBS
from controller.errors import ControllerError
from controller.p4rt_client import MultiSwitchClient, SwitchAddress, SwitchConnection, pipeline_cookie
from controller.pipeline import PipelineSource
from controller.placement import Placement, place, place_incremental
from controller.plan import DeploymentPlan
from controller.reset import reset_job
from controller.topology import Job, Topology

#: How long a switch may take to accept a connection before the fabric calls it down (s).
PROBE_S = 3.0


@dataclass(frozen=True)
class PlacedJob:
    """What the fabric needs of one job: id, workers (host names, rank order) and parameters."""

    job_id: int
    workers: tuple[str, ...]
    bytes_per_iteration: int
    window: int
    lanes: int

    def as_job(self) -> Job:
        return Job(self.job_id, self.workers, self.bytes_per_iteration, self.window, self.lanes)


@dataclass(frozen=True)
class Admission:
    placement: Placement
    moved: tuple[int, ...]      # earlier jobs whose tree or region changed (redeployed)


class Fabric:
    """The switches of one topology file and the placement of the service's jobs on them."""

    def __init__(self, topo: Topology, addrs: Mapping[str, SwitchAddress], lanes: int, *,
                 source: PipelineSource | None, timeout: float = 10.0, time_limit: float = 20.0,
                 placement: Placement | None = None):
        self.topo = topo.with_jobs([])
        self.addrs = dict(addrs)
        self.lanes = lanes
        self.source = source
        self.timeout = timeout
        self.time_limit = time_limit
        self.lock = threading.RLock()
        self.jobs: dict[int, PlacedJob] = {}
        self.placement = placement if placement is not None else place(self.topo)
        self.ip_to_host = {h.ip: h.name for h in self.topo.hosts.values()}

    def topology(self, jobs: Mapping[int, PlacedJob] | None = None) -> Topology:
        jobs = self.jobs if jobs is None else jobs
        return self.topo.with_jobs([j.as_job() for _, j in sorted(jobs.items())])

    def restore(self, jobs: Mapping[int, PlacedJob]) -> None:
        """Take back the jobs a restarted service had placed (``self.placement`` holds them)."""
        self.jobs = dict(jobs)

    def _configs(self) -> dict:
        return {n: self.source.config(self.lanes, self.topo.switches[n].register_slots, DEFAULT_MAX_JOBS)
                for n in self.addrs}

    def push_pipeline(self) -> list[str]:
        """Push the program to every switch not already running it; the switches pushed."""
        if self.source is None:
            return []
        configs = self._configs()
        with self.lock, MultiSwitchClient(self.addrs, timeout=self.timeout) as client:
            pushed = client.run(lambda c: c.set_pipeline(configs[c.name].p4info,
                                                         configs[c.name].device_config))
        return sorted(n for n, p in pushed.items() if p)

    def unreachable(self, names: list[str] | None = None) -> list[str]:
        """Switches (of ``names``, default all) whose P4Runtime port does not answer within
        ``PROBE_S``: a fresh channel each, so no reconnect backoff of an earlier one delays it."""
        out = []
        for name in sorted(self.addrs if names is None else names):
            conn = SwitchConnection(self.addrs[name], timeout=min(self.timeout, PROBE_S))
            try:
                conn.open_channel()
            except ControllerError:
                out.append(name)
            finally:
                conn.close()
        return out

    def restarted_switches(self) -> list[str]:
        """Switches that answer but do not run the fabric's program (restarted); unreachable ones
        are not listed (nothing can be done until they answer).  Empty without a program source."""
        if self.source is None:
            return []
        want = {n: pipeline_cookie(c.p4info, c.device_config) for n, c in self._configs().items()}
        out = []
        for name, addr in sorted(self.addrs.items()):
            conn = SwitchConnection(addr, timeout=min(self.timeout, PROBE_S))
            try:
                conn.open_channel()
                if conn.pipeline_cookie() != want[name]:
                    out.append(name)
            except ControllerError:
                continue
            finally:
                conn.close()
        return out

    def deploy(self, jobs: set[int], epochs: Mapping[int, int]) -> dict[int, int]:
        """Entries of ``jobs`` (and the forwarding) on every switch, idempotently; a switch that
        restarted gets its program and everything back.  Returns job -> epoch deployed (what the
        switches hold, else ``epochs``)."""
        with self.lock:
            down = self.unreachable()
            if down:   # at once, not after --timeout with the fabric locked (joins wait on it)
                raise SwitchError(", ".join(down), f"does not answer within {PROBE_S:g} s")
            self.push_pipeline()
            report = deploy(self.topology(), self.placement, self.addrs, jobs=jobs, pipeline=False,
                            timeout=self.timeout, epochs=dict(epochs))
        return dict(report.epochs)

    def admit(self, job: PlacedJob, epochs: Mapping[int, int]) -> Admission:
        """Place ``job`` (new, or with other workers than before) incrementally and deploy it and
        every earlier job whose tree or region moved.  InfeasiblePlacement names the resource."""
        with self.lock:
            jobs = dict(self.jobs)
            jobs[job.job_id] = job
            topo = self.topology(jobs)
            grown = place_incremental(topo, self.placement, time_limit=self.time_limit)
            moved = tuple(sorted(j for j in self.jobs if j != job.job_id
                                 and _footprint(grown, j) != _footprint(self.placement, j)))
            old_placement, old_jobs = self.placement, self.jobs
            self.placement, self.jobs = grown, jobs
            try:
                self.deploy({job.job_id, *moved}, epochs)
            except BaseException:
                self.placement, self.jobs = old_placement, old_jobs
                raise
            return Admission(grown, moved)

    def new_epoch(self, job_id: int, avoid: set[int]) -> int:
        """Install a fresh epoch for ``job_id`` on every switch of the job (insert new, delete old).
        A switch that does not answer fails it at once (SwitchError) rather than after the full
        timeout with the fabric locked (joins wait on that lock): a restarted switch gets a new
        epoch from the watcher's redeployment, and every next session starts with one anyway."""
        with self.lock:
            down = self.unreachable(sorted({s for s, _, _ in self.regions(job_id) if s in self.addrs}))
            if down:
                raise SwitchError(", ".join(down), f"does not answer within {PROBE_S:g} s")
            return reset_job(self.addrs, job_id, avoid=avoid, timeout=self.timeout).new_epoch

    def remove(self, job_id: int) -> None:
        """Delete the job's entries everywhere and free its region (the other jobs stay as placed)."""
        with self.lock:
            if job_id not in self.jobs:
                return
            remove_job(self.topo, self.addrs, job_id, timeout=self.timeout)
            del self.jobs[job_id]
            kept = tuple(jp for jp in self.placement.jobs if jp.job_id != job_id)
            self.placement = Placement(**{**self.placement.__dict__, "jobs": kept})

    def endpoint(self, job_id: int, host: str, epoch: int) -> dict:
        """The manifest entry of ``host`` in ``job_id`` (child id, first aggregator, window, lanes)."""
        with self.lock:
            plan = DeploymentPlan.build(self.topology(), self.placement).with_epochs({job_id: epoch})
            (job,) = plan.manifest_jobs({job_id})
        return {**job["workers"][host], "window": job["window"], "lanes": job["lanes"]}

    def regions(self, job_id: int) -> list[tuple[str, int, int]]:
        with self.lock:
            return [(a.switch, a.region_base, a.region_slots) for jp in self.placement.jobs
                    if jp.job_id == job_id for a in jp.aggregators]


def _footprint(p: Placement, job_id: int) -> tuple | None:
    for jp in p.jobs:
        if jp.job_id == job_id:
            return tuple((a.switch, a.parent, a.children, a.region_base) for a in jp.aggregators)
    return None

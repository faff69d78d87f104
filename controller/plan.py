"""One deployment, derived once: topology + placement (+ epochs) -> everything the switches and
the workers need.

:class:`DeploymentPlan` resolves every switch once (:func:`controller.entries.switch_plans`:
addresses, routes, rids, counters, regions, epochs); table entries, multicast groups, the lane
count of the program and the workers' job manifest are all read off that one result, so they
cannot disagree.  The session epochs a deployment finds on the switches are folded in with
:meth:`DeploymentPlan.with_epochs`, which changes only the epochs, not the allocation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from controller.controls import SwitchPlan
from controller.deploy.errors import PlanError
from controller.entries import DEFAULT_MAX_JOBS, epoch_entry, state_of, switch_plans
from controller.intent import SwitchState
from controller.placement import Placement
from controller.topology import Topology
from dhcwire.lanes import DEFAULT_LANES


@dataclass(frozen=True)
class DeploymentPlan:
    """Every switch's plan for one placement on one topology, with the jobs' session epochs."""

    topology: Topology
    placement: Placement
    switches: Mapping[str, SwitchPlan]
    max_jobs: int = DEFAULT_MAX_JOBS

    @classmethod
    def build(cls, topology: Topology, placement: Placement, max_jobs: int = DEFAULT_MAX_JOBS,
              epochs: Mapping[int, int] | None = None) -> DeploymentPlan:
        """Check the placement and resolve every switch (PlanError names what cannot be deployed);
        ``epochs``: job id -> current session (jobs not in it use epoch 0)."""
        return cls(topology, placement, switch_plans(topology, placement, max_jobs, epochs), max_jobs)

    def with_epochs(self, epochs: Mapping[int, int]) -> DeploymentPlan:
        """The same plan with these jobs' session epochs (others keep theirs)."""
        for job, ep in sorted(epochs.items()):
            epoch_entry(job, ep)  # range check: ValueError names the job
        switches = {name: dataclasses.replace(plan, jobs=tuple(
                        dataclasses.replace(j, epoch=epochs.get(j.job_id, j.epoch)) for j in plan.jobs))
                    for name, plan in self.switches.items()}
        return DeploymentPlan(self.topology, self.placement, switches, self.max_jobs)

    @property
    def job_ids(self) -> set[int]:
        return {jp.job_id for jp in self.placement.jobs}

    @property
    def epochs(self) -> dict[int, int]:
        """job id -> session epoch of every placed job (0 for a job no switch aggregates)."""
        out = dict.fromkeys(sorted(self.job_ids), 0)
        for plan in self.switches.values():
            out.update((j.job_id, j.epoch) for j in plan.jobs)
        return out

    @cached_property
    def states(self) -> dict[str, SwitchState]:
        """switch name -> every entry, default action and multicast group it must hold."""
        return {name: state_of(plan) for name, plan in self.switches.items()}

    @cached_property
    def lanes(self) -> int:
        """The program's ``DHC_LANES``: the lane count every aggregated job uses (PlanError if
        they differ; DEFAULT_LANES when no job is aggregated)."""
        lanes = {self.topology.job(jp.job_id).lanes for jp in self.placement.jobs if jp.root is not None}
        if len(lanes) > 1:
            raise PlanError(
                f"jobs use different lane counts {sorted(lanes)}; one P4 program has one DHC_LANES"
            )
        return lanes.pop() if lanes else DEFAULT_LANES

    def manifest_jobs(self, jobs: set[int] | None = None) -> list[dict]:
        """The job manifest entries for ``hostagent.manifest.write_manifest`` (``jobs``: None = all):
        per job, per worker its IP, its child id at its first aggregator and that aggregator's
        address; plus window, lanes and epoch.  Single-worker jobs have no aggregator and are left
        out.  Read off the switch plans: a worker is the host child of its first aggregator."""
        first: dict[tuple[int, str], tuple[int, str]] = {}
        windows: dict[int, int] = {}
        epochs: dict[int, int] = {}
        for plan in self.switches.values():
            for j in plan.jobs:
                windows[j.job_id], epochs[j.job_id] = j.window, j.epoch
                for c in j.children:
                    if c.kind == "host":
                        first[(j.job_id, c.name)] = (c.child_id, j.own_addr)
        out = []
        for job_id in sorted(windows):
            if jobs is not None and job_id not in jobs:
                continue
            job = self.topology.job(job_id)
            workers = {w: {"ip": self.topology.hosts[w].ip, "child_id": first[(job_id, w)][0],
                           "switch_ip": first[(job_id, w)][1]} for w in job.workers}
            out.append({"job_id": job_id, "window": windows[job_id], "lanes": job.lanes,
                        "epoch": epochs[job_id], "workers": workers})
        return out


def intended_state(topo: Topology, placement: Placement, max_jobs: int = DEFAULT_MAX_JOBS,
                   epochs: Mapping[int, int] | None = None) -> dict[str, SwitchState]:
    """switch name -> everything it must hold for this placement (:attr:`DeploymentPlan.states`)."""
    return DeploymentPlan.build(topo, placement, max_jobs, epochs).states


def manifest_jobs(
    topo: Topology, placement: Placement, epochs: Mapping[int, int] | None = None
) -> list[dict]:
    """The job manifest of this placement (:meth:`DeploymentPlan.manifest_jobs`)."""
    return DeploymentPlan.build(topo, placement, epochs=epochs).manifest_jobs()

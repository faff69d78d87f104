"""Which lane counts (K, ``DHC_LANES``) each P4 target can run, and the K a story picks for it.

``p4src/dhc.p4`` has one register and one table per lane, so the cost of K depends on the
target: the softswitch compiles any K the program supports, while p4c's BMv2 back end grows
roughly with K squared (the BMv2 JSON is 25 MB at K = 32 and p4c did not finish K = 256 in ten
minutes; the measured table is in ``docs/bmv2.md``).  A job asking for a K its target cannot run
is refused here, before any switch is touched, instead of every DATA packet being dropped as
``dhc_bad`` at run time.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from controller.deploy.errors import PlanError
from controller.topology import SUPPORTED_LANES, Topology

#: P4Info names of the per-lane registers (``DhcIngress.lanes.lane_<i>``).
_LANE_REGISTER = re.compile(r"(^|\.)lane_(\d+)$")


@dataclass(frozen=True)
class TargetProfile:
    """A P4 target's lane counts: ``lanes`` it can run, ``preferred`` when a story chooses."""

    name: str
    lanes: tuple[int, ...]
    preferred: int | None  # None: keep what the topology asks
    why: str               # one line: why the limit (for the refusal message)

    def supports(self, lanes: int) -> bool:
        return lanes in self.lanes


TARGETS: dict[str, TargetProfile] = {
    "softswitch": TargetProfile("softswitch", SUPPORTED_LANES, None,
                                "the softswitch compiles every K the P4 program supports"),
    # measured (docs/bmv2.md): with one update and one result table per lane, p4c's BMv2 back end
    # takes ~7 s at K = 16 (13 MB JSON), ~33 s at K = 32 (49 MB) and over 5 min at K = 64.  The
    # story picks 16 (Tofino 1's K too, and as fast end to end on BMv2 as 32); 32 is for who asks.
    "bmv2": TargetProfile("bmv2", tuple(k for k in SUPPORTED_LANES if k <= 32), 16,
                          "p4c's BMv2 back end emits one table per lane and its compile time and "
                          "JSON size grow with K squared (docs/bmv2.md)"),
}


def profile(target: str) -> TargetProfile:
    try:
        return TARGETS[target]
    except KeyError:
        raise PlanError(f"unknown target {target!r} (known: {', '.join(sorted(TARGETS))})") from None


def check_lanes(topo: Topology, target: str) -> None:
    """Refuse (PlanError) if any job of ``topo`` asks for a K ``target`` cannot run."""
    prof = profile(target)
    bad = [j for j in topo.jobs if j.needs_aggregation and not prof.supports(j.lanes)]
    if bad:
        jobs = ", ".join(f"job {j.id} ({j.lanes} lanes)" for j in bad)
        raise PlanError(
            f"{jobs}: target {target} runs only K in {{{', '.join(map(str, prof.lanes))}}} lanes per "
            f"packet ({prof.why}); set the job's lanes to one of those"
            + (f", e.g. {prof.preferred}" if prof.preferred else ""))


def lanes_for_target(topo: Topology, target: str) -> tuple[Topology, dict[int, tuple[int, int]]]:
    """``topo`` with every job the target cannot run at its K moved to the target's preferred K
    (what ``make run TARGET=...`` does; the manifest then tells the agents).  Returns the topology
    and the changes made, job -> (asked, chosen)."""
    prof = profile(target)
    if prof.preferred is None:
        return topo, {}
    changed: dict[int, tuple[int, int]] = {}
    jobs = []
    for job in topo.jobs:
        if prof.supports(job.lanes):
            jobs.append(job)
        else:
            changed[job.id] = (job.lanes, prof.preferred)
            jobs.append(dataclasses.replace(job, lanes=prof.preferred))
    if not changed:
        return topo, {}
    return topo.with_jobs(jobs), changed


def lanes_in_p4info(p4info: object) -> int:
    """K of a compiled dhc.p4, counted from its P4Info (its ``lane_<i>`` registers)."""
    return sum(1 for r in getattr(p4info, "registers", ()) if _LANE_REGISTER.search(r.preamble.name))

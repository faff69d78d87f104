"""Place -> deploy -> manifest: the one sequence ``dhc-ctl deploy``/``jobs add``, the story
(``topologies/story.py``) and the tests use to bring jobs up.

The manifest is read off the plan the deployment used (with the epochs it found on the
switches), so the workers are told exactly what the switches hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.deploy.apply import DeployReport, deploy
from controller.p4rt_client import SwitchAddress
from controller.placement import Placement, place
from controller.topology import Topology
from hostagent.manifest import write_manifest


@dataclass
class Rollout:
    """What one rollout did: the placement used, the deployment report, the manifest's jobs."""

    placement: Placement
    report: DeployReport
    manifest_jobs: list[dict]
    manifest: Path | None = None


def rollout(topo: Topology, addrs: dict[str, SwitchAddress], *, placement: Placement | None = None,
            manifest: str | Path | None = None, jobs: set[int] | None = None, **options: Any) -> Rollout:
    """Place the topology's jobs (unless ``placement`` is given), deploy ``jobs`` (None: all) with
    ``options`` (see :func:`controller.deploy.apply.deploy`), and write the job manifest of those jobs to
    ``manifest`` if given."""
    placement = placement if placement is not None else place(topo)
    report = deploy(topo, placement, addrs, jobs=jobs, **options)
    assert report.plan is not None  # deploy always records what it deployed
    entries = report.plan.manifest_jobs(jobs)
    path = Path(manifest) if manifest is not None else None
    if path is not None:
        write_manifest(path, entries)
    return Rollout(placement, report, entries, path)

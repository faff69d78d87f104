"""Running DHC workers on Mininet hosts and checking what they got.

Each worker is a real ``dhc-agent`` process in its host's network namespace, joining the job
from the deployment's manifest and AllReducing its synthetic gradient.  The expected sum is
computed here, independently, by the codec's in-process simulation of the same tensors: every
worker must return it bit for bit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dhc.codec import simulate_allreduce
from dhc.synthetic import synthetic_job


@dataclass(frozen=True)
class Workload:
    """What every worker of a job AllReduces."""

    dim: int = 100_000
    density: float = 0.01
    clustered: bool = False
    seed: int = 1
    codec: str = "hg"          # "hg" or "dense"
    repeat: int = 1
    timeout: float = 0.2       # first retransmission timeout (s)
    retries: int = 12
    fuse_rounds: bool = False  # HG-Sketch: element index and sketch in one round (dhc-agent --fuse-rounds)


@dataclass
class WorkerOutcome:
    host: str
    job_id: int
    returncode: int
    summary: dict = field(default_factory=dict)
    stderr: str = ""

    @property
    def exact(self) -> bool:
        return self.returncode == 0 and bool(self.summary.get("exact"))


def expected_sum(workload: Workload, n_workers: int, path: Path) -> np.ndarray:
    """The exact decoded sum every worker must produce, written to ``path`` (.npy)."""
    tensors = synthetic_job(n_workers, workload.dim, workload.density, workload.seed,
                            workload.clustered)
    result = simulate_allreduce(tensors, codec=workload.codec).sum
    np.save(path, result)
    return result


def agent_command(manifest: Path, host: str, rank: int, workload: Workload,
                  expect: Path, job_id: int) -> list[str]:
    return [sys.executable, "-m", "hostagent.cli", "--manifest", str(manifest), "--host", host,
            "--job", str(job_id), "--dim", str(workload.dim), "--density", str(workload.density),
            "--seed", str(workload.seed), "--rank", str(rank), "--codec", workload.codec,
            "--repeat", str(workload.repeat), "--timeout", str(workload.timeout),
            "--retries", str(workload.retries), "--expect", str(expect), "--json"] + (
        ["--clustered"] if workload.clustered else []) + (
        ["--fuse-rounds"] if workload.fuse_rounds and workload.codec == "hg" else [])


def collect(procs: dict, job_id: int, deadline_s: float) -> list[WorkerOutcome]:
    """Wait for every agent (killing stragglers at the deadline) and parse their JSON."""
    end = time.monotonic() + deadline_s
    outcomes = []
    for host, proc in procs.items():
        try:
            out, err = proc.communicate(timeout=max(1.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            err = (err or b"") + f"\n[killed after {deadline_s:.0f} s]".encode()
        summary: dict = {}
        for line in (out or b"").decode(errors="replace").splitlines()[::-1]:
            if line.startswith("{"):
                try:
                    summary = json.loads(line)
                    break
                except json.JSONDecodeError:
                    pass
        outcomes.append(WorkerOutcome(host, job_id, proc.returncode, summary,
                                      (err or b"").decode(errors="replace")[-2000:]))
    return outcomes

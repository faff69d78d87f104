"""End to end on one switch with four workers: sessions back to back on the same registers
(sparse, clustered, dense), then a worker killed mid-run.  Marked root."""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.e2e.helpers import run_and_check
from topologies.workload import Workload, agent_command, collect, expected_sum

pytestmark = [pytest.mark.root, pytest.mark.slow]


def test_sessions_back_to_back_are_exact(single_net):
    run_and_check(single_net, Workload(dim=100_000, density=0.01, seed=1))
    run_and_check(single_net, Workload(dim=100_000, density=0.02, clustered=True, seed=2))
    run_and_check(single_net, Workload(dim=10_000, codec="dense", seed=3))
    run_and_check(single_net, Workload(dim=50_000, density=0.001, seed=4, repeat=3))


def test_killed_worker_makes_the_others_fail_with_a_clear_timeout(single_net):
    """Last test of the module: the killed session leaves the job's slots mid-stream."""
    job = single_net.topo.job(1)
    wl = Workload(dim=400_000, density=0.02, seed=5, timeout=0.05, retries=6)
    expect = single_net.workdir / "expected-kill.npy"
    expected_sum(wl, len(job.workers), expect)
    procs = {h: single_net.handle.host(h).popen(agent_command(single_net.manifest, h, r, wl, expect, 1),
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for r, h in enumerate(job.workers)}
    victim = job.workers[-1]
    time.sleep(0.4)
    procs[victim].kill()
    t0 = time.monotonic()
    outcomes = collect({h: p for h, p in procs.items() if h != victim}, 1, deadline_s=60)
    elapsed = time.monotonic() - t0
    assert elapsed < 45, f"survivors took {elapsed:.0f} s to give up"
    for o in outcomes:
        assert o.returncode == 3, (o.host, o.returncode, o.stderr[-400:])
        err = o.summary["error"]
        assert "job 1" in err and single_net.topo.switches["s1"].ip in err, err
        assert victim in err, err

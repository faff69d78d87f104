"""Agents over real UDP sockets, aggregated by p4src/dhc.p4 on in-process softswitches.

Each case runs ``tests/hostagent/loopback.py`` in a private network namespace (``unshare
--net``): the topology's addresses live on that namespace's loopback only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.root, pytest.mark.own_netns, pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare")]


def run_loopback(*args: str, engine: str | None = None) -> dict:
    env = dict(os.environ, DHC_HOST_ENGINE=engine) if engine else None
    proc = subprocess.run(["unshare", "--net", sys.executable, "-m", "tests.hostagent.loopback",
                           *args], cwd=ROOT, capture_output=True, text=True, timeout=240, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_all_exact(out: dict) -> None:
    for job in out["jobs"]:
        for host, w in job["workers"].items():
            assert w["exact"], f"job {job['job']} worker {host}: {w}"


@pytest.mark.parametrize("codec", ["hg", "dense"])
def test_single_switch_four_workers_exact(codec):
    out = run_loopback("--topo", "topologies/single.yaml", "--codec", codec, "--dim",
                       "20000" if codec == "hg" else "4000", "--timeout", "0.2")
    assert_all_exact(out)
    w = out["jobs"][0]["workers"]["h1"]
    assert w["bytes_sent"] > 0 and w["packets_sent"] > 0


@pytest.mark.parametrize("engine", ["native", "python"])
def test_two_level_tree_with_loss_is_exact_and_retransmits(engine):
    """Both delivery engines (DHC_HOST_ENGINE): the C loop and the Python reference."""
    out = run_loopback("--topo", "topologies/leafspine.yaml", "--loss", "0.05", "--timeout", "0.2",
                       "--clustered", engine=engine)
    assert out["bridge_dropped"] > 0
    assert_all_exact(out)
    assert sum(w["retransmissions"] for j in out["jobs"] for w in j["workers"].values()) > 0

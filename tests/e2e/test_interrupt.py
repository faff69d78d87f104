"""Ctrl-C during `make run` leaves nothing behind: no target or agent process, no interface."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.root, pytest.mark.slow]


def _tagged_processes(tag: str) -> list[str]:
    """Processes that inherited this test's environment tag (never another run's, on a shared
    machine): '<pid> <command line>'."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if f"DHC_TEST_TAG={tag}".encode() not in (d / "environ").read_bytes().split(b"\0"):
                continue
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # exited meanwhile, or not ours to read
        found.append(f"{d.name} {cmd}")
    return found


def _leftovers(tag: str) -> tuple[list[str], list[str]]:
    procs = [p for p in _tagged_processes(tag) if "softswitch.cli" in p or "hostagent.cli" in p]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    intfs = [ln.split(":")[1].strip() for ln in links.splitlines() if "ints1-eth" in ln]
    return procs, intfs


def test_sigint_mid_run_cleans_up(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root")
    topo = tmp_path / "int.yaml"
    topo.write_text((ROOT / "topologies" / "single.yaml").read_text()
                    .replace("name: s1", "name: ints1").replace("b: s1", "b: ints1"))
    tag = uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, "-m", "topologies.run_story", "--topo", str(topo),
                             "--dim", "3000000", "--density", "0.02"], cwd=ROOT,
                            env=dict(os.environ, DHC_TEST_TAG=tag),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _leftovers(tag)[1]:
        time.sleep(0.2)  # wait until the network is up
    assert _leftovers(tag)[1], "the network never came up"
    time.sleep(2.0)       # agents are running now
    assert _leftovers(tag)[0], "no process of this run carries its tag: the check below would prove nothing"
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode != 0
    time.sleep(1.0)
    procs, intfs = _leftovers(tag)
    assert not procs, f"processes left behind: {procs}\n{out.decode()[-2000:]}"
    assert not intfs, f"interfaces left behind: {intfs}"

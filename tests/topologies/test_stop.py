"""``make stop`` ends what this checkout recorded and nothing else.

A process named like a DHC target or agent but started by someone else, a veth of someone else's
network and a PID recorded with another start time (a reused PID) all survive; the recorded
process, a process inside a recorded namespace and a recorded interface are gone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from topologies.runreg import ProcRef, RunRecord, ifindex, netns_inode, write_record

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.root


def _sleeper(*argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", *argv])


def _veth(name: str) -> None:
    subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", name + "p"], check=True)


def test_stop_ends_only_what_was_recorded(tmp_path: Path) -> None:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare")
    tag = uuid.uuid4().hex[:5]
    ours_if, foreign_if = f"dst{tag}a", f"dst{tag}f"
    ours = _sleeper("softswitch.cli")
    in_ns = subprocess.Popen(["unshare", "--net", sys.executable, "-c", "import time; time.sleep(120)"])
    foreign = _sleeper("softswitch.cli", "hostagent.cli", "dhc-agent")   # the old pkill patterns
    reused = _sleeper()
    _veth(ours_if)
    _veth(foreign_if)
    try:
        deadline = time.monotonic() + 5
        while netns_inode(in_ns.pid) == netns_inode(os.getpid()) and time.monotonic() < deadline:
            time.sleep(0.05)   # unshare has not switched namespaces yet
        ref_ours, ref_reused = ProcRef.of(ours.pid), ProcRef.of(reused.pid)
        assert ref_ours and ref_reused
        dead_owner = ProcRef(pid=reused.pid, start=ref_reused.start + 1)  # same PID, other process
        rec = RunRecord(owner=dead_owner, processes=[ref_ours, ProcRef(reused.pid, ref_reused.start - 1)],
                        namespaces=[netns_inode(in_ns.pid)],
                        interfaces=[(ours_if, ifindex(ours_if)), (foreign_if, -5)])
        write_record(rec, tmp_path)
        env = dict(os.environ, DHC_RUN_DIR=str(tmp_path))
        out = subprocess.run([sys.executable, "-m", "topologies.cleanup"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "1 recorded run(s), 2 process(es) ended, 1 interface(s) removed" in out.stdout
        assert ours.wait(5) is not None and in_ns.wait(5) is not None
        assert foreign.poll() is None and reused.poll() is None
        assert ifindex(ours_if) is None and ifindex(foreign_if) is not None
        assert not list(tmp_path.glob("net-*.json"))
        # idempotent: nothing recorded, nothing ended
        again = subprocess.run([sys.executable, "-m", "topologies.cleanup"], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=60)
        assert "0 recorded run(s)" in again.stdout
    finally:
        for p in (ours, in_ns, foreign, reused):
            if p.poll() is None:
                p.kill()
                p.wait()
        for name in (ours_if, foreign_if):
            subprocess.run(["ip", "link", "del", name], check=False, capture_output=True)

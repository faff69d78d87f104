"""`make stop` after a run was killed outright (SIGKILL: no teardown ran): everything that run
started is ended -- softswitch processes, Mininet node shells, agents in the host namespaces,
switch interfaces -- while a look-alike process of someone else's survives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from topologies.runreg import RunRecord

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.root, pytest.mark.slow]


def _intfs(prefix: str) -> list[str]:
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return [ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines() if f" {prefix}-eth" in ln]


def test_make_stop_after_sigkill(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    topo = tmp_path / "stop.yaml"
    topo.write_text((ROOT / "topologies" / "single.yaml").read_text()
                    .replace("name: s1", "name: stps1").replace("b: s1", "b: stps1"))
    env = dict(os.environ, DHC_RUN_DIR=str(tmp_path / "run"))
    foreign = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "softswitch.cli",
                                "hostagent.cli"])
    proc = subprocess.Popen([sys.executable, "-m", "topologies.run_story", "--topo", str(topo),
                             "--dim", "3000000", "--density", "0.02"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not _intfs("stps1"):
            time.sleep(0.2)
        assert _intfs("stps1"), "the network never came up"
        time.sleep(3.0)   # deployed; agents running
        records = list((tmp_path / "run").glob("net-*.json"))
        assert len(records) == 1
        rec = RunRecord.from_json(records[0].read_text())
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        alive = [r for r in rec.processes if r.alive()]
        assert alive, "the killed run left nothing behind to clean (test would prove nothing)"
        out = subprocess.run([sys.executable, "-m", "topologies.cleanup"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        time.sleep(0.5)
        assert not [r for r in rec.processes if r.alive()], out.stdout
        assert not _intfs("stps1"), out.stdout
        assert foreign.poll() is None
        assert not list((tmp_path / "run").glob("net-*.json"))
    finally:
        if proc.poll() is None:
            proc.kill()
        foreign.kill()
        subprocess.run([sys.executable, "-m", "topologies.cleanup"], cwd=ROOT, env=env, capture_output=True)

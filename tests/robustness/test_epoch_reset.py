"""``dhc-ctl jobs reset`` and deploy's epoch handling against a real P4Runtime server (dhc.p4)."""

from __future__ import annotations

import json
from pathlib import Path

from controller.cli import main as ctl
from controller.deploy.apply import read_state
from controller.entries import installed_epoch
from controller.reset import next_epoch
from tests.robustness.p4rt_fixture import running_switch

ROOT = Path(__file__).resolve().parents[2]
SINGLE = str(ROOT / "topologies" / "single.yaml")


def _epoch_on_switch(sw) -> int | None:
    return installed_epoch(read_state(sw.conn), 1)


def _manifest_epoch(path: Path) -> int:
    return json.loads(path.read_text())["jobs"][0]["epoch"]


def test_next_epoch_wraps_and_skips_held_and_avoided() -> None:
    assert next_epoch([0]) == 1
    assert next_epoch([255]) == 0
    assert next_epoch([3, 3, 4]) == 5          # the majority's successor, never one still held
    assert next_epoch([7], avoid={8}) == 9
    assert next_epoch([], avoid={4}) == 5


def test_reset_moves_switches_and_manifest_and_deploy_keeps_it(tmp_path: Path, capsys) -> None:
    placement, manifest = tmp_path / "p.json", tmp_path / "jobs.json"
    assert ctl(["place", "--topo", SINGLE, "--out", str(placement), "--json"]) == 0
    with running_switch() as sw:
        sw.conn.close()
        common = ["--topo", SINGLE, "--switch-addr-map", f"s1={sw.addr}", "--timeout", "5", "--json"]
        assert ctl(["deploy", *common, "--placement", str(placement), "--manifest", str(manifest),
                    "--no-pipeline"]) == 0
        assert _manifest_epoch(manifest) == 0
        capsys.readouterr()
        assert ctl(["jobs", "reset", *common, "--job", "1", "--manifest", str(manifest)]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["new_epoch"] == 1 and doc["before"] == {"s1": [0]}
        assert _manifest_epoch(manifest) == 1
        # a redeploy keeps the installed epoch: nothing to write
        assert ctl(["deploy", *common, "--placement", str(placement), "--manifest", str(manifest),
                    "--no-pipeline"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["writes"] == 0 and doc["epochs"] == {"1": 1}
        assert _manifest_epoch(manifest) == 1
        assert ctl(["jobs", "reset", *common, "--job", "1", "--manifest", str(manifest)]) == 0
        assert json.loads(capsys.readouterr().out)["new_epoch"] == 2
        sw.conn.connect()
        assert _epoch_on_switch(sw) == 2
        sw.conn.close()
        assert ctl(["jobs", "reset", *common, "--job", "99"]) == 2
        assert "job 99 is not deployed" in capsys.readouterr().err
    # the switch restarts empty: a redeploy takes the manifest's epoch, which the agents use
    with running_switch() as sw:
        sw.conn.close()
        common = ["--topo", SINGLE, "--switch-addr-map", f"s1={sw.addr}", "--timeout", "5", "--json"]
        assert ctl(["deploy", *common, "--placement", str(placement), "--manifest", str(manifest),
                    "--no-pipeline"]) == 0
        assert json.loads(capsys.readouterr().out)["epochs"] == {"1": 2}
        sw.conn.connect()
        assert _epoch_on_switch(sw) == 2

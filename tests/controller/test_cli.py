"""``dhc-ctl place``: output formats and exit codes (0 ok, 2 bad input file, 3 infeasible)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli import main
from controller.placement import Placement

ROOT = Path(__file__).resolve().parents[2]
TOPO_DIR = ROOT / "topologies"


def test_place_json_ok(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    rc = main(["place", "--topo", str(TOPO_DIR / "leafspine.yaml"), "--json", "--out", str(out)])
    assert rc == 0
    printed = Placement.from_json(capsys.readouterr().out)
    assert printed == Placement.from_json(out.read_text())
    assert printed.optimal and {jp.job_id for jp in printed.jobs} == {1, 2}


def test_place_human_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["place", "--topo", str(TOPO_DIR / "single.yaml")]) == 0
    text = capsys.readouterr().out
    assert "aggregation trees" in text and "s1" in text and "root" in text and "busiest links" in text


def test_bad_file_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("switches: [{name: s1, ip: 10.0.0.1, mac: zz}]\nhosts: []\nlinks: []\n")
    assert main(["place", "--topo", str(bad), "--json"]) == 2
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["file"] == str(bad) and doc["problems"][0]["path"] == "switches[0].mac"
    assert f"{bad}: switches[0].mac: not a MAC address" in captured.err


def test_infeasible_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["place", "--topo", str(TOPO_DIR / "single.yaml"), "--budget", "0", "--json"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"] == "InfeasiblePlacement" and doc["binding"][0]["kind"] == "budget"


def test_module_entry_point_runs() -> None:
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "place", "--topo",
                           str(TOPO_DIR / "single.yaml"), "--budget", "1", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["deployed"] == ["s1"]

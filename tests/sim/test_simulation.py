"""Small SimGrid scenarios against the closed forms and the model's bounds (~20 s in all)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sim.analytic import ina_seconds, ring_seconds
from sim.parts import HOST_PROFILES, ring_frame_bytes
from sim.runner import Scenario, SwitchModel, simulate

pytest.importorskip("simgrid", reason="Debian's python3-simgrid is not exposed to this venv (make setup)")

REPO = Path(__file__).resolve().parents[2]
RATE = 100e9 / 8
LINK_BOUND = Scenario(topo="fattree:k=4", bw_bps=100e9, workers=16, dim=400_000, modes=("ring", "dense_ina"),
                      host="line-rate", codec_time=False, switch=SwitchModel(lanes=256))


@pytest.fixture(scope="module")
def link_bound() -> dict:
    return simulate(LINK_BOUND)


def test_ring_meets_its_closed_form(link_bound: dict) -> None:
    ring = link_bound["modes"]["ring"]
    expected = ring_seconds(16, ring["round_bytes_per_worker"][0], RATE, ring["jobs"]["1"]["hop_latency_s"])
    assert ring["seconds"] == pytest.approx(expected, rel=0.01)
    assert ring["jobs"]["1"]["ring_steps"] == 30


def test_dense_ina_meets_its_closed_form(link_bound: dict) -> None:
    ina = link_bound["modes"]["dense_ina"]
    expected = ina_seconds(ina["round_bytes_per_worker"], RATE, ina["jobs"]["1"]["tree_depth_s"])
    assert ina["seconds"] == pytest.approx(expected, rel=0.01)
    assert ina["rounds"] == 2 and ina["payload_bytes_per_worker"] == 4 * (400_000 + 7 + 12)


def test_sampled_ring_steps_equal_simulating_every_step(link_bound: dict) -> None:
    every = simulate(replace(LINK_BOUND, modes=("ring",), ring_steps=30))
    sampled = link_bound["modes"]["ring"]["seconds"]
    assert every["modes"]["ring"]["seconds"] == pytest.approx(sampled, rel=1e-6)
    assert every["modes"]["ring"]["sim_comms"] == 30 * 16


def test_a_small_window_bounds_in_network_aggregation() -> None:
    """W packets per round trip: one slot in flight makes the job window-bound."""
    res = simulate(replace(LINK_BOUND, switch=SwitchModel(lanes=32, window=1), modes=("dense_ina",)))
    ina = res["modes"]["dense_ina"]
    job = ina["jobs"]["1"]
    rate = job["window_rate_gbps"] * 1e9 / 8
    assert job["window"] == 1 and rate < RATE / 100
    expected = sum(b / rate for b in ina["round_bytes_per_worker"]) + 2 * 2 * job["tree_depth_s"]
    assert ina["seconds"] == pytest.approx(expected, rel=0.02)


def test_this_machines_host_bounds_the_ring_at_100_gbit() -> None:
    res = simulate(replace(LINK_BOUND, host="this-machine", modes=("ring",)))
    ring = res["modes"]["ring"]
    host_rate = HOST_PROFILES["this-machine"].direction_rate(ring_frame_bytes(346))
    steps = ring["jobs"]["1"]["ring_steps"]
    floor = steps * ring["round_bytes_per_worker"][0] / host_rate
    assert floor > 10 * steps * ring["round_bytes_per_worker"][0] / RATE   # the link is not the limit
    assert ring["seconds"] == pytest.approx(floor + steps * ring["jobs"]["1"]["hop_latency_s"], rel=0.01)


def test_parameter_server_thc_is_bound_by_the_ps_link() -> None:
    """ps_thc, link-bound: every round costs the PS link's N streams of the busier direction (the
    down sums are wider than the up indices) plus the way there and back."""
    res = simulate(replace(LINK_BOUND, modes=("ps_thc",), workers=8))
    ps = res["modes"]["ps_thc"]
    job = ps["jobs"]["1"]
    assert not job["ps_on_a_worker"] and job["thc_down_bits"] == 8     # ceil(log2(8 * 30 + 1))
    expected = sum(8 * b / RATE + 2 * job["hop_latency_s"] for b in ps["round_bytes_per_worker"])
    assert ps["seconds"] == pytest.approx(expected, rel=0.01)
    assert ps["rounds"] == 2 and ps["codec_s_per_worker"] == 0


def test_thc_wire_is_what_the_thc_baseline_sends() -> None:
    from bench.baselines import thc
    from sim.workload import thc_wire

    for n, dim in ((2, 5000), (5, 4096)):
        job = [np.random.default_rng(i).standard_normal(dim).astype(np.float32) for i in range(n)]
        run = thc.run(job)
        wire = thc_wire(dim, n, bucket=dim)
        assert (sum(wire.up), sum(wire.down)) == (run.bytes_up, run.bytes_down)
        assert wire.down_bits == run.notes["down_bits"] and wire.padded_dim == run.notes["padded_dim"]


def test_jobs_sharing_hosts_contend() -> None:
    """leafspine.yaml: job 2's three hosts also serve job 1, so job 2 is slower beside it."""
    base = Scenario(topo="topologies/leafspine.yaml", bw_bps=1e9, workers=None, dim=200_000,
                    modes=("dense_ina",), host="line-rate", codec_time=False, switch=SwitchModel(lanes=128))
    alone = simulate(replace(base, job=2))["modes"]["dense_ina"]["seconds"]
    both = simulate(base)["modes"]["dense_ina"]["seconds_per_job"]["2"]
    assert both > 1.4 * alone


def test_dhc_sends_fewer_bytes_than_dense_and_runs_the_codec() -> None:
    res = simulate(Scenario(topo="topologies/single.yaml", bw_bps=100e6, dim=200_000, density=0.01,
                            host="this-machine"))
    modes = res["modes"]
    assert modes["dhc"]["bytes_per_worker"] < modes["dense_ina"]["bytes_per_worker"] / 5
    assert modes["dhc"]["rounds"] == 3 and modes["dhc"]["codec_s_per_worker"] > 0
    assert res["speedup_of_dhc"]["ring"] > 3          # 100 Mbit/s: bytes dominate
    assert res["workload"]["hg@4"]["exact"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


def test_cli_runs_a_topology_file_and_prints_json() -> None:
    out = _cli("run", "--topo", "topologies/single.yaml", "--bw", "100mbit", "--dim", "100000",
               "--modes", "ring,dhc", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result["modes"]) == {"ring", "dhc"}
    for row in result["modes"].values():
        assert row["seconds"] > 0 and row["bytes_per_worker"] > 0 and row["packets_per_worker"] > 0


@pytest.mark.parametrize("args", [("--topo", "fattree:k=5"), ("--bw", "fast"), ("--modes", "ring,bogus"),
                                  ("--density", "2"), ("--lanes", "400"), ("--topo", "missing.yaml")])
def test_cli_reports_bad_input_in_one_line(args: tuple[str, ...]) -> None:
    out = _cli("run", *args)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and out.stderr.startswith("dhc-sim run:")


def test_validate_quick_holds() -> None:
    out = _cli("validate", "--quick", "--skip-emulator", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["all_ok"] and result["checked"] == 5
    assert {r["kind"] for r in result["rows"]} == {"analytic", "published"}


def test_validate_exits_1_naming_the_row_outside_its_bound(tmp_path: Path) -> None:
    """A recording whose DHC AllReduce took twice as long: that row fails, the command says which
    on stderr and exits 1 (no traceback); the topology without a recording is reported skipped."""
    from sim.validate import RECORDED

    record = json.loads((RECORDED / "sim_emulator_single.json").read_text())
    record["e2e"]["runs"] = [r for r in record["e2e"]["runs"] if r["mode"] == "dhc"]
    run = record["e2e"]["runs"][0]
    run["seconds_per_worker"] = {w: 2 * s for w, s in run["seconds_per_worker"].items()}
    (tmp_path / "sim_emulator_single.json").write_text(json.dumps(record))
    out = _cli("validate", "--quick", "--recorded", str(tmp_path))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    fails = [line for line in out.stderr.splitlines() if "FAIL" in line]
    assert len(fails) == 1 and fails[0].startswith("dhc-sim validate: FAIL single @ 10mbit: dhc:")
    assert "1 of 6 rows outside their bound" in out.stderr
    assert "leafspine: no recorded emulator run" in out.stdout and "skipped" in out.stdout


def test_validate_reports_a_bad_recording_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "sim_emulator_single.json").write_text("{\"e2e\": {}}")
    out = _cli("validate", "--quick", "--recorded", str(tmp_path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith("dhc-sim validate:") and "not a recorded emulator run" in out.stderr


def test_emulator_rows_use_a_profile_measured_apart_from_them() -> None:
    """The recorded emulator runs are compared with the ``this-machine`` profile (agent-pps), on
    links-bound rates, against the last-starting worker of the median run; nothing is fitted."""
    from sim.validate import EMULATOR_BW, EMULATOR_HOST, RECORDED, emulator_rows

    assert EMULATOR_HOST == "this-machine" and "agent-pps" in HOST_PROFILES[EMULATOR_HOST].source
    rows = emulator_rows(False, EMULATOR_BW)
    assert len(rows) == 8 and {r["host_profile"] for r in rows} == {EMULATOR_HOST}
    for name in ("single", "leafspine"):
        record = json.loads((RECORDED / f"sim_emulator_{name}.json").read_text())
        for run in record["e2e"]["runs"]:
            row = next(r for r in rows if r["check"] == f"{name} @ {record['bw']}: {run['mode']}")
            measured = min(run["seconds_per_worker"].values())
            assert row["expected"] == measured and row["host_engine"] == record["host_engine"]
            assert row["relative_error"] == pytest.approx(abs(row["simulated"] - measured) / measured,
                                                          abs=1e-5)

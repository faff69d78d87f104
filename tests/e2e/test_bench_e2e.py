"""``dhc-bench e2e --quick`` end to end: one Mininet with 100 Mbit/s links, the 2x2 of modes.

Runs the real CLI (its own deployed network, so not the module's shared fixtures) and checks the
JSON it prints: every mode (dhc, sketch_ring, dense_ina, ring) ran on every worker, all four
hold the exact sum, the byte counts are what the algorithms imply, and the ratios are computed
from the rows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mnexec") is None, reason="needs root and Debian's mininet")]


def test_quick_bench_runs_all_modes_exactly_on_shaped_links():
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "bench.cli", "e2e", "--json", "--quick",
                           "--bw", "100mbit"], cwd=ROOT, capture_output=True, text=True, timeout=180)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert elapsed < 120, f"--quick took {elapsed:.0f} s"
    assert set(out) == {"runs", "ratios", "config"}
    assert out["config"]["bandwidths"] == ["100mbit"] and list(out["ratios"]) == ["100mbit"]
    rows = {r["mode"]: r for r in out["runs"]}
    assert list(rows) == ["dhc", "sketch_ring", "dense_ina", "ring"]
    assert all(r["bandwidth"] == "100mbit" for r in rows.values())
    cfg = out["config"]
    n, dim = cfg["workers"], cfg["dim"]
    for mode, r in rows.items():
        assert r["exact"] is True, (mode, r.get("errors"))
        assert r["workers"] == n == 4 and r["seconds"] > 0 and r["wire_bytes"] > 0, (mode, r)
        assert len(r["wire_bytes_per_worker"]) == n
    # the ring sends 2 (N-1)/N of the int32 tensor (plus headers and ACKs)
    assert 2 * (n - 1) / n * 4 * dim <= rows["ring"]["wire_bytes"] <= 1.1 * 2 * (n - 1) / n * 4 * dim
    # dense INA sends every value once, in 32-lane packets with their headers
    assert 4 * dim <= rows["dense_ina"]["wire_bytes"] <= 1.25 * 4 * dim
    # the sketch over the ring moves a fraction of the dense ring's bytes
    assert rows["sketch_ring"]["wire_bytes"] < 0.3 * rows["ring"]["wire_bytes"]
    # both HG-Sketch modes run the codec's fused two-round form (the default --rounds); the dense
    # codec through the switch has a scale round and a value round, the dense ring one pass
    assert cfg["rounds"] == "fused"
    assert [rows[m]["rounds"] for m in rows] == [2, 2, 2, 1], {m: r["rounds"] for m, r in rows.items()}
    ratios = out["ratios"]["100mbit"]
    assert ratios["packets_sketch_ring_over_dhc"] == pytest.approx(
        rows["sketch_ring"]["packets_sent"] / rows["dhc"]["packets_sent"])
    assert ratios["bytes_ring_over_dhc"] == pytest.approx(
        rows["ring"]["wire_bytes"] / rows["dhc"]["wire_bytes"]
    )
    assert ratios["time_ring_over_dhc"] == pytest.approx(rows["ring"]["seconds"] / rows["dhc"]["seconds"])
    assert ratios["bytes_dense_ina_over_dhc"] > 4   # 1% density: the sketch is far below dense
    assert rows["ring"]["max_abs_err_vs_float32_sum"] <= n * cfg["quantization_step"] / 2 + 1e-6

"""``dhc-bench train --quick`` in Mininet: real DDP ranks on the emulated hosts, 100 Mbit/s links.

Plain DDP over gloo and the DHC hook (top-k, HG-Sketch summed in the P4 switch) train the same
model on the same shards; every rank of each mode must end with the same parameters, and the
hook must send far fewer bytes per iteration than the dense ring.
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
pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mnexec") is None, reason="needs root and Debian's mininet")]


def test_quick_training_runs_ddp_and_the_dhc_hook(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "bench.cli", "train", "--json", "--quick",
                           "--modes", "ddp,dhc_topk", "--bw", "100mbit", "--ratio", "0.05",
                           "--plot-dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = {r["mode"]: r for r in out["runs"]}
    assert list(rows) == ["ddp", "dhc_topk"]
    # --quick keeps two dense warm-up steps, so both the dense codec and HG-Sketch ran
    assert out["config"]["dense_warmup_steps"] == 2
    for mode, r in rows.items():
        assert r["ok"], (mode, r.get("errors"))
        assert r["replicas_identical"], mode
        assert r["steps"] == 6 and len(r["losses"]) == 6 and r["seconds_per_step"] > 0
        assert 0.0 <= r["final_accuracy"] <= 1.0 and r["curve"][-1]["step"] == 6
    # top-5 % of a 52 k-parameter model through the switch vs gloo's dense ring of it
    assert rows["dhc_topk"]["bytes_per_step_per_worker"] < 0.5 * rows["ddp"]["bytes_per_step_per_worker"]
    ratios = out["ratios"]
    assert ratios["step_time_ddp_over_dhc_topk"] == pytest.approx(
        rows["ddp"]["seconds_per_step"] / rows["dhc_topk"]["seconds_per_step"])
    assert sorted(Path(p).name for p in out["figures"]) == ["train_curves.png", "train_steps.png"]

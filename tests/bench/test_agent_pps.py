"""``dhc-bench agent-pps --quick``: one real agent against the C reflector in a private namespace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("cc") is None,
                    reason="needs root, unshare and a C compiler")
def test_quick_agent_pps_is_exact_and_counts_packets() -> None:
    proc = subprocess.run([sys.executable, "-m", "bench.cli", "agent-pps", "--json", "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = {(r["codec"], r["host_io"], r["engine"]): r for r in out["runs"]}
    # both I/O paths side by side (the per-datagram reference and the batched one), the Python
    # engine on each and the native engine (which does its own, batched, I/O)
    combos = [("python", "python"), ("native", "python"), ("native", "native")]
    assert set(rows) == {(c, io, e) for c in ("dense", "hg") for io, e in combos}
    for key, r in rows.items():
        assert r["exact"], key
        assert r["packets_sent"] > 0 and r["pps_sent"] == pytest.approx(r["packets_sent"] / r["seconds"])
        assert r["cpu_us_per_packet"] > 0
    # dense: d = 100k values, 32 per packet, at least once each; the same frames either way
    sent = {rows["dense", io, e]["packets_sent"] for io, e in combos}
    assert len(sent) == 1 and sent.pop() >= 100_000 // 32
    # the C reference client went through the same reflector; the ratios name both engines
    assert out["c_reference"][0]["complete"] and out["c_reference"][0]["pps_sent"] > 0
    assert {r["codec"] for r in out["ratios"]} == {"dense", "hg"}
    assert all(r["native_vs_c_reference"] > 0 for r in out["ratios"])
    assert "load_1m" in out["config"]["load_before"]
    # the reflector answered every datagram it was sent (no retransmission needed on loopback)
    assert out["reflector_echoed"] >= sum(r["packets_sent"] for r in rows.values()) - sum(
        r["retransmissions"] for r in rows.values())


def test_a_reflector_that_does_not_compile_is_named(monkeypatch, tmp_path) -> None:
    from bench import agent_pps
    bad = tmp_path / "broken.c"
    bad.write_text("int main( {")
    monkeypatch.setattr(agent_pps, "SOURCE", bad)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    with pytest.raises(SystemExit, match="cannot build .*broken.c"):
        agent_pps.build_reflector()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("cc") is None
                    or shutil.which("tc") is None, reason="needs root, unshare, tc and a C compiler")
def test_on_a_paced_link_coalesced_receives_stay_exact_with_few_system_calls() -> None:
    """``--rate``: answers trickle in as on a real link.  With coalescing the C loop sleeps while
    many are due and drains them at once: far fewer system calls per packet than waking for each
    (side by side in one run), the same frames, every sum exact."""
    proc = subprocess.run([sys.executable, "-m", "bench.cli", "agent-pps", "--json", "--codecs", "hg",
                           "--lanes", "256", "--windows", "64", "--host-io", "native",
                           "--engines", "native", "--coalesce", "on,off", "--rate", "200mbit",
                           "--union-of", "4", "--repeat", "3", "--dim", "1000000"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = {r["coalesce"]: r for r in out["runs"]}
    assert set(rows) == {"on", "off"} and out["c_reference"] == []
    assert out["config"]["rate"] == "200mbit" and out["config"]["union_of"] == 4
    for r in rows.values():
        assert r["exact"] and r["allreduces"] == 3
    # a 4-worker job's rounds (5 + 89 + 194 chunks at K = 256), three times, both ways
    for r in rows.values():
        assert r["packets_sent"] - r["retransmissions"] == 3 * 288
    assert rows["on"]["system_calls_per_packet"] < 0.3
    assert rows["on"]["system_calls_per_packet"] < rows["off"]["system_calls_per_packet"]
    assert out["ratios"][0]["coalesce_off_cpu_vs_on"] > 0

"""``dhc-bench compare`` on small sizes: JSON keys, side-by-side facts, and the PNGs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from bench.baselines import CODECS
from bench.codec import compare, plots

SMALL = ["--workers", "3", "--dim", "20000", "--densities", "0.01,0.1", "--mlp-hidden", "32,16",
         "--mlp-steps", "5", "--repeats", "1", "--scaling-workers", "2,4", "--scaling-dim", "20000",
         "--peel-ks", "300", "--peel-ratios", "1.0,1.2,1.5", "--peel-trials", "3",
         "--lhc-dim", "20000", "--lhc-ratios", "0.9,1.6"]


@pytest.fixture(scope="module")
def result() -> dict:
    p = argparse.ArgumentParser()
    compare.add_arguments(p)
    return compare.run(p.parse_args(SMALL))


def test_json_has_expected_keys(result: dict) -> None:
    json.dumps(result)                                       # JSON-able as the CLI prints it
    assert {"benchmark", "machine", "params", "transport_model", "codecs", "datasets", "results",
            "scaling", "peeling", "lhc_failure"} <= set(result)
    names = [d["name"] for d in result["datasets"]]
    assert names == ["mlp_dense", "mlp_top0.01", "synthetic_random_0.01", "synthetic_clustered_0.01",
                     "synthetic_random_0.1", "synthetic_clustered_0.1"]
    assert len(result["results"]) == len(names) * len(CODECS)
    row = result["results"][0]
    assert {"dataset", "codec", "bytes_per_worker", "bytes_up", "bytes_down", "encode_ms",
            "decode_ms", "exact_vs_quantized", "max_abs_err_vs_float64",
            "max_abs_err_vs_quantized", "rel_l2_err_vs_float64"} <= set(row)
    assert result["peeling"]["threshold_m_over_k"] == pytest.approx(1.222, abs=1e-3)


def test_side_by_side_facts(result: dict) -> None:
    rows = result["results"]
    hg = [r for r in rows if r["codec"] == "hgsketch"]
    assert all(r["exact_vs_quantized"] for r in hg)
    dense = {r["dataset"]: r["bytes_per_worker"] for r in rows if r["codec"] == "dense_fp32"}
    sparse_hg = [r for r in hg if r["dataset"] == "synthetic_clustered_0.01"][0]
    assert sparse_hg["bytes_per_worker"] < dense["synthetic_clustered_0.01"] / 5
    below, above = result["lhc_failure"]
    assert below["lhc_wrong_elements"] > 0 and below["hg_exact"] and below["hg_stuck_bytes"] > 0
    assert above["lhc_wrong_elements"] == 0 and above["hg_stuck"] == 0
    by_n = {r["workers"]: r["bytes_down"] for r in result["scaling"] if r["codec"] == "topk"}
    assert by_n[4] > by_n[2]


def test_unknown_codec_is_rejected() -> None:
    p = argparse.ArgumentParser()
    compare.add_arguments(p)
    with pytest.raises(SystemExit, match="unknown codec"):
        compare.run(p.parse_args(["--codecs", "dense_fp32,zip"]))


def _is_png(p: Path) -> bool:
    return p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000


def test_plots_are_written(result: dict, tmp_path: Path) -> None:
    messages: list[str] = []
    written = plots.write_all(tmp_path, compare=result, log=messages.append)
    assert sorted(p.name for p in written) == sorted(plots.FIGURES)
    assert all(_is_png(p) for p in written)
    assert "e2e plot skipped" in messages[0]
    # the Mininet benchmarks' figures are skipped, each with a message, when their JSON is absent
    assert [m.split()[0] for m in messages[1:]] == ["e2e_leafspine", "e2e-profile", "train"]


def test_profile_figure_from_its_json(result: dict, tmp_path: Path) -> None:
    row = {"seconds": 0.1, "cpu_bound_seconds": 0.06, "wire_seconds": 0.026,
           "workers_cpu_seconds": 0.08, "workers_runqueue_wait_seconds": 0.3,
           "switch_cpu_seconds": 0.03, "switch_runqueue_wait_seconds": 0.1}
    profile = {"modes": {"dhc": row, "sketch_ring": dict(row, seconds=0.09)},
               "config": {"topology": "single", "bandwidth": "100mbit", "cores": 2,
                          "load_average": [3.0, 2.0, 1.0]}}
    (tmp_path / "e2e-profile.json").write_text(json.dumps(profile))
    written = plots.write_all(tmp_path, compare=result, log=lambda _m: None)
    assert "e2e_profile.png" in [p.name for p in written]
    assert _is_png(tmp_path / "e2e_profile.png")


def test_e2e_plot_from_its_json(tmp_path: Path) -> None:
    assert plots.load_e2e(tmp_path) is None
    e2e = {"runs": [{"mode": "dense", "seconds": 2.0, "wire_bytes": 4e6, "ok": True},
                    {"mode": "sketch", "seconds": 0.7, "wire_bytes": 3e5, "ok": True}]}
    (tmp_path / "e2e.json").write_text(json.dumps(e2e))
    loaded = plots.load_e2e(tmp_path)
    assert loaded == e2e
    path = plots.plot_e2e(loaded, tmp_path / "e2e.png")
    assert _is_png(path)
    by_label = plots.e2e_rows({"modes": {"dense": {"seconds": 1.0}}})
    assert by_label == [{"label": "dense", "seconds": 1.0}]
    with pytest.raises(ValueError, match="no 'runs'"):
        plots.plot_e2e({"foo": 1}, tmp_path / "x.png")

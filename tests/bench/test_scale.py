"""``dhc-bench scale --quick`` (the tested variant of the sweeps) and its figures."""

from __future__ import annotations

import argparse
import json

import pytest

pytest.importorskip("simgrid", reason="Debian's python3-simgrid is not exposed to this venv (make setup)")

from bench.scale import scale, scale_plots  # noqa: E402


def test_quick_sweep_runs_every_arm_and_draws(tmp_path) -> None:
    parser = argparse.ArgumentParser()
    scale.add_arguments(parser)
    args = parser.parse_args(["--quick", "--models-json", str(tmp_path / "none.json")])
    result = scale.run(args)
    arms = [r["arm"] for r in result["rows"]]
    assert arms.count("workers") == 2 and arms.count("density") == 2 and arms.count("window") == 2
    for row in result["rows"]:
        for mode in row["modes"].values():
            assert 0 < mode["network_s"] <= mode["seconds"]
    small, big = sorted((r for r in result["rows"] if r["arm"] == "window"), key=lambda r: r["window"])
    assert big["window_rate_gbps"] > 10 * small["window_rate_gbps"]
    assert small["modes"]["dense_ina"]["network_s"] > 5 * big["modes"]["dense_ina"]["network_s"]
    sparse, dense = sorted((r for r in result["rows"] if r["arm"] == "density"), key=lambda r: r["density"])
    assert sparse["modes"]["dhc"]["bytes_per_worker"] < dense["modes"]["dhc"]["bytes_per_worker"]
    assert set(result["crossovers"]) == {f"density_where_dhc_stops_beating_{b}"
                                         for b in ("ring", "sketch_ring", "dense_ina")}
    (tmp_path / "scale.json").write_text(json.dumps(result))
    written = scale_plots.write_all(tmp_path)
    assert {p.name for p in written} == {"scale_workers.png", "scale_speedup.png", "scale_density.png",
                                        "scale_window.png"}
    assert all(p.stat().st_size > 10_000 for p in written)


def test_fattree_for_holds_the_workers() -> None:
    assert [scale.fattree_for(n) for n in (8, 16, 17, 128, 1024)] == [
        "fattree:k=4", "fattree:k=4", "fattree:k=6", "fattree:k=8", "fattree:k=16"]

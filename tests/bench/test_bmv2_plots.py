"""The BMv2-vs-softswitch figure is drawn from a `dhc-bench bmv2 --stories` result."""

from __future__ import annotations

import pytest

from bench.softswitch.bmv2_plots import main, plot_stories


def _row(topo: str, target: str, deploy: float, allreduce: float, lanes: int) -> dict:
    return {"topology": topo, "target": target, "lanes": [lanes], "exact": True, "deploy_s": deploy,
            "allreduce_s": allreduce, "slowest_worker_s": allreduce}


def test_figure_has_both_targets_for_both_topologies(tmp_path) -> None:
    result = {"load_before": "1.0 1.0 1.0", "stories": [
        _row("single.yaml", "softswitch", 1.1, 2.0, 256), _row("single.yaml", "bmv2", 0.3, 6.0, 32),
        _row("leafspine.yaml", "softswitch", 1.7, 3.8, 128), _row("leafspine.yaml", "bmv2", 1.0, 9.0, 32)]}
    out = plot_stories(result, tmp_path / "f.png")
    assert out.stat().st_size > 5000


def test_a_result_without_stories_is_a_clear_error(tmp_path, capsys) -> None:
    with pytest.raises(ValueError, match="no 'stories'"):
        plot_stories({"per_k": []}, tmp_path / "f.png")
    (tmp_path / "r.json").write_text("{}")
    assert main([str(tmp_path / "r.json"), str(tmp_path / "f.png")]) == 2
    assert "no 'stories'" in capsys.readouterr().err

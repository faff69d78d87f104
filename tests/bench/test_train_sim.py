"""``dhc-bench train-sim`` on the small model: the schemes run and error feedback is exact."""

from __future__ import annotations

import argparse

import pytest

torch = pytest.importorskip("torch")

from bench.train.train_sim import Worker, add_arguments, run  # noqa: E402


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(list(argv))


def test_error_feedback_delivers_every_gradient_unit_eventually():
    g = torch.tensor([4.0, -1.0, 0.5, 0.25])
    w = Worker(4)
    sent = sum(w.message(g, "topk", 0.25, dense=False) for _ in range(8))
    # what was sent plus what is still held back is exactly what was put in
    assert torch.allclose(sent + w.r, 8 * g)
    held = w.r.clone()
    assert torch.equal(w.message(g, "topk_warmup", 0.25, dense=True), g + held)
    assert not w.r.any()      # a dense step sends the residual too


def test_dgc_masks_the_velocity_where_it_sent():
    w = Worker(3)
    out = w.message(torch.tensor([3.0, 0.1, 0.2]), "dgc", 1 / 3, dense=False)
    assert out.tolist() == [3.0, 0.0, 0.0]
    assert w.u[0] == 0.0 and w.u[1] == pytest.approx(0.1) and w.r[0] == 0.0


def test_small_run_reports_every_scheme():
    out = run(_args("--model", "small", "--steps", "3", "--eval-every", "3",
                    "--schemes", "ddp,topk_warmup,dgc", "--dense-warmup", "1"))
    assert set(out["schemes"]) == {"ddp", "topk_warmup", "dgc"}
    for row in out["schemes"].values():
        assert 0.0 <= row["final_accuracy"] <= 1.0 and row["curve"][-1]["step"] == 3
    assert out["schemes"]["ddp"]["points_behind_ddp"] == 0.0
    with pytest.raises(SystemExit, match="schemes"):
        run(_args("--schemes", "nope"))

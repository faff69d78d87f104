"""``dhc-bench ddp``: plain DDP vs the DHC hook (no sparsification, top-k) on 4 gloo ranks.

Two models on scikit-learn's bundled digits: a small CNN (about 38k parameters) and a wide MLP
(about 5M parameters).  One run: every rank trains every (model, mode) pair in the same order
(``bench/train/ddp_worker.py``); reported per pair are the seconds per step (mean over the steps
after ``--warmup``, on rank 0, which waits for every rank in each collective), the test
accuracy, the final loss, and whether every rank ended with bit-identical parameters.  Ratios
to plain DDP are computed within the run.  Writes ``ddp.png`` next to the JSON (``--plot``).
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import socket
import tempfile
from pathlib import Path
from types import ModuleType

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from bench.figures import save_figure  # noqa: E402

MODES = ("plain", "dhc", "dhc_topk")
MODELS = ("cnn", "large")
DEFAULT_PLOT = Path(__file__).resolve().parents[1] / "out" / "ddp.png"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--world", type=int, default=4, help="gloo ranks on loopback")
    parser.add_argument("--models", default=",".join(MODELS), help="cnn and/or large")
    parser.add_argument("--cnn-steps", type=int, default=300)
    parser.add_argument("--large-steps", type=int, default=15)
    parser.add_argument("--large-width", type=int, default=2048,
                        help="hidden width of the large MLP (2048: about 4.9M parameters)")
    parser.add_argument("--warmup", type=int, default=5, help="steps left out of the time")
    parser.add_argument("--batch", type=int, default=32, help="images per rank and step")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--topk", type=float, default=0.01, help="top-k ratio of dhc_topk")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", default=str(DEFAULT_PLOT), help="PNG to write ('' = none)")
    parser.add_argument("--quick", action="store_true",
                        help="a few steps, a narrow large model: a smoke run of a few seconds")


def _config(args: argparse.Namespace, ddp_worker: ModuleType, data: tuple) -> object:
    models = tuple(m for m in args.models.split(",") if m)
    bad = [m for m in models if m not in MODELS]
    if bad or not models:
        raise ValueError(f"--models takes {','.join(MODELS)}, got {args.models!r}")
    if args.world < 1:
        raise ValueError(f"--world must be >= 1, got {args.world}")
    cnn, large, width, warmup = args.cnn_steps, args.large_steps, args.large_width, args.warmup
    if args.quick:
        cnn, large, width, warmup = min(cnn, 12), min(large, 4), min(width, 128), min(warmup, 2)
    if min(cnn, large) <= warmup:
        raise ValueError("every model needs more steps than --warmup")
    return ddp_worker.RunConfig(world=args.world, models=models, modes=MODES,
                                steps={"cnn": cnn, "large": large}, warmup=warmup,
                                batch=args.batch, lr=args.lr, topk=args.topk,
                                large_width=width, seed=args.seed,
                                data=ddp_worker.digits_split(*data, seed=args.seed))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _summarise(ranks: list[dict], warmup: int) -> list[dict]:
    rows = []
    for i, lead in enumerate(ranks[0]["runs"]):
        every = [r["runs"][i] for r in ranks]
        steps = np.array(lead["step_seconds"][warmup:])
        rows.append({"model": lead["model"], "mode": lead["mode"],
                     "parameters": lead["parameters"], "steps": len(lead["step_seconds"]),
                     "seconds_per_step": round(float(steps.mean()), 5),
                     "seconds_per_step_median": round(float(np.median(steps)), 5),
                     "test_accuracy": round(lead["test_accuracy"], 4),
                     "final_loss_mean_last_10": round(float(np.mean(lead["losses"][-10:])), 4),
                     "replicas_identical": len({r["digest"] for r in every}) == 1,
                     "dhc_buckets": lead["buckets"]})
    by = {(r["model"], r["mode"]): r for r in rows}
    for r in rows:
        plain = by.get((r["model"], "plain"))
        if plain and r["mode"] != "plain":
            r["step_time_over_plain"] = round(r["seconds_per_step"] / plain["seconds_per_step"], 3)
            r["accuracy_minus_plain"] = round(r["test_accuracy"] - plain["test_accuracy"], 4)
    return rows


def _plot(rows: list[dict], path: Path) -> None:
    models = sorted({r["model"] for r in rows}, key=MODELS.index)
    fig, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 3.6), squeeze=False)
    for ax, model in zip(axes[0], models, strict=True):
        mine = [r for r in rows if r["model"] == model]
        bars = ax.bar([r["mode"] for r in mine], [1e3 * r["seconds_per_step"] for r in mine],
                      color=["#888888", "#1f77b4", "#2ca02c"][: len(mine)])
        for bar, r in zip(bars, mine, strict=True):
            ax.annotate(f"acc {100 * r['test_accuracy']:.1f} %", (bar.get_x() + bar.get_width() / 2,
                        bar.get_height()), ha="center", va="bottom", fontsize=8)
        ax.set_title(f"{model} ({mine[0]['parameters'] / 1e6:.2f}M parameters)")
        ax.set_ylabel("ms per step (4 gloo ranks, loopback)")
    save_figure(fig, path)


def run(args: argparse.Namespace) -> dict:
    # torch and scikit-learn are imported here, not at the top: every dhc-bench command
    # imports this module to build its parser, and these two take seconds to load
    try:
        import torch.multiprocessing as mp
        from sklearn.datasets import load_digits

        from bench.train import ddp_worker
    except ImportError as exc:
        raise RuntimeError(f"dhc-bench ddp needs torch and scikit-learn ({exc}): "
                           "pip install 'dhc[torch,dev]'") from exc
    digits = load_digits()
    cfg = _config(args, ddp_worker, (digits.images, digits.target))
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="dhc-bench-ddp-") as tmp:
        mp.spawn(ddp_worker.rank_main, args=(_free_port(), cfg, tmp), nprocs=cfg.world,
                 join=True)
        ranks = []
        for r in range(cfg.world):
            with open(Path(tmp) / f"rank{r}.pkl", "rb") as f:
                ranks.append(pickle.load(f))
    rows = _summarise(ranks, cfg.warmup)
    plot = str(args.plot) if args.plot else None
    if plot:
        _plot(rows, Path(plot))
    config = {k: v for k, v in vars(cfg).items() if k != "data"}
    config["train_images"], config["test_images"] = len(cfg.data[1]), len(cfg.data[3])
    return {"benchmark": "ddp",
            "machine": {"python": platform.python_version(), "cores": os.cpu_count(),
                        "loadavg_1m_before_after": [round(load_before, 2),
                                                    round(os.getloadavg()[0], 2)]},
            "config": config, "plot": plot, "runs": rows}

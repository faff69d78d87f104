"""Figures of ``dhc-bench train``: time-to-accuracy curves and seconds per iteration."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from bench.figures import save_figure  # noqa: E402

COLORS = {"ddp": "#7f7f7f", "dhc_topk": "#2ca02c", "dhc_dense": "#1f77b4", "sketch_ring": "#98df8a"}


def _title(result: dict) -> str:
    c = result.get("config", {})
    return (f"{c.get('workers', '?')} workers, {c.get('model', '?')} model, links at "
            f"{c.get('bandwidth', '?')}")


def plot_curves(result: dict, path: Path) -> Path:
    """Test accuracy against training wall-clock seconds, one line per mode."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for row in result["runs"]:
        if row.get("ok") and row.get("curve"):
            ax.plot([p["seconds"] for p in row["curve"]], [p["accuracy"] for p in row["curve"]],
                    marker="o", ms=3, label=row["mode"], color=COLORS.get(row["mode"]))
    ax.set_xlabel("training seconds (sum of iteration times)")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"Time to accuracy: {_title(result)}")
    ax.grid(alpha=0.3)
    ax.legend()
    return save_figure(fig, path)


def plot_steps(result: dict, path: Path) -> Path:
    """Median seconds per iteration per mode; the factor over ddp on each bar."""
    rows = [r for r in result["runs"] if r.get("ok")]
    base = next((r["seconds_per_step"] for r in rows if r["mode"] == "ddp"), None)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    bars = ax.bar([r["mode"] for r in rows], [r["seconds_per_step"] for r in rows],
                  color=[COLORS.get(r["mode"], "#17becf") for r in rows])
    for bar, r in zip(bars, rows, strict=True):
        text = "" if base is None else f"{base / r['seconds_per_step']:.1f}x faster" \
            if r["mode"] != "ddp" else "DDP"
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center",
                    va="bottom", fontsize=9, xytext=(0, 2), textcoords="offset points")
    ax.set_ylabel("seconds per iteration (median)")
    ax.set_title(f"Per-iteration time: {_title(result)}")
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, path)


def plot_all(result: dict, out: Path) -> list[Path]:
    out = Path(out)
    return [plot_curves(result, out / "train_curves.png"), plot_steps(result, out / "train_steps.png")]

"""Figures of ``dhc-bench e2e``: one per link bandwidth, the four modes side by side.

Each figure has three panels (AllReduce seconds, bytes per worker, packets per worker); every bar
is labelled with its factor over ``dhc`` at the same bandwidth (``4.2x`` = four times DHC's), so
the gain from compression (ring -> sketch_ring, dense_ina -> dhc) and from aggregating in the
network (ring -> dense_ina, sketch_ring -> dhc) can be read off one picture.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

MODE_COLORS = {"dhc": "#2ca02c", "sketch_ring": "#98df8a", "dense_ina": "#1f77b4",
               "ring": "#7f7f7f"}
PANELS = (("seconds", "AllReduce seconds (median)"), ("wire_bytes", "bytes sent per worker"),
          ("packets_sent", "packets sent per worker"))
DPI = 110


def _slug(bandwidth: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", bandwidth).strip("_")


def by_bandwidth(e2e: dict) -> dict[str, list[dict]]:
    """The rows of an e2e result grouped by their ``bandwidth`` (in run order)."""
    groups: dict[str, list[dict]] = {}
    for row in e2e.get("runs", []):
        if isinstance(row, dict) and "bandwidth" in row and "mode" in row:
            groups.setdefault(str(row["bandwidth"]), []).append(row)
    return groups


def plot_bandwidth(rows: list[dict], bandwidth: str, title: str, path: Path) -> Path:
    """One figure: the modes measured at ``bandwidth``, factors over dhc on the bars."""
    dhc = next((r for r in rows if r["mode"] == "dhc"), None)
    fig, axes = plt.subplots(1, len(PANELS), figsize=(4.4 * len(PANELS), 4.2), squeeze=False)
    modes = [r["mode"] for r in rows]
    for ax, (key, label) in zip(axes[0], PANELS, strict=True):
        values = [float(r.get(key) or 0.0) for r in rows]
        bars = ax.bar(modes, values, color=[MODE_COLORS.get(m, "#17becf") for m in modes])
        base = float(dhc.get(key) or 0.0) if dhc else 0.0
        for bar, value, mode in zip(bars, values, modes, strict=True):
            factor = value / base if base > 0 else None
            text = "DHC" if mode == "dhc" else ("" if factor is None else
                                                f"{factor:.1f}x" if factor >= 1 else f"{factor:.2g}x")
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, value), ha="center",
                        va="bottom", fontsize=9, xytext=(0, 2), textcoords="offset points")
        ax.set_title(label)
        ax.set_yscale("log")
        ax.tick_params(axis="x", rotation=15)
        ax.grid(axis="y", alpha=0.3, which="both")
    fig.suptitle(f"{title}: links at {bandwidth} (factor over DHC on each bar)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def plot_all(e2e: dict, out: Path) -> list[Path]:
    """``e2e_<bandwidth>.png`` in ``out`` for every bandwidth of the result."""
    cfg = e2e.get("config", {})
    title = f"dhc-bench e2e on {cfg.get('topology', '?')}, {cfg.get('workers', '?')} workers, " \
            f"d = {cfg.get('dim', '?'):,}" if isinstance(cfg.get("dim"), int) else "dhc-bench e2e"
    return [plot_bandwidth(rows, bw, title, Path(out) / f"e2e_{_slug(bw)}.png")
            for bw, rows in by_bandwidth(e2e).items()]

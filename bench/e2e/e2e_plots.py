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

from bench.figures import save_figure  # noqa: E402

MODE_COLORS = {"dhc": "#2ca02c", "sketch_ring": "#98df8a", "dense_ina": "#1f77b4",
               "ring": "#7f7f7f"}
PANELS = (("seconds", "AllReduce seconds (median)"), ("wire_bytes", "bytes sent per worker"),
          ("packets_sent", "packets sent per worker"))


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
    return save_figure(fig, path)


def plot_all(e2e: dict, out: Path, prefix: str = "e2e") -> list[Path]:
    """``<prefix>_<bandwidth>.png`` in ``out`` for every bandwidth of the result."""
    cfg = e2e.get("config", {})
    title = f"dhc-bench e2e on {cfg.get('topology', '?')}, {cfg.get('workers', '?')} workers, " \
            f"d = {cfg.get('dim', '?'):,}" if isinstance(cfg.get("dim"), int) else "dhc-bench e2e"
    return [plot_bandwidth(rows, bw, title, Path(out) / f"{prefix}_{_slug(bw)}.png")
            for bw, rows in by_bandwidth(e2e).items()]


PROFILE_TIMES = (("seconds", "measured"), ("cpu_bound_seconds", "CPU demand / cores"),
                 ("machine_cpu_bound_seconds", "machine busy / cores"),
                 ("wire_seconds", "bytes / link rate"))
PROFILE_CPU = (("workers_cpu_seconds", "workers on a CPU"),
               ("workers_runqueue_wait_seconds", "workers waiting for a CPU"),
               ("switch_cpu_seconds", "switch on a CPU"),
               ("switch_runqueue_wait_seconds", "switch waiting for a CPU"))


def _grouped(ax, modes: list[str], rows: list[dict], keys) -> None:
    """Bars of ``keys`` side by side for every mode, values written on them (ms)."""
    width = 0.8 / len(keys)
    for i, (key, label) in enumerate(keys):
        xs = [m + (i - (len(keys) - 1) / 2) * width for m in range(len(modes))]
        vals = [1e3 * float(r.get(key) or 0.0) for r in rows]
        bars = ax.bar(xs, vals, width, label=label)
        for bar, v in zip(bars, vals, strict=True):
            ax.annotate(f"{v:.0f}", (bar.get_x() + bar.get_width() / 2, v), ha="center",
                        va="bottom", fontsize=7, xytext=(0, 1), textcoords="offset points")
    # "mode:io" rows (--host-io) on two lines, so four groups fit under one axis
    ax.set_xticks(range(len(modes)), [m.replace(":", "\n") for m in modes])
    ax.set_ylabel("milliseconds per AllReduce")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.25)      # room for the legend above the bars
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)


def plot_profile(profile: dict, path: Path) -> Path:
    """``dhc-bench e2e-profile``: wall time against CPU and wire bounds, and where the CPU went."""
    modes = list(profile.get("modes", {}))
    rows = [profile["modes"][m] for m in modes]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    _grouped(axes[0], modes, rows, PROFILE_TIMES)
    axes[0].set_title("one AllReduce: time and its lower bounds")
    _grouped(axes[1], modes, rows, PROFILE_CPU)
    axes[1].set_title("scheduler accounting over the AllReduce")
    cfg = profile.get("config", {})
    load = cfg.get("load_average") or [float("nan")]
    fig.suptitle(f"dhc-bench e2e-profile: {cfg.get('topology', '?')}, links at "
                 f"{cfg.get('bandwidth', '?')}, {cfg.get('cores', '?')} cores, "
                 f"load average {load[0]:.1f}")
    return save_figure(fig, path)

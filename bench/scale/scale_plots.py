"""Figures of ``dhc-bench scale`` (``bench/out/scale.json``) as ``bench/out/scale_*.png``.

``python -m bench.scale.scale_plots [--dir bench/out]``; captions in ``docs/scale.md``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from bench.figures import save_figure  # noqa: E402

MODES = ("ring", "sketch_ring", "dense_ina", "dhc")
COLORS = {"ring": "#7f7f7f", "sketch_ring": "#ff7f0e", "dense_ina": "#1f77b4", "dhc": "#2ca02c"}


def _rows(data: dict, arm: str) -> list[dict]:
    return [r for r in data["rows"] if r["arm"] == arm]


def workers_figure(data: dict, path: Path) -> Path | None:
    rows = _rows(data, "workers")
    bws = sorted({r["bw_gbps"] for r in rows})
    if not rows:
        return None
    fig, axes = plt.subplots(1, len(bws), figsize=(4.2 * len(bws), 3.6), sharey=True, squeeze=False)
    for ax, bw in zip(axes[0], bws, strict=True):
        sel = sorted((r for r in rows if r["bw_gbps"] == bw), key=lambda r: r["workers"])
        ns = [r["workers"] for r in sel]
        for m in MODES:
            ax.plot(ns, [r["modes"][m]["network_s"] for r in sel], "o-", color=COLORS[m], label=m)
        ax.plot(ns, [r["modes"]["dhc"]["seconds"] for r in sel], "x--", color=COLORS["dhc"],
                label="dhc + this machine's codec")
        ax.set(xscale="log", yscale="log", xlabel="workers", title=f"{bw:g} Gbit/s")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("seconds per AllReduce")
    axes[0][0].legend(fontsize=7)
    return save_figure(fig, path)


def speedup_figure(data: dict, path: Path) -> Path | None:
    rows = _rows(data, "workers")
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    styles = {10.0: ":", 100.0: "-", 400.0: "--"}
    for bw in sorted({r["bw_gbps"] for r in rows}):
        sel = sorted((r for r in rows if r["bw_gbps"] == bw), key=lambda r: r["workers"])
        for base in ("ring", "sketch_ring", "dense_ina"):
            ax.plot([r["workers"] for r in sel], [r["network_speedup_of_dhc"][base] for r in sel],
                    styles.get(bw, "-"), marker="o", color=COLORS[base], label=f"over {base}, {bw:g} Gbit/s")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set(xscale="log", yscale="log", xlabel="workers", ylabel="DHC speed-up (network time)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    return save_figure(fig, path)


def density_figure(data: dict, path: Path) -> Path | None:
    rows = sorted(_rows(data, "density"), key=lambda r: r["density"])
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    for m in MODES:
        ax.plot([r["density"] for r in rows], [r["modes"][m]["network_s"] for r in rows], "o-",
                color=COLORS[m], label=m)
    ax.set(xscale="log", yscale="log", xlabel="density after top-k (per worker)",
           ylabel="seconds per AllReduce",
           title=f"{rows[0]['workers']} workers, {rows[0]['bw_gbps']:g} Gbit/s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def window_figure(data: dict, path: Path) -> Path | None:
    rows = sorted(_rows(data, "window"), key=lambda r: r["window"])
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    ws = [r["window"] for r in rows]
    for m in ("dense_ina", "dhc"):
        gbps = [8 * r["modes"][m]["bytes_per_worker"] / r["modes"][m]["network_s"] / 1e9 for r in rows]
        ax.plot(ws, gbps, "o-", color=COLORS[m], label=f"{m} (achieved)")
    ax.plot(ws, [min(r["window_rate_gbps"], r["bw_gbps"]) for r in rows], "k--",
            label="min(W x frame / RTT, link)")
    ax.set(xscale="log", yscale="log", xlabel="window W (slots in flight)", ylabel="Gbit/s per worker",
           title=f"{rows[0]['workers']} workers, {rows[0]['bw_gbps']:g} Gbit/s, K = {data.get('lanes', 32)}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def models_figure(data: dict, path: Path) -> Path | None:
    rows = _rows(data, "models")
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    width = 0.2
    for i, m in enumerate(MODES):
        xs = [j + (i - 1.5) * width for j in range(len(rows))]
        ax.bar(xs, [r["iteration_s"][m] for r in rows], width, color=COLORS[m], label=m)
    ax.set_xticks(range(len(rows)), [r["model"] for r in rows])
    ax.set(yscale="log", ylabel="seconds per iteration (compute + AllReduce)",
           title=f"{rows[0]['workers']} workers, {rows[0]['bw_gbps']:g} Gbit/s")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def write_all(directory: Path) -> list[Path]:
    data = json.loads((directory / "scale.json").read_text())
    figures = (("scale_workers.png", workers_figure), ("scale_speedup.png", speedup_figure),
               ("scale_density.png", density_figure), ("scale_window.png", window_figure),
               ("scale_models.png", models_figure))
    return [p for name, fig in figures if (p := fig(data, directory / name)) is not None]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=Path("bench/out"))
    args = ap.parse_args(argv)
    if not (args.dir / "scale.json").exists():
        print(f"{args.dir / 'scale.json'} not found: run `dhc-bench scale --json --out {args.dir}` first")
        return 1
    for p in write_all(args.dir):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

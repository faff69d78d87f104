"""Figures of the benchmarks (matplotlib, headless Agg backend) written to ``bench/out/*.png``.

``python -m bench.codec.plots [--dir bench/out]`` reads ``compare.json`` (running ``dhc-bench compare``
with its defaults first if it is missing) and ``e2e.json`` when the end-to-end benchmark has
written it; ``dhc-bench compare --plots`` writes the same figures straight from its result.
Captions live in docs/results.md.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from bench.e2e import e2e_plots  # noqa: E402
from bench.figures import save_figure  # noqa: E402
from bench.train import train_plots  # noqa: E402

#: values of exactly zero are drawn at this floor on log axes (and labelled as exact)
ERR_FLOOR = 1e-18
MARKERS = {"dense_fp32": ("s", "-", 9), "switchml_int32": ("o", ":", 5), "lhc": ("D", "-", 8),
           "s2reducer": ("v", ":", 5)}
COLORS = {"dense_fp32": "#7f7f7f", "switchml_int32": "#1f77b4", "topk": "#ff7f0e", "lhc": "#d62728",
          "s2reducer": "#9467bd", "thc": "#8c564b", "hgsketch": "#2ca02c"}

Log = Callable[[str], None]


def _color(codec: str) -> str:
    return COLORS.get(codec, "#17becf")


def _grouped(ax, rows: list[dict], datasets: list[str], codecs: list[str], key: str,
             floor: float | None = None) -> None:
    """One group of bars per dataset, one bar per codec (log y)."""
    width = 0.8 / max(1, len(codecs))
    for j, codec in enumerate(codecs):
        ys = []
        for ds in datasets:
            match = [r for r in rows if r["dataset"] == ds and r["codec"] == codec]
            v = float(match[0][key]) if match else math.nan
            ys.append(floor if floor is not None and v == 0 else v)
        xs = [i + (j - (len(codecs) - 1) / 2) * width for i in range(len(datasets))]
        ax.bar(xs, ys, width, label=codec, color=_color(codec))
    ax.set_yscale("log")
    ax.set_xticks(range(len(datasets)))
    ax.set_xticklabels(datasets, rotation=25, ha="right", fontsize=8)
    ax.grid(axis="y", which="major", alpha=0.3)


def plot_bytes(res: dict, path: Path) -> Path:
    rows, codecs = res["results"], res["codecs"]
    datasets = [d["name"] for d in res["datasets"]]
    fig, ax = plt.subplots(figsize=(11, 4.8))
    _grouped(ax, rows, datasets, codecs, "bytes_per_worker")
    n = res["datasets"][0]["workers"] if res["datasets"] else "?"
    ax.set_ylabel("bytes per worker (payload, max of up/down; log)")
    ax.set_xlabel(f"dataset ({n} workers)")
    ax.set_title("Bytes on each worker's link per allreduce")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save_figure(fig, path)


def plot_errors(res: dict, path: Path) -> Path:
    rows, codecs = res["results"], res["codecs"]
    datasets = [d["name"] for d in res["datasets"]]
    fig, axes = plt.subplots(2, 1, figsize=(11, 8), sharex=True)
    _grouped(axes[0], rows, datasets, codecs, "max_abs_err_vs_float64", ERR_FLOOR)
    axes[0].set_ylabel("max |decoded - float64 sum|")
    axes[0].set_title("Error against the exact float64 sum of the inputs")
    _grouped(axes[1], rows, datasets, codecs, "max_abs_err_vs_quantized", ERR_FLOOR)
    axes[1].set_ylabel("max |decoded - sum of encoded values|")
    axes[1].set_title(f"Error against the exact sum of what each codec encoded "
                      f"(bars at {ERR_FLOOR:g} are exactly 0)")
    axes[1].set_xlabel("dataset")
    for ax in axes:
        ax.axhline(ERR_FLOOR, color="k", lw=0.6, ls=":")
    axes[0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save_figure(fig, path)


def plot_times(res: dict, path: Path) -> Path:
    rows, codecs = res["results"], res["codecs"]
    datasets = [d["name"] for d in res["datasets"]]
    fig, axes = plt.subplots(2, 1, figsize=(11, 8), sharex=True)
    _grouped(axes[0], rows, datasets, codecs, "encode_ms", 1e-3)
    axes[0].set_ylabel("encode time, worker 0 (ms, log)")
    axes[0].set_title("Encode time (best of repeats; numpy, one core)")
    _grouped(axes[1], rows, datasets, codecs, "decode_ms", 1e-3)
    axes[1].set_ylabel("decode time, worker 0 (ms, log)")
    axes[1].set_title("Decode time (best of repeats; numpy, one core)")
    axes[1].set_xlabel("dataset")
    axes[0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save_figure(fig, path)


def plot_peeling(res: dict, path: Path) -> Path:
    pe = res["peeling"]
    curve = pe["curve"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for k in sorted({r["k"] for r in curve}):
        pts = sorted((r["m_over_k"], r["success_rate"], r["mean_stuck_fraction"], r["trials"])
                     for r in curve if r["k"] == k)
        label = f"k = {k:,} ({pts[0][3]} trials)"
        axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=label)
        axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", ms=3, label=label)
    for ax in axes:
        ax.axvline(pe["threshold_m_over_k"], color="k", ls="--", lw=1,
                   label=f"threshold r={pe['rows']}: {pe['threshold_m_over_k']}")
        ax.set_xlabel("buckets per element, m / k")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("P(peeling completes)")
    axes[0].set_title("Peeling success vs m/k")
    axes[1].set_ylabel("mean fraction of elements left stuck")
    axes[1].set_title("Size of the stuck set (2-core)")
    axes[0].legend(fontsize=8)
    return save_figure(fig, path)


def plot_scaling(res: dict, path: Path) -> Path:
    rows = res["scaling"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for codec in res["codecs"]:
        pts = sorted((r["workers"], r["bytes_per_worker"]) for r in rows if r["codec"] == codec)
        if pts:
            marker, style, size = MARKERS.get(codec, ("o", "-", 6))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, ls=style, ms=size,
                    label=codec, color=_color(codec))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    if rows:
        ax.set_title(f"Bytes per worker vs N\n(d = {rows[0]['d']:,}, "
                     f"{rows[0]['density']:g} density per worker, random supports)", fontsize=10)
    ax.set_xlabel("workers N")
    ax.set_ylabel("bytes per worker (payload, max of up/down; log)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def plot_lhc_failure(res: dict, path: Path) -> Path:
    rows = sorted(res["lhc_failure"], key=lambda r: r["m_over_union"])
    x = [r["m_over_union"] for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    axes[0].plot(x, [r["lhc_wrong_elements"] for r in rows], "o-", color=_color("lhc"),
                 label="LHC: wrong elements (returned silently)")
    axes[0].plot(x, [r["hg_stuck"] for r in rows], "s--", color=_color("hgsketch"),
                 label="HG-Sketch: stuck elements (sent densely, exact)")
    axes[0].set_ylabel("elements")
    axes[0].set_title(f"Union of {rows[0]['union_nnz']:,} elements" if rows else "")
    axes[1].plot(x, [max(r["lhc_max_abs_err_vs_quantized"], ERR_FLOOR) for r in rows], "o-",
                 color=_color("lhc"), label="LHC")
    axes[1].plot(x, [ERR_FLOOR if r["hg_exact"] else math.inf for r in rows], "s--",
                 color=_color("hgsketch"), label=f"HG-Sketch (exact: drawn at {ERR_FLOOR:g})")
    axes[1].set_yscale("log")
    axes[1].set_ylabel("max |decoded - exact quantized sum|")
    axes[1].set_title("Error of the returned sum")
    for ax in axes:
        ax.axvline(res["peeling"]["threshold_m_over_k"], color="k", ls="--", lw=1,
                   label="peeling threshold 1.222")
        ax.set_xlabel("sketch buckets / union size, m / k")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save_figure(fig, path)


# --- end to end ------------------------------------------------------------------------------

_LABEL_KEYS = ("mode", "codec", "name", "label", "topology")
_PREFERRED = ("seconds", "wall_seconds", "time_s", "elapsed_s", "allreduce_seconds",
              "wire_bytes", "bytes_on_wire", "bytes_per_worker", "packets_sent", "goodput_gbps", "speedup")


def e2e_rows(e2e: dict) -> list[dict]:
    """Rows of an e2e result: ``runs``/``results``/``modes`` as a list of dicts, or a dict of
    label -> metrics.  Each row is labelled by its first of mode/codec/name/label/topology."""
    for key in ("runs", "results", "modes"):
        v = e2e.get(key)
        if isinstance(v, list) and v and all(isinstance(r, dict) for r in v):
            return v
        if isinstance(v, dict) and v and all(isinstance(r, dict) for r in v.values()):
            return [{"label": k, **r} for k, r in v.items()]
    raise ValueError("e2e JSON has no 'runs'/'results'/'modes' rows to plot")


def plot_e2e(e2e: dict, path: Path, max_metrics: int = 3) -> Path:
    """Bar chart per numeric metric (up to ``max_metrics``, preferred names first)."""
    rows = e2e_rows(e2e)
    labels = [next((str(r[k]) for k in _LABEL_KEYS if k in r), f"run {i}") for i, r in enumerate(rows)]
    numeric = [k for k in rows[0] if k not in _LABEL_KEYS and all(
        isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool) for r in rows)]
    metrics = sorted(numeric, key=lambda k: (_PREFERRED.index(k) if k in _PREFERRED else 99))
    metrics = metrics[:max_metrics]
    if not metrics:
        raise ValueError("e2e rows have no numeric metric common to every row")
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 4), squeeze=False)
    for ax, m in zip(axes[0], metrics, strict=True):
        ax.bar(labels, [r[m] for r in rows], color=[_color(lb) for lb in labels])
        ax.set_ylabel(m.replace("_", " "))
        ax.set_xlabel("run")
        ax.set_title(m)
        ax.tick_params(axis="x", rotation=20)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("End to end (dhc-bench e2e)")
    return save_figure(fig, path)


def load_e2e(out: Path) -> dict | None:
    """``out/e2e.json`` if the end-to-end benchmark has written it, else None."""
    path = Path(out) / "e2e.json"
    return json.loads(path.read_text()) if path.exists() else None


FIGURES = {"compare_bytes.png": plot_bytes, "compare_error.png": plot_errors,
           "compare_time.png": plot_times, "peeling.png": plot_peeling,
           "scaling_workers.png": plot_scaling, "lhc_failure.png": plot_lhc_failure}


def write_all(out: Path, compare: dict | None = None, e2e: dict | None = None,
              log: Log | None = None) -> list[Path]:
    """Write every figure into ``out``; ``compare``/``e2e`` default to ``out/<name>.json``.
    A missing e2e result is skipped with a message through ``log``."""
    out = Path(out)
    say = log or (lambda _msg: None)
    if compare is None:
        compare = json.loads((out / "compare.json").read_text())
    written = [fn(compare, out / name) for name, fn in FIGURES.items()]
    if e2e is None:
        e2e = load_e2e(out)
    if e2e is None:
        say(f"e2e plot skipped: {out / 'e2e.json'} not found (run `dhc-bench e2e --out {out}`)")
    else:
        written.append(plot_e2e(e2e, out / "e2e.png"))
        written += e2e_plots.plot_all(e2e, out)
    return written + _optional_figures(out, say)


def _optional_figures(out: Path, say: Log) -> list[Path]:
    """Figures of the benchmarks that need Mininet, for those whose JSON is in ``out``:
    the leaf-spine 2x2 (``e2e_leafspine.json``), the time profile (``e2e-profile.json``) and
    training (``train.json``)."""
    written: list[Path] = []
    for name, draw in (("e2e_leafspine.json", lambda d: e2e_plots.plot_all(d, out, "e2e_leafspine")),
                       ("e2e-profile.json", lambda d: [e2e_plots.plot_profile(d, out / "e2e_profile.png")]),
                       ("train.json", lambda d: train_plots.plot_all(d, out))):
        path = out / name
        if path.exists():
            written += draw(json.loads(path.read_text()))
        else:
            say(f"{name[:-5]} figures skipped: {path} not found")
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=Path("bench/out"),
                    help="where the JSON results are and the PNGs go")
    args = ap.parse_args(argv)
    if not (args.dir / "compare.json").exists():
        print(f"{args.dir / 'compare.json'} not found: running `dhc-bench compare` (defaults)")
        from bench.cli import main as bench_main
        bench_main(["compare", "--out", str(args.dir)])
    for p in write_all(args.dir, log=print):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Figure of ``dhc-bench bmv2 --stories``: ``make run``'s deploy and AllReduce seconds on BMv2 and
on the softswitch, for the README's two topologies, side by side (the K each ran at on the bar).

    python -m bench.softswitch.bmv2_plots bench/out/bmv2.json bench/out/bmv2_stories.png
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from bench.figures import save_figure  # noqa: E402

COLORS = {"softswitch": "#2ca02c", "bmv2": "#1f77b4"}
PANELS = (("deploy_s", "deploy (s)"), ("allreduce_s", "AllReduce (s)"))


def plot_stories(result: dict, path: Path) -> Path:
    """Two panels (deploy, AllReduce); per topology one bar per target, labelled with its K."""
    rows = [r for r in result.get("stories", []) if isinstance(r, dict)]
    if not rows:
        raise ValueError("no 'stories' in the result (run dhc-bench bmv2 --stories)")
    topos = list(dict.fromkeys(r["topology"] for r in rows))
    targets = list(dict.fromkeys(r["target"] for r in rows))
    fig, axes = plt.subplots(1, len(PANELS), figsize=(9, 3.6))
    width = 0.8 / len(targets)
    for ax, (key, label) in zip(axes, PANELS, strict=True):
        for i, target in enumerate(targets):
            for j, topo in enumerate(topos):
                row = next((r for r in rows if r["topology"] == topo and r["target"] == target), None)
                if row is None:
                    continue
                x = j + (i - (len(targets) - 1) / 2) * width
                ax.bar(x, row[key], width, color=COLORS.get(target, "#7f7f7f"),
                       label=target if j == 0 else None)
                k = ",".join(map(str, row["lanes"]))
                ax.annotate(f"K={k}" + ("" if row["exact"] else " NOT EXACT"), (x, row[key]),
                            ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(topos)), [t.removesuffix(".yaml") for t in topos])
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
    fig.suptitle(f"make run: BMv2 vs softswitch (load {result.get('load_before', '?')})", fontsize=10)
    return save_figure(fig, path)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        plot_stories(json.loads(Path(args[0]).read_text()), Path(args[1]))
    except (OSError, ValueError, KeyError) as err:
        print(f"bmv2_plots: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What every benchmark figure shares: the Agg backend (no display), one resolution, and how a
figure is written (laid out, its folder made, saved, closed: pyplot keeps open figures alive)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

#: dots per inch of every figure in bench/out
DPI = 110


def save_figure(fig, path: Path) -> Path:
    """Lay ``fig`` out, write it to ``path`` (its folder made) and close it."""
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path

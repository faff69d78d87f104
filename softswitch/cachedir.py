"""Where the softswitch keeps what it can rebuild: compiled native modules and checked programs."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$SOFTSWITCH_CACHE``, else ``$XDG_CACHE_HOME/softswitch``, else ``~/.cache/softswitch``."""
    d = os.environ.get("SOFTSWITCH_CACHE")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "softswitch"

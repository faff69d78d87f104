"""The real P4 toolchain (p4c, BMv2) for tests: ``$DHC_TOOLCHAIN``, ``<repo>/../shared/toolchain``
or ``/work/shared/toolchain``; its ``p4c-env``/``bmv2-env`` scripts put the tools on PATH."""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def toolchain_dir() -> Path | None:
    candidates = (os.environ.get("DHC_TOOLCHAIN"), ROOT.parent / "shared" / "toolchain",
                  "/work/shared/toolchain")
    for d in candidates:
        if d and (Path(d) / "p4c-env").is_file() and (Path(d) / "bmv2-env").is_file():
            return Path(d)
    return None


@cache
def toolchain_env() -> dict[str, str] | None:
    """The environment with p4c and simple_switch_grpc on PATH, or None (no toolchain here)."""
    d = toolchain_dir()
    if d is None:
        return None
    script = f'eval "$({d}/p4c-env)" >/dev/null 2>&1; eval "$({d}/bmv2-env)" >/dev/null 2>&1; env -0'
    out = subprocess.run(["bash", "-c", script], capture_output=True, timeout=600).stdout
    env = dict(kv.split("=", 1) for kv in out.decode().split("\0") if "=" in kv)
    paths = env.get("PATH", "").split(os.pathsep)
    if not all(any((Path(p) / tool).exists() for p in paths) for tool in ("p4c", "simple_switch_grpc")):
        return None
    return env

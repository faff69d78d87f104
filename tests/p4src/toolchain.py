"""BMv2 for tests: the toolchain ``realp4c`` finds, with ``bmv2-env`` on top of ``p4c-env``."""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path

from tests.p4src import realp4c


@cache
def toolchain_env() -> dict[str, str] | None:
    """The environment with p4c and simple_switch_grpc on PATH, or None (no toolchain here)."""
    env, d = realp4c.p4c_environment(), realp4c.toolchain_dir()
    if env is None or d is None or not (d / "bmv2-env").is_file():
        return None
    script = f'eval "$({d / "bmv2-env"})" >/dev/null 2>&1; env -0'
    out = subprocess.run(["bash", "-c", script], env=env, capture_output=True, timeout=600).stdout
    env = dict(kv.split("=", 1) for kv in out.decode().split("\0") if "=" in kv)
    if not any((Path(p) / "simple_switch_grpc").exists() for p in env.get("PATH", "").split(os.pathsep)):
        return None
    return env

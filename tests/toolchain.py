"""The reference P4 toolchain (p4c, BMv2) for the tests that run the real thing.

It is looked for in ``$DHC_TOOLCHAIN``, then ``<repo>/../shared/toolchain`` (CI clones the
project next to ``shared/``), then ``/work/shared/toolchain``; its ``p4c-env`` and ``bmv2-env``
scripts print ``export`` lines, which are applied to this process's environment so the code
under test (``controller.bmv2_build``, ``topologies.p4switch``) finds ``p4c`` and
``simple_switch_grpc`` on PATH as a user's shell would after ``eval "$(.../p4c-env)"``.
The fixture :func:`bmv2_toolchain` does so for one test (and undoes it after, so other tests
keep the softswitch) and skips, saying why, where the toolchain is absent.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_EXPORT = re.compile(r"^export (\w+)='([^']*)'(.*)$")
TOOLS = ("p4c", "simple_switch_grpc", "simple_switch")


def toolchain_dir() -> Path | None:
    for cand in (os.environ.get("DHC_TOOLCHAIN"), REPO.parent / "shared" / "toolchain",
                 "/work/shared/toolchain"):
        if cand and (Path(cand) / "p4c-env").is_file() and (Path(cand) / "bmv2-env").is_file():
            return Path(cand)
    return None


def _exports(text: str, env: dict[str, str]) -> None:
    for line in text.splitlines():
        m = _EXPORT.match(line.strip())
        if not m:
            continue
        name, value, rest = m.groups()
        if '"$PATH"' in rest or "${LD_LIBRARY_PATH" in rest:   # 'dir':"$PATH" / 'dir'${X:+:$X}
            old = env.get(name, "")
            value = value + (":" + old if old else "")
        env[name] = value


@lru_cache(maxsize=1)
def bmv2_environ() -> tuple[dict[str, str] | None, str]:
    """(the environment with p4c and BMv2 on PATH, "") or (None, why they are not available)."""
    env = dict(os.environ)
    if all(shutil.which(t, path=env.get("PATH")) for t in TOOLS):
        return env, ""
    where = toolchain_dir()
    if where is None:
        return None, ("no P4 toolchain: p4c/simple_switch_grpc not on PATH and no "
                      "../shared/toolchain (or $DHC_TOOLCHAIN) next to the repository")
    for script in ("p4c-env", "bmv2-env"):
        done = subprocess.run(["bash", str(where / script)], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            return None, f"{where / script} failed: {done.stderr.strip()[-300:]}"
        _exports(done.stdout, env)
    missing = [t for t in TOOLS if not shutil.which(t, path=env.get("PATH"))]
    if missing:
        return None, f"toolchain at {where} does not provide {', '.join(missing)}"
    return env, ""


@pytest.fixture
def bmv2_toolchain(monkeypatch):
    """p4c and BMv2 on PATH for this test only (other tests keep choosing the softswitch);
    skips, saying why, where the toolchain is absent."""
    env, why = bmv2_environ()
    if env is None:
        pytest.skip(why)
    for name in ("PATH", "LD_LIBRARY_PATH", "P4C_HOME", "BMV2_HOME"):
        if name in env:
            monkeypatch.setenv(name, env[name])

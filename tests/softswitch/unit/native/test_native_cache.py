"""The module cache: several processes building the same program at once all load one complete
module (atomic rename), and a second load does not compile again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from softswitch.native.build import compiler

ROOT = Path(__file__).resolve().parents[4]
BUILD = """
import sys
from softswitch.native.switch import NativeSwitch
sw = NativeSwitch.load(sys.argv[1])
out = sw.process(1, bytes.fromhex("000000000002000000000001080045000014000000004011000000000000000a000202"))
print(sw.mod.path.name, len(out))
"""


@pytest.mark.skipif(compiler() is None, reason="no C compiler")
def test_concurrent_builds_share_one_module(tmp_path):
    env = dict(os.environ, SOFTSWITCH_CACHE=str(tmp_path), PYTHONPATH=str(ROOT))
    prog = str(ROOT / "tests/softswitch/programs/basic_ipv4.p4")
    procs = [subprocess.Popen([sys.executable, "-c", BUILD, prog], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _o, e in outs]
    names = {o.split()[0] for o, _e in outs}
    assert len(names) == 1
    assert [p.name for p in tmp_path.glob("*.so")] == [names.pop()]
    assert not list(tmp_path.glob(".build-*")), "temporary build directories left behind"
    before = {p: p.stat().st_mtime_ns for p in tmp_path.glob("*.so")}
    again = subprocess.run(
        [sys.executable, "-c", BUILD, prog], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert again.returncode == 0
    assert {p: p.stat().st_mtime_ns for p in tmp_path.glob("*.so")} == before

"""The generated C is clean C: ``cc -Wall`` finds no return-type or other real problem in it.

``-Wmisleading-indentation`` is left out: the generator writes a guard and the statement that
follows it on one line where that reads better, which that warning is about and nothing else.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from softswitch.compiler import compile as compile_p4
from softswitch.native.build import c_source, compiler

ROOT = Path(__file__).resolve().parents[4]
PROGRAMS = ROOT / "tests" / "softswitch" / "programs"
FLAGS = ["-fsyntax-only", "-std=gnu11", "-Wall", "-Werror", "-Wno-unused-function",
         "-Wno-unused-variable", "-Wno-unused-label", "-Wno-unused-but-set-variable",
         "-Wno-misleading-indentation"]

CASES = [(ROOT / "p4src" / "dhc.p4", {"DHC_LANES": "4"}),      # exit inside table actions
         (PROGRAMS / "control_exit.p4", None), (PROGRAMS / "loops.p4", None),
         (PROGRAMS / "varbit_out_params.p4", None)]


@pytest.mark.parametrize(("path", "defines"), CASES, ids=[p.stem for p, _ in CASES])
def test_generated_c_has_no_warnings(path: Path, defines, tmp_path: Path) -> None:
    cc = compiler()
    if cc is None:
        pytest.skip("no C compiler")
    src, _, _ = c_source(compile_p4(path, defines))
    out = tmp_path / f"{path.stem}.c"
    out.write_text(src)
    r = subprocess.run([cc, *FLAGS, str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]

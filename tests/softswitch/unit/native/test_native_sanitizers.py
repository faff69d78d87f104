"""The STF suite on the native backend built with ``-fsanitize=address,undefined``: no report.

Runs in a subprocess with the ASan runtime preloaded (the Python interpreter is not
instrumented); leak detection is off because the interpreter itself keeps memory at exit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from softswitch.native.build import compiler

ROOT = Path(__file__).resolve().parents[4]
SCRIPT = """
import sys
from pathlib import Path
from softswitch.stf import run_stf
from softswitch.native.build import NativeBuildError
bad = 0
for stf in sorted(Path(sys.argv[1]).glob("*.stf")):
    try:
        r = run_stf(str(stf.with_suffix(".p4")), str(stf), backend="native", all_ports=True)
    except NativeBuildError as err:
        print("unsupported", stf.stem, err)
        continue
    print("PASS" if r.passed else "FAIL", stf.stem, r.packets_sent)
    bad += not r.passed
sys.exit(1 if bad else 0)
"""


def _asan_runtime(cc: str) -> str | None:
    out = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    return out if os.path.isabs(out) and os.path.exists(out) else None


@pytest.mark.slow
@pytest.mark.timeout(900)  # compiles every STF program with the sanitizers on a fresh machine
@pytest.mark.skipif(compiler() is None, reason="no C compiler")
def test_stf_suite_has_no_sanitizer_report(tmp_path):
    cc = compiler()
    asan = _asan_runtime(cc)
    if asan is None:
        pytest.skip("the C compiler has no ASan runtime")
    env = dict(os.environ, SOFTSWITCH_SANITIZE="1", LD_PRELOAD=asan,
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:verify_asan_link_order=0",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1", PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "tests/softswitch/programs")], env=env,
                       capture_output=True, text=True, timeout=900, cwd=ROOT)
    report = r.stdout + r.stderr
    assert "AddressSanitizer" not in report and "runtime error:" not in report, report[-4000:]
    assert r.returncode == 0, report[-4000:]
    assert report.count("PASS") >= 15, report

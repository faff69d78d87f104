"""``dhc-ctl serve`` stops on SIGTERM whichever of its threads the kernel hands the signal to.

A process-directed signal goes to any thread that does not block it, gRPC's C threads among
them.  The Python handler then runs only when the main thread next executes bytecode, so a main
thread parked in one untimed wait never stops (a test run once left the service running after
its teardown).  ``tgkill`` aims the signal at a chosen non-main thread, which makes that case
deterministic instead of a matter of the scheduler.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: the tgkill system call's number per machine (Linux)
SYS_TGKILL = {"x86_64": 234, "aarch64": 131}


def tgkill(pid: int, tid: int, sig: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(SYS_TGKILL[platform.machine()], pid, tid, sig) != 0:
        raise OSError(ctypes.get_errno(), f"tgkill({pid}, {tid}, {sig})")


@contextmanager
def serving(switch, tmp_path: Path) -> Iterator[subprocess.Popen]:
    """``dhc-ctl serve`` on the switch, listening; killed by PID if a test left it running."""
    (tmp_path / "secret").write_text("shared-secret")
    topo = ROOT / "topologies" / "single.yaml"
    cmd = [sys.executable, "-m", "controller.cli", "serve", "--topo", str(topo),
           "--switch-addr-map", f"s1={switch.addr}@0", "--listen", "127.0.0.1:0", "--no-pipeline",
           "--state", str(tmp_path / "state.db"), "--secret-file", str(tmp_path / "secret"),
           "--watch-interval", "0.2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT))
    try:
        line = proc.stdout.readline()
        assert line.startswith(b"{"), (line, proc.stderr.read1(4000) if proc.poll() is not None else b"")
        assert json.loads(line)["port"] > 0
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.skipif(platform.machine() not in SYS_TGKILL, reason="tgkill's number is known for "
                    "x86_64 and aarch64 only")
def test_sigterm_to_a_grpc_thread_stops_the_service(switch, tmp_path):
    with serving(switch, tmp_path) as proc:
        tasks = Path(f"/proc/{proc.pid}/task").iterdir()
        others = sorted(int(t.name) for t in tasks if int(t.name) != proc.pid)
        assert others, "the service runs gRPC threads"
        tgkill(proc.pid, others[-1], signal.SIGTERM)
        assert proc.wait(timeout=15) == 0


def test_sigterm_to_the_process_stops_the_service(switch, tmp_path):
    with serving(switch, tmp_path) as proc:
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=15) == 0

"""Real softswitch processes (P4Runtime on loopback, no data ports) for deployment tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from controller.p4rt_client import SwitchAddress

REPO = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SoftswitchProcs:
    """One ``softswitch --no-p4`` process per switch name; ``addresses`` for the controller."""

    def __init__(self, names: list[str], log_dir: Path, cpu_port: int = 0):
        self.procs: dict[str, subprocess.Popen] = {}
        self.addresses: dict[str, SwitchAddress] = {}
        self.logs: dict[str, Path] = {}
        for i, name in enumerate(names):
            port = free_port()
            log = log_dir / f"{name}.log"
            self.logs[name] = log
            cmd = [sys.executable, "-m", "softswitch.cli", "--no-p4", "--device-id", str(i), "-L", "warn",
                   "--", "--grpc-server-addr", f"127.0.0.1:{port}", "--cpu-port", str(cpu_port)]
            with open(log, "wb") as out:
                self.procs[name] = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
            self.addresses[name] = SwitchAddress(name, f"127.0.0.1:{port}", i)
        deadline = time.monotonic() + 30
        for name, addr in self.addresses.items():
            host, port = addr.addr.rsplit(":", 1)
            while True:
                if self.procs[name].poll() is not None:
                    raise RuntimeError(f"softswitch {name} exited: {self.logs[name].read_text()[-2000:]}")
                try:
                    with socket.create_connection((host, int(port)), timeout=0.5):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"softswitch {name} did not listen on {addr.addr}") from None
                    time.sleep(0.1)

    def stop(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.terminate()
        for p in self.procs.values():
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

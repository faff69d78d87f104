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
        self._cpu_port = cpu_port
        self._log_dir = log_dir
        for i, name in enumerate(names):
            self._launch(name, i)
        deadline = time.monotonic() + 30
        for name in names:
            for _attempt in range(3):   # another test may take the port between free_port and bind
                if self._wait_listening(name, deadline):
                    break
                self._launch(name, self.addresses[name].device_id)
            else:
                raise RuntimeError(f"softswitch {name} could not bind a port: "
                                   f"{self.logs[name].read_text()[-2000:]}")

    def _launch(self, name: str, device_id: int) -> None:
        port = free_port()
        log = self._log_dir / f"{name}.log"
        self.logs[name] = log
        cmd = [sys.executable, "-m", "softswitch.cli", "--no-p4", "--device-id", str(device_id), "-L", "warn",
               "--", "--grpc-server-addr", f"127.0.0.1:{port}", "--cpu-port", str(self._cpu_port)]
        with open(log, "wb") as out:
            self.procs[name] = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
        self.addresses[name] = SwitchAddress(name, f"127.0.0.1:{port}", device_id)

    def _wait_listening(self, name: str, deadline: float) -> bool:
        """True once ``name`` listens; False if it exited because its port was taken."""
        host, port = self.addresses[name].addr.rsplit(":", 1)
        while True:
            if self.procs[name].poll() is not None:
                text = self.logs[name].read_text()
                if "Failed to bind" in text or "cannot bind" in text:
                    return False
                raise RuntimeError(f"softswitch {name} exited: {text[-2000:]}")
            try:
                with socket.create_connection((host, int(port)), timeout=0.5):
                    return True
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"softswitch {name} did not listen on {host}:{port}") from None
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

"""Mininet switch class that runs a P4 target: the softswitch, or BMv2's simple_switch_grpc.

Both targets take the same command line (see ``softswitch.cli``), so the class
only chooses the executable and what goes in the program slot: P4 source for
the softswitch, p4c's BMv2 JSON for simple_switch_grpc (or ``--no-p4`` when the
controller pushes the pipeline).  Each switch gets its own device id and gRPC
port; ``start`` returns once the P4Runtime port answers.

There is no OVS kernel datapath here: build the net with ``switch=P4Switch``
and ``controller=None`` so no Mininet default controller/switch is needed.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from topologies.mininet_env import ensure_mininet

ensure_mininet()
from mininet.node import Switch  # noqa: E402 - needs ensure_mininet() first

from softswitch.target.ports import run_in_netns, set_offloads  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
_device_ids = itertools.count(0)
_id_lock = threading.Lock()


def free_tcp_port() -> int:
    """A TCP port nobody listens on right now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def softswitch_command() -> list[str]:
    exe = shutil.which("softswitch")
    return [exe] if exe else [sys.executable, "-m", "softswitch.cli"]


class P4Switch(Switch):
    """A Mininet switch backed by a P4Runtime-controlled P4 target process."""

    def __init__(self, name: str, p4_program: str | None = None, bmv2_json: str | None = None,
                 target: str = "softswitch", device_id: int | None = None, grpc_port: int | None = None,
                 cpu_port: int = 255, log_dir: str | None = None, log_level: str = "warn",
                 pcap_dir: str | None = None, p4_defines: dict[str, str] | None = None,
                 start_timeout: float = 60.0, **kwargs):
        if target not in ("softswitch", "bmv2"):
            raise ValueError(f"P4Switch {name}: target must be 'softswitch' or 'bmv2', not {target!r}")
        if target == "bmv2" and shutil.which("simple_switch_grpc") is None:
            raise FileNotFoundError(f"P4Switch {name}: target 'bmv2' asked for, but simple_switch_grpc "
                                    "is not on PATH")
        if target == "softswitch" and p4_program is not None and not Path(p4_program).is_file():
            raise FileNotFoundError(f"P4Switch {name}: P4 program {p4_program} does not exist")
        super().__init__(name, **kwargs)
        self.target = target
        self.p4_program = p4_program
        self.bmv2_json = bmv2_json
        if device_id is None:
            with _id_lock:
                device_id = next(_device_ids)
        self.device_id = device_id
        self.grpc_port = grpc_port or free_tcp_port()
        self.cpu_port = cpu_port
        self.log_dir = Path(log_dir) if log_dir else Path("/tmp") / f"p4switch-{os.getpid()}"
        self.log_level = log_level
        self.pcap_dir = pcap_dir
        self.p4_defines = p4_defines or {}
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self.log_path: Path | None = None

    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def command(self) -> list[str]:
        """The target's command line: identical flags for both targets."""
        cmd = softswitch_command() if self.target == "softswitch" else [shutil.which("simple_switch_grpc")]
        cmd += ["--device-id", str(self.device_id), "--log-level", self.log_level]
        for intf in self.intfList():
            if intf.name == "lo":
                continue
            cmd += ["-i", f"{self.ports[intf]}@{intf.name}"]
        if self.pcap_dir:
            cmd += ["--pcap", self.pcap_dir]
        if self.target == "softswitch":
            for k, v in self.p4_defines.items():
                cmd += ["--p4-define", f"{k}={v}"]
            cmd += [self.p4_program] if self.p4_program else ["--no-p4"]
        else:
            cmd += ["--thrift-port", str(free_tcp_port())]
            cmd += [self.bmv2_json] if self.bmv2_json else ["--no-p4"]
        cmd += ["--", "--grpc-server-addr", f"0.0.0.0:{self.grpc_port}", "--cpu-port", str(self.cpu_port)]
        return cmd

    def _quiet_offloads(self) -> None:
        """Turn off checksum/segmentation offloads on both ends of every link (see set_offloads)."""
        for intf in self.intfList():
            if intf.name == "lo" or intf.link is None:
                continue
            set_offloads(intf.name, False)
            peer = intf.link.intf2 if intf.link.intf1 is intf else intf.link.intf1
            if peer.node.inNamespace:
                run_in_netns(peer.node.pid, set_offloads, peer.name, False)
            else:
                set_offloads(peer.name, False)

    def start(self, controllers) -> None:  # noqa: ARG002 - P4 switches have no OpenFlow controller
        self._quiet_offloads()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.log_dir / f"{self.name}.log"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"P4Switch {self.name}: {self.target} exited with code "
                                   f"{self.proc.returncode}; log {self.log_path}:\n{self.read_log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.grpc_port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop_process()
        raise TimeoutError(f"P4Switch {self.name}: gRPC port {self.grpc_port} did not answer within "
                           f"{self.start_timeout:.0f} s; log {self.log_path}:\n{self.read_log()}")

    def read_log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:] if self.log_path else ""
        except OSError:
            return ""

    def stop_process(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 - Mininet's signature
        self.stop_process()
        super().stop(deleteIntfs)

"""Throw-away network labs for root tests: one namespace + veth pair per switch port.

Everything is named uniquely per lab and removed on ``close()`` (also on failure),
and the switch process started in the lab is stopped with it.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from softswitch.target.ports import ETH_P_ALL, run_in_netns, set_offloads

REPO = Path(__file__).resolve().parents[3]
_serial = itertools.count()


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def _no_ipv6(ifname: str) -> None:
    Path(f"/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6").write_text("1")


@dataclass
class HostPort:
    """The host end of one switch port: a namespace holding one veth end, and a raw socket on it."""

    ns: str
    ifname: str
    sw_ifname: str
    mac: str
    ip: str
    sock: socket.socket | None = None

    def send(self, frame: bytes) -> None:
        self.sock.send(frame)

    def recv_until(self, pred, timeout: float = 5.0) -> bytes | None:
        """First received frame for which ``pred(frame)`` holds, or None after ``timeout``."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            self.sock.settimeout(left)
            try:
                data, addr = self.sock.recvfrom(65535)
            except TimeoutError:
                return None
            if addr[2] != 4 and pred(data):  # skip our own transmissions (PACKET_OUTGOING)
                return data
        return None

    def drain(self) -> None:
        self.sock.settimeout(0.05)
        try:
            while True:
                self.sock.recv(65535)
        except TimeoutError:
            pass


@dataclass
class Lab:
    nports: int
    tag: str = field(default_factory=lambda: f"r{os.getpid() % 100000}{next(_serial)}")
    hosts: dict[int, HostPort] = field(default_factory=dict)
    proc: subprocess.Popen | None = None
    log: Path | None = None

    def __enter__(self) -> Lab:
        try:
            for port in range(1, self.nports + 1):
                ns, h, s = f"{self.tag}n{port}", f"{self.tag}h{port}", f"{self.tag}s{port}"
                ip("netns", "add", ns)
                hp = HostPort(ns, h, s, f"02:00:00:00:00:{port:02x}", f"10.0.0.{port}")
                self.hosts[port] = hp
                ip("link", "add", s, "type", "veth", "peer", "name", h)
                _no_ipv6(s)
                ip("link", "set", h, "netns", ns)
                ip("link", "set", s, "up")
                set_offloads(s, False)
                nspath = f"/run/netns/{ns}"
                run_in_netns(nspath, _no_ipv6, h)
                ip("-n", ns, "link", "set", h, "address", hp.mac, "up")
                ip("-n", ns, "addr", "add", f"{hp.ip}/24", "dev", h)
                run_in_netns(nspath, set_offloads, h, False)
                hp.sock = run_in_netns(nspath, _raw_socket, h)
        except BaseException:
            self.close()
            raise
        return self

    def start_switch(self, program: Path, grpc_port: int, cpu_port: int = 255, extra: list[str] | None = None,
                     timeout: float = 60) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "softswitch.cli", "--log-level", "info"]
        for port, hp in self.hosts.items():
            cmd += ["-i", f"{port}@{hp.sw_ifname}"]
        cmd += [str(program), *(extra or []), "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}",
                "--cpu-port", str(cpu_port)]
        self.log = Path(f"/tmp/{self.tag}-switch.log")
        env = dict(os.environ, PYTHONPATH=str(REPO))
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=REPO, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"softswitch exited ({self.proc.returncode}):\n{self.log.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", grpc_port), timeout=0.5).close()
                return self.proc
            except OSError:
                time.sleep(0.1)
        raise TimeoutError(f"softswitch did not open its gRPC port:\n{self.log.read_text()}")

    def stop_switch(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        rc, self.proc = self.proc.returncode, None
        return rc

    def close(self) -> None:
        self.stop_switch()
        if self.log is not None:
            self.log.unlink(missing_ok=True)
        for hp in self.hosts.values():
            if hp.sock is not None:
                hp.sock.close()
            subprocess.run(["ip", "link", "del", hp.sw_ifname], capture_output=True, timeout=30)
            subprocess.run(["ip", "netns", "del", hp.ns], capture_output=True, timeout=30)
        self.hosts.clear()

    def __exit__(self, *exc) -> None:
        self.close()


def _raw_socket(ifname: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    return s

"""The lab of ``dhc-bench softswitch-ports``: two network namespaces, each holding the host end of
a veth pair whose other end is a switch port, raw sockets on the host ends, and the softswitch
processes started on the ports; everything removed by name and PID on exit."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from softswitch.target.ports import ETH_P_ALL, ignore_outgoing, run_in_netns, set_offloads

ROOT = Path(__file__).resolve().parents[2]
#: the two workers: (name, IPv4, MAC); worker i hangs on switch port i + 1
WORKERS = (("wa", "10.0.0.1", "02:00:00:00:00:01"), ("wb", "10.0.0.2", "02:00:00:00:00:02"))


def ip(*args: str, check: bool = True) -> None:
    subprocess.run(["ip", *args], check=check, capture_output=True, timeout=30)


@dataclass
class Lab:
    """Two namespaces, each with the host end of a veth whose other end becomes switch port 1 / 2,
    a raw socket on each host end, and the switch processes started; all removed on exit."""

    tag: str = field(default_factory=lambda: f"b{os.getpid() % 100000}")
    created: list[tuple[str, str]] = field(default_factory=list)
    socks: list[socket.socket] = field(default_factory=list)
    procs: list[subprocess.Popen] = field(default_factory=list)

    def __enter__(self) -> Lab:
        try:
            for p in (1, 2):
                ns, h, s = f"{self.tag}n{p}", f"{self.tag}h{p}", f"{self.tag}s{p}"
                ip("netns", "add", ns)
                self.created.append((ns, s))
                ip("link", "add", s, "type", "veth", "peer", "name", h)
                Path(f"/proc/sys/net/ipv6/conf/{s}/disable_ipv6").write_text("1")
                ip("link", "set", h, "netns", ns)
                ip("link", "set", s, "up")
                # the host end has the MAC of the worker on that port, and no IP address: only the
                # raw socket speaks there, the kernel never answers (no ICMP unreachable to the switch)
                ip("-n", ns, "link", "set", h, "address", WORKERS[p - 1][2], "up")
                set_offloads(s, False)

                def mk(ifname: str = h) -> socket.socket:
                    Path(f"/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6").write_text("1")
                    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                    sock.bind((ifname, 0))
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
                    ignore_outgoing(sock)  # the generator reads only what the switch sends
                    return sock

                self.socks.append(run_in_netns(f"/run/netns/{ns}", mk))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def start_switch(self, program_args: list[str], name: str) -> tuple[subprocess.Popen, int, Path]:
        """A softswitch process on the two ports: (process, P4Runtime port, log file)."""
        grpc_port = free_port()
        log = Path(f"/tmp/{self.tag}-bench-{name}.log")
        cmd = [sys.executable, "-m", "softswitch.cli", "--log-level", "warn", "-i", f"1@{self.tag}s1",
               "-i", f"2@{self.tag}s2", *program_args, "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                    env=dict(os.environ, PYTHONPATH=str(ROOT)))
        self.procs.append(proc)
        return proc, grpc_port, log

    def drain(self) -> None:
        """Drop whatever the sockets hold (e.g. frames of the previous measurement)."""
        for s in self.socks:
            while select.select([s], [], [], 0)[0]:
                s.recv(65535)

    @staticmethod
    def stop(proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __exit__(self, *exc) -> None:
        for proc in self.procs:
            self.stop(proc)
        for s in self.socks:
            s.close()
        for ns, s in self.created:
            ip("link", "del", s, check=False)
            ip("netns", "del", ns, check=False)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(grpc_port: int, proc: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    """Return once the switch process accepts connections on its P4Runtime port."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"softswitch exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", grpc_port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError("softswitch did not open its P4Runtime port") from None
            time.sleep(0.05)

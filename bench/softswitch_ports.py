"""Frames per second through the softswitch process over real veth ports (needs root).

Two namespaces, each holding one end of a veth pair whose other end is a switch
port; the switch runs ``basic_ipv4.p4`` with one route installed over
P4Runtime.  The sender keeps at most ``--window`` frames in flight (sent but not
yet received), so nothing is lost to full socket buffers and the rate is the
switch's lossless forwarding rate.  Measured side by side in the same run: the
same frames through ``Switch.process()`` in-process, so the ratio shows what the
port I/O and the process boundary cost.  Every received frame is checked (TTL
decremented, destination MAC rewritten).
"""

from __future__ import annotations

import argparse
import os
import select
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "tests" / "softswitch" / "programs" / "basic_ipv4.p4"
DST_MAC = 0x020000000002


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=5000, help="frames to forward (default 5000)")
    parser.add_argument("--frame-size", type=int, default=128, help="frame length in bytes (default 128)")
    parser.add_argument("--window", type=int, default=64, help="frames in flight at most (default 64)")
    parser.add_argument("--runs", type=int, default=3, help="measurements of each; medians reported")
    parser.add_argument("--program", type=Path, default=PROGRAM, help="P4 program (basic_ipv4.p4 interface)")


def _ip(*args: str, check: bool = True) -> None:
    subprocess.run(["ip", *args], check=check, capture_output=True, timeout=30)


def _frames(n: int, size: int) -> list[bytes]:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    base = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:fe") / IP(src="10.0.1.1", dst="10.0.2.2", ttl=64)
    out = []
    for i in range(n):
        pkt = base / UDP(sport=1000, dport=2000) / i.to_bytes(4, "big")
        pad = size - len(pkt)
        out.append(bytes(pkt / bytes(max(0, pad))))
    return out


def _in_process_switch(program: Path, frames: list[bytes]):
    from softswitch import Switch

    sw = Switch.load(str(program), defines={}, include_dirs=[], cpu_port=None)
    sw.table_add("MyIngress.ipv4_lpm", "MyIngress.ipv4_forward", {"hdr.ipv4.dstAddr": _lpm(0x0A000202, 32)},
                 {"dstAddr": DST_MAC, "port": 2})
    for f in frames[:500]:  # warm-up: first packets pay for lazy set-up, as in the switch process
        sw.process(1, f)
    return sw


def _in_process_rate(sw, frames: list[bytes]) -> float:
    t0 = time.perf_counter()
    for f in frames:
        out = sw.process(1, f)
        if len(out) != 1 or out[0][0] != 2:
            raise RuntimeError(f"in-process pipeline did not forward a frame to port 2: {out!r}")
    return len(frames) / (time.perf_counter() - t0)


def _lpm(value: int, plen: int):
    from softswitch.api import Lpm

    return Lpm(value, plen)


def run(args: argparse.Namespace) -> dict:
    if os.geteuid() != 0:
        raise PermissionError("softswitch-ports needs root (network namespaces and veth pairs)")
    from softswitch.ports import ETH_P_ALL, run_in_netns, set_offloads

    frames = _frames(args.frames, args.frame_size)
    local = _in_process_switch(args.program, frames)
    inproc: list[float] = []
    ports: list[float] = []
    received = 0

    tag = f"b{os.getpid() % 100000}"
    created: list[tuple[str, str]] = []
    proc: subprocess.Popen | None = None
    socks: list[socket.socket] = []
    try:
        for p in (1, 2):
            ns, h, s = f"{tag}n{p}", f"{tag}h{p}", f"{tag}s{p}"
            _ip("netns", "add", ns)
            created.append((ns, s))
            _ip("link", "add", s, "type", "veth", "peer", "name", h)
            Path(f"/proc/sys/net/ipv6/conf/{s}/disable_ipv6").write_text("1")
            _ip("link", "set", h, "netns", ns)
            _ip("link", "set", s, "up")
            _ip("-n", ns, "link", "set", h, "up")
            set_offloads(s, False)

            def mk(ifname: str = h) -> socket.socket:
                Path(f"/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6").write_text("1")
                sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                sock.bind((ifname, 0))
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
                return sock

            socks.append(run_in_netns(f"/run/netns/{ns}", mk))
        grpc_port = _free_port()
        log = Path(f"/tmp/{tag}-bench-switch.log")
        cmd = [sys.executable, "-m", "softswitch.cli", "--log-level", "warn", "-i", f"1@{tag}s1",
               "-i", f"2@{tag}s2", str(args.program), "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                    env=dict(os.environ, PYTHONPATH=str(ROOT)))
        _install_route(grpc_port, args.program, proc, log)
        _blast(socks[0], socks[1], frames[:300], args.window)  # warm-up, untimed
        switch_cpu = 0.0
        for _ in range(args.runs):  # alternate the two, so load from elsewhere hits both alike
            inproc.append(_in_process_rate(local, frames))
            before = _cpu_seconds(proc.pid)
            rate, got = _blast(socks[0], socks[1], frames, args.window)
            switch_cpu += _cpu_seconds(proc.pid) - before
            ports.append(rate)
            received += got
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for s in socks:
            s.close()
        for ns, s in created:
            _ip("link", "del", s, check=False)
            _ip("netns", "del", ns, check=False)
    return {
        "program": args.program.name,
        "frames": len(frames),
        "frame_bytes": args.frame_size,
        "window": args.window,
        "runs": args.runs,
        "received": received,
        "lost": args.runs * len(frames) - received,
        "ports_frames_per_s": round(statistics.median(ports), 1),
        "in_process_frames_per_s": round(statistics.median(inproc), 1),
        "ports_over_in_process": round(statistics.median(p / i for p, i in zip(ports, inproc, strict=True)), 3),
        # CPU time the switch process used per second of forwarding (1.0 = one core busy):
        # near 1 means the switch, not the traffic generator, is the bottleneck
        "switch_cpu_share": round(switch_cpu / sum(len(frames) / r for r in ports), 2),
        "ports_runs": [round(x, 1) for x in ports],
        "in_process_runs": [round(x, 1) for x in inproc],
    }


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _install_route(grpc_port: int, program: Path, proc: subprocess.Popen, log: Path) -> None:
    """Wait for the switch's P4Runtime port, become primary, add 10.0.2.2/32 -> port 2."""
    import grpc
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

    from softswitch.server.p4info_index import encode_bytes

    channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"softswitch exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            grpc.channel_ready_future(channel).result(timeout=1)
            break
        except grpc.FutureTimeoutError:
            if time.monotonic() > deadline:
                raise TimeoutError("softswitch did not open its P4Runtime port") from None
    stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
    arb = p4runtime_pb2.StreamMessageRequest()
    arb.arbitration.election_id.low = 1
    closing = threading.Event()

    def requests():
        yield arb
        closing.wait()

    stream = stub.StreamChannel(requests())
    next(stream)  # the arbitration reply: we are primary
    p4info = stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest()).config.p4info
    table = next(t for t in p4info.tables if t.preamble.name == "MyIngress.ipv4_lpm")
    action = next(a for a in p4info.actions if a.preamble.name == "MyIngress.ipv4_forward")
    req = p4runtime_pb2.WriteRequest()
    req.election_id.low = 1
    te = req.updates.add(type=p4runtime_pb2.Update.INSERT).entity.table_entry
    te.table_id = table.preamble.id
    fm = te.match.add(field_id=table.match_fields[0].id)
    fm.lpm.value, fm.lpm.prefix_len = encode_bytes(0x0A000202), 32
    te.action.action.action_id = action.preamble.id
    params = {p.name: p.id for p in action.params}
    te.action.action.params.add(param_id=params["dstAddr"], value=encode_bytes(DST_MAC))
    te.action.action.params.add(param_id=params["port"], value=encode_bytes(2))
    stub.Write(req)
    closing.set()
    stream.cancel()
    channel.close()


def _blast(tx: socket.socket, rx: socket.socket, frames: list[bytes], window: int) -> tuple[float, int]:
    """Send with at most ``window`` frames in flight; return (frames/s, frames received).

    One thread does both ends (top the window up, then drain what arrived), so the
    generator costs no thread hand-offs and the switch is what limits the rate.
    """
    mac = DST_MAC.to_bytes(6, "big")
    poller = select.poll()
    poller.register(rx.fileno(), select.POLLIN)
    rx.setblocking(False)
    sent = received = 0
    t0 = time.perf_counter()
    t_last = t0
    idle_since = t0
    while received < len(frames):
        while sent < len(frames) and sent - received < window:
            tx.send(frames[sent])
            sent += 1
        if not poller.poll(1000):
            if time.perf_counter() - idle_since > 5:
                break  # frames were lost; report what came through
            continue
        while True:
            try:
                data, addr = rx.recvfrom(65535)
            except BlockingIOError:
                break
            if addr[2] == 4 or len(data) < 34 or data[12:14] != b"\x08\x00":
                continue
            if data[:6] != mac or data[22] != 63:
                raise RuntimeError("a forwarded frame was not rewritten (dst MAC / TTL)")
            received += 1
        t_last = idle_since = time.perf_counter()
    rx.setblocking(True)
    if received == 0:
        raise RuntimeError("no frame came through the switch")
    return received / (t_last - t0), received

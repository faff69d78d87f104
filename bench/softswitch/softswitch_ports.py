"""Frames per second through the softswitch process over real veth ports (needs root).

Two namespaces, each holding one end of a veth pair whose other end is a switch
port.  Two measurements in one invocation, on the same veths:

* ``basic_ipv4.p4`` (top-level keys): one route installed over P4Runtime.  The
  sender keeps at most ``--window`` frames in flight (sent but not yet received),
  so nothing is lost to full socket buffers and the rate is the switch's lossless
  forwarding rate.  Every received frame is checked (TTL decremented, destination
  MAC rewritten).
* ``dhc.p4`` (the ``dhc`` section, ``bench.softswitch.ports_dhc``): K lanes per
  packet, the switch programmed by the controller's ``deploy`` for a one-switch
  topology with one two-worker job, every RESULT checked.

The namespaces, veths and switch processes are ``bench.softswitch.ports_lab``'s.

Measured side by side in the same run, for both: the same frames through
``Switch.process()`` in-process, so the ratio shows what the port I/O and the
process boundary cost.
"""

from __future__ import annotations

import argparse
import os
import select
import socket
import statistics
import time
from pathlib import Path

from bench.softswitch.ports_dhc import DHC_LANE_COUNTS, run_dhc
from bench.softswitch.ports_lab import ROOT, Lab, cpu_seconds, wait_ready

PROGRAM = ROOT / "tests" / "softswitch" / "programs" / "basic_ipv4.p4"
DST_MAC = 0x020000000002


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=5000, help="frames to forward (default 5000)")
    parser.add_argument("--frame-size", type=int, default=128, help="frame length in bytes (default 128)")
    parser.add_argument("--window", type=int, default=64, help="frames in flight at most (default 64)")
    parser.add_argument("--runs", type=int, default=3, help="measurements of each; medians reported")
    parser.add_argument("--program", type=Path, default=PROGRAM, help="P4 program (basic_ipv4.p4 interface)")
    parser.add_argument("--lanes", type=int, default=32, choices=DHC_LANE_COUNTS,
                        help="dhc.p4: K, lanes per packet (default 32)")
    parser.add_argument(
        "--chunks",
        type=int,
        default=2500,
        help="dhc.p4: chunks per run; each is 2 DATA frames in and 2 RESULT frames out (default 2500)",
    )
    parser.add_argument("--dhc-window", type=int, default=64,
                        help="dhc.p4: the job's window W, chunks in flight at most (default 64)")


def _check_args(args: argparse.Namespace) -> None:
    from controller.topology import DEFAULT_REGISTER_SLOTS

    for name in ("frames", "frame_size", "window", "runs", "chunks", "dhc_window"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if args.lanes not in DHC_LANE_COUNTS:
        raise ValueError(f"--lanes {args.lanes}: dhc.p4 compiles for {', '.join(map(str, DHC_LANE_COUNTS))}")
    if 2 * args.dhc_window > DEFAULT_REGISTER_SLOTS:
        raise ValueError(f"--dhc-window {args.dhc_window}: the job needs 2W register cells, the pool has "
                         f"{DEFAULT_REGISTER_SLOTS}")




def _frames(n: int, size: int) -> list[bytes]:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    base = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:fe") / IP(
        src="10.0.1.1", dst="10.0.2.2", ttl=64
    )
    out = []
    for i in range(n):
        pkt = base / UDP(sport=1000, dport=2000) / i.to_bytes(4, "big")
        pad = size - len(pkt)
        out.append(bytes(pkt / bytes(max(0, pad))))
    return out


def _in_process_switch(program: Path, frames: list[bytes]):
    from softswitch import Switch
    from softswitch.api import Lpm

    sw = Switch.load(str(program), defines={}, include_dirs=[], cpu_port=None)
    sw.table_add("MyIngress.ipv4_lpm", "MyIngress.ipv4_forward", {"hdr.ipv4.dstAddr": Lpm(0x0A000202, 32)},
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



def run(args: argparse.Namespace) -> dict:
    if os.geteuid() != 0:
        raise PermissionError("softswitch-ports needs root (network namespaces and veth pairs)")
    _check_args(args)
    with Lab() as lab:
        result = _run_basic(lab, args)
        lab.drain()
        result["dhc"] = run_dhc(lab, args)
    return result


def _run_basic(lab: Lab, args: argparse.Namespace) -> dict:
    frames = _frames(args.frames, args.frame_size)
    local = _in_process_switch(args.program, frames)
    inproc: list[float] = []
    ports: list[float] = []
    received = 0
    proc, grpc_port, log = lab.start_switch([str(args.program)], "basic")
    wait_ready(grpc_port, proc, log)
    _install_route(grpc_port)
    _blast(lab.socks[0], lab.socks[1], frames[:300], args.window)  # warm-up, untimed
    switch_cpu = 0.0
    for _ in range(args.runs):  # alternate the two, so load from elsewhere hits both alike
        inproc.append(_in_process_rate(local, frames))
        before = cpu_seconds(proc.pid)
        rate, got = _blast(lab.socks[0], lab.socks[1], frames, args.window)
        switch_cpu += cpu_seconds(proc.pid) - before
        ports.append(rate)
        received += got
    lab.stop(proc)
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
        "ports_over_in_process": round(
            statistics.median(p / i for p, i in zip(ports, inproc, strict=True)), 3
        ),
        # CPU time the switch process used per second of forwarding (1.0 = one core busy):
        # near 1 means the switch, not the traffic generator, is the bottleneck
        "switch_cpu_share": round(switch_cpu / sum(len(frames) / r for r in ports), 2),
        "ports_runs": [round(x, 1) for x in ports],
        "in_process_runs": [round(x, 1) for x in inproc],
    }



def _install_route(grpc_port: int) -> None:
    """Become primary over P4Runtime (the controller's client) and add 10.0.2.2/32 -> port 2."""
    from p4.v1 import p4runtime_pb2

    from controller.intent import MatchField, TableEntry
    from controller.p4rt_client import PendingUpdate, SwitchAddress, SwitchConnection

    conn = SwitchConnection(SwitchAddress("basic", f"127.0.0.1:{grpc_port}"), timeout=30)
    conn.connect()
    try:
        entry = TableEntry("MyIngress.ipv4_lpm", (MatchField("hdr.ipv4.dstAddr", 0x0A000202, 32),),
                           "MyIngress.ipv4_forward", (("dstAddr", DST_MAC), ("port", 2)))
        proto = conn.load_p4info().entry_to_proto(entry)
        conn.write([PendingUpdate(p4runtime_pb2.Update.INSERT, p4runtime_pb2.Entity(table_entry=proto),
                                  entry.describe())])
    finally:
        conn.close()


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


"""Packets per second through ``Switch.process()`` of the software target.

Two programs, measured side by side in one run: basic IPv4 forwarding (one LPM
lookup, checksum verify + update) and a program doing 32 register
read-modify-writes per packet (the shape of a DHC aggregation step).  Each is
timed over ``--packets`` frames, ``--runs`` times; the median is reported.
Every output is checked (port and a recomputed field), so a pipeline that
silently drops or mangles packets cannot look fast.
"""

from __future__ import annotations

import argparse
import statistics
import struct
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASIC = ROOT / "tests" / "softswitch" / "programs" / "basic_ipv4.p4"
RMW32 = ROOT / "bench" / "programs" / "register_rmw32.p4"
LANES = 32


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--packets", type=int, default=3000, help="frames per run (default 3000)")
    parser.add_argument("--runs", type=int, default=3, help="runs per program; the median is reported")


def _csum16(data: bytes) -> int:
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _ipv4_frame(i: int) -> bytes:
    dst = 0x0A000000 | (i & 0xFFFF)  # 10.0.x.y: all hit the 10/8 route
    hdr = struct.pack("!BBHHHBBHII", 0x45, 0, 28, i & 0xFFFF, 0, 64, 17, 0, 0x0A090909, dst)
    hdr = hdr[:10] + _csum16(hdr).to_bytes(2, "big") + hdr[12:]
    return bytes.fromhex("000000000a0a000000000b0b0800") + hdr + bytes(8)


def _load(path: Path):
    from softswitch import Switch

    return Switch.load(str(path), defines={}, include_dirs=[], cpu_port=None)


def _setup_basic() -> tuple[object, list[bytes], Callable[[int, list], None]]:
    from softswitch.api import Lpm

    sw = _load(BASIC)
    sw.table_add("MyIngress.ipv4_lpm", "MyIngress.ipv4_forward",
                 {"hdr.ipv4.dstAddr": Lpm(0x0A000000, 8)}, {"dstAddr": 0x0202, "port": 2})

    def check(i: int, out: list) -> None:
        if len(out) != 1 or out[0][0] != 2 or out[0][1][22] != 63:
            raise RuntimeError(
                f"basic_ipv4: packet {i} gave {out!r}, expected one frame on port 2 with TTL 63"
            )

    return sw, [_ipv4_frame(i) for i in range(256)], check


def _setup_rmw() -> tuple[object, list[bytes], Callable[[int, list], None]]:
    sw = _load(RMW32)
    frames = [bytes(14) + struct.pack("!I", i % 8) + struct.pack(f"!{LANES}I", *([1] * LANES))
              for i in range(8)]
    seen = [0] * 8

    def check(i: int, out: list) -> None:
        slot = i % 8
        seen[slot] += 1
        if len(out) != 1 or out[0][0] != 1:
            raise RuntimeError(f"register_rmw32: packet {i} gave {out!r}, expected one frame on port 1")
        lanes = struct.unpack(f"!{LANES}I", out[0][1][18:18 + 4 * LANES])
        if set(lanes) != {seen[slot]}:
            raise RuntimeError(f"register_rmw32: packet {i} lanes {lanes[:4]}..., expected all {seen[slot]}")
    return sw, frames, check


def _measure(setup: Callable, packets: int) -> tuple[float, int]:
    """One run on a fresh switch: (packets/s, packets checked)."""
    sw, frames, check = setup()
    outs = []
    n = len(frames)
    t0 = time.perf_counter()
    for i in range(packets):
        outs.append(sw.process(0, frames[i % n]))
    elapsed = time.perf_counter() - t0
    for i, out in enumerate(outs):
        check(i, out)
    return packets / elapsed, len(outs)


def run(args: argparse.Namespace) -> dict:
    if args.packets < 1 or args.runs < 1:
        raise ValueError("--packets and --runs must be positive")
    result: dict = {"packets_per_run": args.packets, "runs": args.runs, "programs": {}}
    for name, setup in (("basic_ipv4", _setup_basic), ("register_rmw32", _setup_rmw)):
        pps = [_measure(setup, args.packets)[0] for _ in range(args.runs)]
        result["programs"][name] = {"pps_median": round(statistics.median(pps), 1),
                                    "pps_runs": [round(p, 1) for p in pps]}
    progs = result["programs"]
    result["rmw32_vs_basic"] = round(
        progs["register_rmw32"]["pps_median"] / progs["basic_ipv4"]["pps_median"], 3
    )
    return result

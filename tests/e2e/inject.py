"""Send crafted UDP datagrams from inside a Mininet host (run there with ``host.cmd``).

    python -m tests.e2e.inject --dst 10.0.100.2 --port 17480 --sport 49153 --hex 1103... [--count N]
    python -m tests.e2e.inject --src 10.0.100.1 ...   # forged source address (raw socket)
"""

from __future__ import annotations

import argparse
import socket
import struct
import time


def _forged(src: str, dst: str, sport: int, dport: int, payload: bytes) -> bytes:
    """IPv4 + UDP with any source address (the kernel fills in the IPv4 checksum and id)."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, socket.IPPROTO_UDP, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    return ip + udp


def _send_forged(a: argparse.Namespace) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW) as s:
        frames = [_forged(a.src, a.dst, a.sport or a.port, a.port, bytes.fromhex(h)) for h in a.hex]
        for _ in range(a.count):
            for f in frames:
                s.sendto(f, (a.dst, 0))
            time.sleep(a.interval)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dst", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--sport", type=int, default=0)
    p.add_argument("--hex", action="append", required=True, help="payload (repeatable)")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--interval", type=float, default=0.0)
    p.add_argument("--src", help="forge this source address (raw socket)")
    a = p.parse_args()
    if a.src:
        _send_forged(a)
        print("sent", a.count * len(a.hex))
        return
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if a.sport:
            s.bind(("0.0.0.0", a.sport))
        for _ in range(a.count):
            for h in a.hex:
                s.sendto(bytes.fromhex(h), (a.dst, a.port))
            time.sleep(a.interval)
    print("sent", a.count * len(a.hex))


if __name__ == "__main__":
    main()

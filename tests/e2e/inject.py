"""Send crafted UDP datagrams from inside a Mininet host (run there with ``host.cmd``).

    python -m tests.e2e.inject --dst 10.0.100.2 --port 17480 --sport 49153 --hex 1103... [--count N]
"""

from __future__ import annotations

import argparse
import socket
import time


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dst", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--sport", type=int, default=0)
    p.add_argument("--hex", action="append", required=True, help="payload (repeatable)")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--interval", type=float, default=0.0)
    a = p.parse_args()
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

"""The one UDP socket setup both transports use: bound, non-blocking, large buffers."""

from __future__ import annotations

import socket

BUFFER_BYTES = 8 << 20


def open_udp(ip: str, port: int) -> socket.socket:
    """A non-blocking UDP socket bound to (ip, port) with 8 MiB send and receive buffers, so a
    window of datagrams in flight is not lost to a full socket queue."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER_BYTES)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER_BYTES)
    s.bind((ip, port))
    s.setblocking(False)
    return s

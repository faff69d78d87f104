"""Batched datagram I/O for both host transports: ``sendmmsg``/``recvmmsg`` in a small C module.

A worker's transport used to pay one Python ``sendto`` per frame out and one ``recvfrom`` per
frame in.  ``fastio.c`` sends a batch of rows of a prebuilt frame array in one system call per
64 frames and drains the socket into a preallocated buffer the transport parses with numpy.

``DHC_HOST_IO`` chooses the path: ``native`` (this module; the default when a C compiler is on
PATH), ``python`` (one ``sendto``/``recvfrom`` per datagram: the reference, which puts the same
bytes on the wire).  The module is compiled once per source content with ``cc -O2 -shared
-fPIC`` into ``$XDG_CACHE_HOME/dhc-hostagent`` (renamed into place atomically, so workers
starting at once never load half a file) and loaded with cffi in ABI mode.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
from cffi import FFI

SOURCE = Path(__file__).with_name("fastio.c")
#: the native delivery engine (``hostagent.native_delivery``) is built into the same library
ENGINE_SOURCE = Path(__file__).with_name("native_delivery.c")
ENGINE_HEADER = Path(__file__).with_name("native_delivery.h")
LINGER_SOURCE = Path(__file__).with_name("native_linger.c")
SOURCES = (SOURCE, ENGINE_SOURCE, LINGER_SOURCE)
CFLAGS = ["-O2", "-shared", "-fPIC", "-std=gnu11", "-Wall"]
#: bytes per receive row: every datagram of either transport fits (DHC <= 56 + 4 * 256 B,
#: the ring <= 1400 B); a longer one is reported with its full length and treated as malformed
ROW_BYTES = 2048
#: datagrams one drain takes in before the transport handles them
RECV_ROWS = 256
ENV = "DHC_HOST_IO"

_FFI = FFI()
_FFI.cdef("""
int hio_send(int fd, const uint8_t *frames, size_t stride, const uint32_t *lens,
             const int64_t *idx, int n, uint32_t ip, uint16_t port, int *errs, int errcap);
int hio_recv(int fd, uint8_t *buf, size_t stride, int cap, uint32_t *lens, uint32_t *ips,
             uint16_t *ports);
""")
_FFI.cdef(ENGINE_HEADER.read_text().split("/* BEGIN CDEF */")[1].split("/* END CDEF */")[0])


class HostIOError(RuntimeError):
    """The native I/O module was asked for and cannot be built or loaded."""


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dhc-hostagent"


def _compile(cc: str, so: Path) -> None:
    with tempfile.TemporaryDirectory(dir=so.parent, prefix=".build-") as tmp:
        out = Path(tmp) / "fastio.so"
        r = subprocess.run([cc, *CFLAGS, "-o", str(out), *map(str, SOURCES), "-lm"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise HostIOError(f"{', '.join(map(str, SOURCES))}: the C compiler failed: "
                              f"{r.stderr.strip()[:500]}")
        os.replace(out, so)


@cache
def _lib():
    cc = shutil.which(os.environ.get("CC") or "cc")
    if cc is None:
        raise HostIOError(f"{ENV}=native needs a C compiler (cc) on PATH")
    text = b"".join(f.read_bytes() for f in (*SOURCES, ENGINE_HEADER))
    key = hashlib.sha256(text + " ".join(CFLAGS).encode()).hexdigest()[:24]
    d = _cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    so = d / f"fastio_{key}.so"
    if not so.exists():
        _compile(cc, so)
    return _FFI.dlopen(str(so))


def native_selected() -> bool:
    """Whether the transports use this module: ``DHC_HOST_IO`` (``native``/``python``), by
    default native when it can be built and loaded (a C compiler, a writable cache)."""
    mode = os.environ.get(ENV, "").strip().lower()
    if mode == "python":
        return False
    if mode not in ("", "native"):
        raise HostIOError(f"{ENV} must be 'native' or 'python', got {mode!r}")
    if mode == "native":
        _lib()       # build errors surface here, when the transport is made
        return True
    try:             # the default: native if it builds and loads, else the reference path
        _lib()
    except (HostIOError, OSError):
        return False
    return True


def _errno_name(code: int) -> str:
    """The name the Python path counts a refused send under (its exception's type)."""
    return type(OSError(code, os.strerror(code))).__name__


@dataclass
class Destination:
    """An IPv4 address and port in network order, as the C side wants them."""

    ip: int
    port: int

    @classmethod
    def of(cls, addr: tuple[str, int]) -> Destination:
        return cls(_resolve(addr[0]), socket.htons(addr[1]))


def _resolve(host: str) -> int:
    """``ip_key`` of ``host``: a dotted IPv4 address is read once per process (the transports
    ask for it every exchange); a name resolves every time, as sendto would."""
    literal = _literal_ip(host)
    return literal if literal is not None else ip_key(socket.gethostbyname(host))


@lru_cache(maxsize=256)
def _literal_ip(host: str) -> int | None:
    try:
        return ip_key(str(ipaddress.IPv4Address(host)))
    except ValueError:
        return None


class FrameSender:
    """Sends rows of one prebuilt frame array (``(n, stride)`` uint8, row ``r`` of
    ``lens[r]`` bytes or all of it) to one destination, a batch per call."""

    def __init__(self, sock: socket.socket, frames: np.ndarray, dest: Destination,
                 lens: np.ndarray | None = None) -> None:
        self._lib, self._fd, self._dest = _lib(), sock.fileno(), dest
        self.frames = np.ascontiguousarray(frames, dtype=np.uint8)
        self.lens = None if lens is None else np.ascontiguousarray(lens, dtype=np.uint32)
        self._fp = _FFI.from_buffer("uint8_t[]", self.frames)
        self._lp = _FFI.NULL if self.lens is None else _FFI.from_buffer("uint32_t[]", self.lens)
        self._errs = _FFI.new("int[]", 64)

    def send(self, rows: np.ndarray) -> dict[str, int]:
        """Send the given rows in order; returns refused sends by the Python exception name the
        reference path would have counted them under (empty when all went out)."""
        idx = np.ascontiguousarray(rows, dtype=np.int64)
        if idx.size == 0:
            return {}
        refused = self._lib.hio_send(self._fd, self._fp, self.frames.shape[1], self._lp,
                                     _FFI.from_buffer("int64_t[]", idx), int(idx.size),
                                     self._dest.ip, self._dest.port, self._errs, 64)
        out: dict[str, int] = {}
        for k in range(refused):
            name = _errno_name(self._errs[min(k, 63)])
            out[name] = out.get(name, 0) + 1
        return out


class Receiver:
    """Drains one non-blocking socket into a preallocated ``(RECV_ROWS, ROW_BYTES)`` buffer."""

    def __init__(self, sock: socket.socket) -> None:
        self._lib, self._fd = _lib(), sock.fileno()
        self.buf = np.zeros((RECV_ROWS, ROW_BYTES), dtype=np.uint8)
        self.lens = np.zeros(RECV_ROWS, dtype=np.uint32)
        self.ips = np.zeros(RECV_ROWS, dtype=np.uint32)
        self.ports = np.zeros(RECV_ROWS, dtype=np.uint16)
        self._names: dict[tuple[int, int], tuple[str, int]] = {}   # a job has few peers
        self._p = (_FFI.from_buffer("uint8_t[]", self.buf),
                   _FFI.from_buffer("uint32_t[]", self.lens),
                   _FFI.from_buffer("uint32_t[]", self.ips),
                   _FFI.from_buffer("uint16_t[]", self.ports))

    def receive(self) -> int:
        """Datagrams now in rows ``0 .. n - 1`` (0 when none waits); raises OSError on a socket
        error, as ``recvfrom`` would."""
        buf, lens, ips, ports = self._p
        n = self._lib.hio_recv(self._fd, buf, ROW_BYTES, RECV_ROWS, lens, ips, ports)
        if n < 0:
            raise OSError(-n, os.strerror(-n))
        return n

    def payload(self, k: int) -> bytes:
        """Row ``k`` as the bytes ``recvfrom`` would have returned (cut to the row if longer)."""
        return self.buf[k, :min(int(self.lens[k]), ROW_BYTES)].tobytes()

    def address(self, k: int) -> tuple[str, int]:
        """Row ``k``'s source as ``recvfrom`` gives it."""
        key = (int(self.ips[k]), int(self.ports[k]))
        name = self._names.get(key)
        if name is None:
            if len(self._names) > 4096:       # many senders (a scan?): keep the cache small
                self._names.clear()
            name = self._names[key] = (socket.inet_ntoa(key[0].to_bytes(4, sys.byteorder)),
                                       socket.ntohs(key[1]))
        return name


def ip_key(ip: str) -> int:
    """An IPv4 address as ``Receiver.ips`` holds it (network order read as a native uint32)."""
    return int.from_bytes(socket.inet_aton(ip), sys.byteorder)



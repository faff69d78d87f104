"""Real switch ports: AF_PACKET raw sockets on named interfaces and one receive loop.

One thread polls every port socket (no busy-waiting: it sleeps in ``poll``
until a frame or a stop request arrives) and hands frames to the device in the
order the kernel delivers them.  Frames the switch itself transmitted would come back
on a packet socket as PACKET_OUTGOING: the sockets ask the kernel not to deliver them
(PACKET_IGNORE_OUTGOING, Linux >= 4.20, which halves the receive work of a switch that
sends as much as it receives), and the loops still skip any that arrive on older kernels.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import logging
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("softswitch.ports")

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
_SIOCETHTOOL = 0x8946
#: ethtool "set" commands for tx checksum, scatter-gather, TSO, GSO, GRO offloads
_ETHTOOL_SET = {"tx": 0x17, "sg": 0x19, "tso": 0x1F, "gso": 0x24, "gro": 0x2C}
_MAX_FRAME = 65535
_BATCH = 64
SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_IGNORE_OUTGOING = 23
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
_AUX = struct.Struct("=IIIHHHH")  # struct tpacket_auxdata


def restore_vlan(frame: bytes, ancdata: list) -> bytes:
    """Put back the 802.1Q tag the kernel moved out of a received frame into PACKET_AUXDATA
    (VLAN offload strips it on receive; a switch must forward it as it came)."""
    for level, kind, data in ancdata:
        if level != SOL_PACKET or kind != PACKET_AUXDATA or len(data) < _AUX.size:
            continue
        status, _len, _snap, _mac, _net, tci, tpid = _AUX.unpack_from(data)
        if status & TP_STATUS_VLAN_VALID and len(frame) >= 12:
            if not status & TP_STATUS_VLAN_TPID_VALID:
                tpid = 0x8100
            return frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]
    return frame


def parse_port_map(specs: list[str]) -> dict[int, str]:
    """``["1@veth1", "2@veth2"]`` -> ``{1: "veth1", 2: "veth2"}`` with clear errors."""
    ports: dict[int, str] = {}
    for spec in specs:
        num, sep, name = spec.partition("@")
        if not sep or not num.isdigit() or not name:
            raise ValueError(f"interface '{spec}': expected PORT@IFNAME, e.g. 1@veth1")
        port = int(num)
        if port in ports:
            raise ValueError(f"port {port} given twice ({ports[port]} and {name})")
        if name in ports.values():
            raise ValueError(f"interface {name} given for two ports")
        if len(name) >= 16:
            raise ValueError(f"interface name '{name}' is longer than 15 characters")
        ports[port] = name
    return ports


def set_offloads(
    ifname: str, enabled: bool = False, features: tuple[str, ...] = ("tx", "sg", "tso", "gso")
) -> None:
    """Switch NIC offloads on or off (ethtool -K without the ethtool binary).

    A software switch sees frames as the kernel hands them to a packet socket:
    with tx checksum offload a sender's TCP/UDP checksums are left unfinished,
    and with TSO/GSO it hands over frames larger than the MTU.  Hosts attached
    to a software switch therefore need these off (as BMv2 setups do with ethtool).
    """
    buf = ctypes.create_string_buffer(8)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for feat in features:
            struct.pack_into("II", buf, 0, _ETHTOOL_SET[feat], 1 if enabled else 0)
            ifreq = struct.pack("16sP", ifname.encode(), ctypes.addressof(buf))
            try:
                fcntl.ioctl(s.fileno(), _SIOCETHTOOL, ifreq)
            except OSError as err:
                if err.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                    raise OSError(err.errno, f"ethtool {feat} {'on' if enabled else 'off'} on {ifname}: "
                                  f"{err.strerror}") from None


_CLONE_NEWNET = 0x40000000


def run_in_netns(ns: str | int, fn: Callable, *args):
    """Return ``fn(*args)`` run inside a network namespace (a path, or the pid of a process in it).

    setns() switches only the calling thread, so a short-lived thread enters the
    namespace and ends there; the rest of the process is untouched.  Sockets made
    by ``fn`` stay bound to that namespace and can be used from any thread.
    """
    path = f"/proc/{ns}/ns/net" if isinstance(ns, int) else ns
    libc = ctypes.CDLL(None, use_errno=True)
    result: list = []
    errors: list[BaseException] = []

    def body() -> None:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as err:
            errors.append(OSError(err.errno, f"cannot open network namespace {path}: {err.strerror}"))
            return
        try:
            if libc.setns(fd, _CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"setns into {path}: {os.strerror(err)}")
            result.append(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            errors.append(exc)
        finally:
            os.close(fd)

    t = threading.Thread(target=body, name="netns")
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return result[0]


class PcapWriter:
    """Minimal libpcap writer (Ethernet link type), flushed per frame so it survives a kill."""

    def __init__(self, path: Path):
        self._f = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, _MAX_FRAME, 1))
        self._f.flush()

    def write(self, frame: bytes) -> None:
        now = time.time()
        sec = int(now)
        self._f.write(struct.pack("<IIII", sec, int((now - sec) * 1e6), len(frame), len(frame)))
        self._f.write(frame)
        self._f.flush()

    def close(self) -> None:
        self._f.close()


@dataclass
class Port:
    number: int
    ifname: str
    sock: socket.socket
    pcap_in: PcapWriter | None = None
    pcap_out: PcapWriter | None = None
    rx: int = 0
    tx: int = 0


def ignore_outgoing(sock: socket.socket) -> None:
    """Ask the kernel not to loop our own transmissions back (older kernels: the loop skips them)."""
    try:
        sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    except OSError as err:
        log.debug("PACKET_IGNORE_OUTGOING not available (%s); outgoing frames are skipped", err)


@dataclass
class PortSet:
    """The switch's data ports and the loop that reads them."""

    mapping: dict[int, str]
    pcap_dir: Path | None = None
    ports: dict[int, Port] = field(default_factory=dict)

    def open(self) -> None:
        try:
            for number, ifname in sorted(self.mapping.items()):
                sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                try:
                    sock.bind((ifname, 0))
                except OSError as err:
                    sock.close()
                    raise OSError(err.errno, f"cannot open interface {ifname} for port {number}: "
                                  f"{err.strerror}") from None
                sock.setblocking(False)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
                sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
                ignore_outgoing(sock)
                port = Port(number, ifname, sock)
                if self.pcap_dir is not None:
                    self.pcap_dir.mkdir(parents=True, exist_ok=True)
                    port.pcap_in = PcapWriter(self.pcap_dir / f"{ifname}_in.pcap")
                    port.pcap_out = PcapWriter(self.pcap_dir / f"{ifname}_out.pcap")
                self.ports[number] = port
        except BaseException:
            self.close()
            raise
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        os.set_blocking(self._wake_r, False)
        self._stopping = False
        self._interrupted = False

    def send(self, number: int, frame: bytes) -> None:
        port = self.ports.get(number)
        if port is None:
            log.debug("egress port %d has no interface; frame dropped", number)
            return
        try:
            port.sock.send(frame)
            port.tx += 1
        except OSError as err:
            log.warning("send of %d bytes on %s failed: %s", len(frame), port.ifname, err.strerror)
            return
        if port.pcap_out is not None:
            port.pcap_out.write(frame)

    def stop(self) -> None:
        """Wake the receive loop and make it return (safe from signal handlers and threads)."""
        self._stopping = True
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, AttributeError):
            pass

    @property
    def stopping(self) -> bool:
        return self._stopping

    def interrupt(self) -> None:
        """Make ``run`` (or the native loop polling ``wake_fd``) return without stopping."""
        self._interrupted = True
        try:
            os.write(self._wake_w, b"i")
        except (BlockingIOError, AttributeError, TypeError):
            pass

    @property
    def wake_fd(self) -> int:
        return self._wake_r

    def drain_wake(self) -> None:
        self._interrupted = False
        try:
            while os.read(self._wake_r, 64):
                pass
        except (BlockingIOError, OSError):
            pass

    def run(self, handler: Callable[[int, bytes], None]) -> None:
        """Receive frames until ``stop()`` or ``interrupt()``; call ``handler(port, frame)`` for
        each, in order."""
        poller = select.poll()
        by_fd = {p.sock.fileno(): p for p in self.ports.values()}
        for fd in by_fd:
            poller.register(fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        while not self._stopping and not self._interrupted:
            try:
                events = poller.poll()
            except InterruptedError:
                continue
            for fd, _ in events:
                if fd == self._wake_r:
                    try:
                        os.read(self._wake_r, 64)
                    except BlockingIOError:
                        pass
                    continue
                port = by_fd[fd]
                for _ in range(_BATCH):
                    try:
                        data, anc, _flags, addr = port.sock.recvmsg(_MAX_FRAME, 256)
                    except (BlockingIOError, InterruptedError):
                        break
                    except OSError as err:
                        log.warning("receive on %s failed: %s", port.ifname, err.strerror)
                        break
                    if addr[2] == PACKET_OUTGOING:
                        continue
                    data = restore_vlan(data, anc)
                    port.rx += 1
                    if port.pcap_in is not None:
                        port.pcap_in.write(data)
                    handler(port.number, data)

    def close(self) -> None:
        for port in self.ports.values():
            port.sock.close()
            for w in (port.pcap_in, port.pcap_out):
                if w is not None:
                    w.close()
        self.ports.clear()
        for name in ("_wake_r", "_wake_w"):
            fd = getattr(self, name, None)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)

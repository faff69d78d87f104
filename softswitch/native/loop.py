"""Serving a device's ports: the C port loop for a native pipeline, the Python loop otherwise.

The C loop (``ss_loop`` in rt_loop.c) runs with the GIL released (cffi releases it around every
call) and returns when the port set's wake pipe becomes readable: on stop, and when the device
swaps its pipeline (``Device.on_change``), after which the loop for the new pipeline starts.
Frames the pipeline sends to the CPU port are queued in C and turned into PacketIn messages by a
small Python thread woken through an eventfd.
"""

from __future__ import annotations

import logging
import os
import select
import threading

from ..target.ports import PortSet
from .switch import NativeSwitch

log = logging.getLogger("softswitch.ports")


def serve_ports(ports: PortSet, device) -> None:
    """Receive and forward until ``ports.stop()``; follows pipeline changes of ``device``."""
    device.on_change = ports.interrupt
    while not ports.stopping:
        p = device.pipeline
        sw = p.switch if p is not None else None
        if isinstance(sw, NativeSwitch) and ports.pcap_dir is None and ports.ports:
            # the C loop runs in its own thread: the main thread must stay in Python so that
            # signal handlers (SIGTERM -> ports.stop()) run and wake the loop
            t = threading.Thread(target=run_native, args=(ports, device, sw), name="softswitch-native-loop")
            t.start()
            while t.is_alive():
                t.join(0.25)
        else:
            ports.run(device.receive)
        ports.drain_wake()


def run_native(ports: PortSet, device, sw: NativeSwitch) -> None:
    """One run of the C loop over every port of ``ports`` until the wake pipe fires."""
    ffi, lib = sw.ffi, sw.lib
    nums = sorted(ports.ports)
    fds = ffi.new("int[]", [ports.ports[n].sock.fileno() for n in nums])
    pnums = ffi.new("int[]", nums)
    evfd = os.eventfd(0, os.EFD_NONBLOCK)
    done = threading.Event()
    pin = threading.Thread(target=_packet_in_pump, args=(sw, device, evfd, done), daemon=True,
                           name="softswitch-packet-in")
    pin.start()
    cpu = device.cpu_port if device.cpu_port is not None else -1
    try:
        rc = lib.ss_loop(sw.sw, len(nums), fds, pnums, ports.wake_fd, evfd, cpu)
        if rc < 0:
            log.error("native port loop failed: %s", os.strerror(-rc))
    finally:
        done.set()
        os.eventfd_write(evfd, 1)
        pin.join()
        os.close(evfd)


def _packet_in_pump(sw: NativeSwitch, device, evfd: int, done: threading.Event) -> None:
    ffi, lib = sw.ffi, sw.lib
    buf = ffi.new("uint8_t[]", 65536)
    n = ffi.new("size_t *")
    while not done.is_set():
        select.select([evfd], [], [])
        try:
            os.eventfd_read(evfd)
        except BlockingIOError:
            continue
        while lib.ss_pktin_pop(sw.sw, buf, 65536, n) == 1:
            frame = bytes(ffi.buffer(buf, n[0]))
            p = device.pipeline
            if p is None:
                continue
            msg = device._to_packet_in(p, frame)
            if msg is not None:
                device.packet_in(msg)


def stats(sw: NativeSwitch) -> dict[str, int]:
    """Counters of the C loop: frames received, sent, dropped for too many passes, oversize,
    send errors, packet-ins dropped (queue full), digests dropped (queue full)."""
    out = sw.ffi.new("uint64_t[8]")
    sw.lib.ss_stats(sw.sw, out)
    names = ("rx", "tx", "passes_exceeded", "oversize", "send_errors", "packet_in_dropped", "digests_dropped")
    return {k: int(out[i]) for i, k in enumerate(names)}

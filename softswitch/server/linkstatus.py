"""Port status from the interfaces' link state, as BMv2 reports it to PI.

BMv2's port monitor polls each port's interface and sends a port status event when it goes up
or down; PI's ``WatchPortEnforcer`` then (de)activates the selector group members watching that
port.  ``LinkWatcher`` does the same for the softswitch's ports: a thread reads the interface
flags (``SIOCGIFFLAGS``, in the process's network namespace) every ``interval`` seconds, a port
being up when its interface is ``IFF_UP`` and ``IFF_RUNNING`` (carrier), and reports a change to
``Device.port_set_status``.  An interface that disappeared is down.
"""

from __future__ import annotations

import fcntl
import logging
import socket
import struct
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

SIOCGIFFLAGS = 0x8913
IFF_UP = 0x1
IFF_RUNNING = 0x40


def link_up(ifname: str) -> bool:
    """Is ``ifname`` administratively up with a carrier?  False when it does not exist."""
    req = struct.pack("16sH14x", ifname.encode()[:15], 0)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            res = fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req)
        except OSError:
            return False
    flags = struct.unpack_from("16sH", res)[1]
    return bool(flags & IFF_UP) and bool(flags & IFF_RUNNING)


class LinkWatcher:
    """Polls the link state of ``ports`` (number -> interface name); ports start up, as the
    switch assumes, so only changes (and ports down at start) are reported."""

    def __init__(self, ports: dict[int, str], report: Callable[[int, bool], None],
                 probe: Callable[[str], bool] = link_up, interval: float = 0.2):
        self.ports = dict(ports)
        self.report = report
        self.probe = probe
        self.interval = interval
        self.status = {p: True for p in self.ports}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll(self) -> list[tuple[int, bool]]:
        """One pass over the ports; the changes reported, in port order."""
        changes = []
        for port, ifname in sorted(self.ports.items()):
            up = self.probe(ifname)
            if up != self.status[port]:
                self.status[port] = up
                log.info("port %d (%s) is %s", port, ifname, "up" if up else "down")
                self.report(port, up)
                changes.append((port, up))
        return changes

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception:  # noqa: BLE001 - a failed report must not end the watch
                log.exception("link status poll failed")

    def start(self) -> None:
        self.poll()
        self._thread = threading.Thread(target=self._run, name="link-status", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)

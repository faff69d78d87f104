"""Link bandwidth in the emulation: a token-bucket filter (``tc qdisc ... tbf``) on both ends.

This kernel has ``tbf`` but no ``htb`` or ``netem`` modules, so Mininet's default TCLink
(htb + netem) cannot be used; a root ``tbf`` qdisc on each end of a link limits what that end
sends, which for a full-duplex link is exactly the link's rate in each direction.  Switch ports
live in the root namespace, host interfaces in the host's namespace: ``run`` executes ``tc``
where the interface is.

The token bucket holds ``burst`` bytes: at least 1 ms of traffic at the rate and never less
than 10 full frames, so a rate is reached with the kernel's timer granularity.  The queue
(tbf's ``limit``) holds 50 ms of traffic, as a switch buffer would, but never less than
``QUEUE_MIN_FRAMES`` full frames: the hosts' delivery engines keep up to 64 packets in flight
per exchange (the ring baseline's window, ``bench/baselines/ring_transport.py``), and at 10 Mbit/s
50 ms is only 41 frames, so a queue sized by time alone tail-drops a single sender's window and
turns a links-bound run into a loss-recovery run.  256 frames (388 kB, four such windows, e.g.
two ring flows meeting on a leaf-spine uplink with room to spare) is a small buffer for a real
switch; from about 62 Mbit/s up the 50 ms term is the larger, so faster links are unchanged.

Control packets go first.  Under tbf the data queue is ``pfifo_fast`` (the richer qdiscs, prio
and ets, and tc filters are not in this kernel): three bands by the packet's priority, band 0 for
``SO_PRIORITY`` 6 (``TC_PRIO_INTERACTIVE``, what ``IP_TOS`` low-delay maps to) ahead of band 1,
where everything else goes.  The ring baseline sends its acknowledgements at that priority
(``CONTROL_PRIORITY``), as a datacenter switch serves a strict-priority control class.  Without
it a host's acknowledgements wait behind its own outgoing window: at 10 Mbit/s 64 frames are
74 ms, so a sender's round trip swung from 1 ms to 150 ms within a step and its retransmission
timers fired on packets that were only queued (every one of the ring's retransmissions in the
earlier 10 Mbit/s recordings arrived as a duplicate; ``docs/scale.md``).  pfifo_fast counts
packets, not bytes: the interface's ``txqueuelen`` is set to the queue's bytes in full frames, so
each band holds what the single byte-limited queue held.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

#: ``tc`` rate units, in bits per second.
_UNITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12}
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?bit)\s*$", re.IGNORECASE)
#: Largest frame on these links (Ethernet MTU + header), bytes.
FRAME_BYTES = 1514
#: How long a full queue may delay a frame before tbf drops it (at rates where this is the larger).
QUEUE_LATENCY_MS = 50
#: Smallest queue, in full frames: four 64-packet windows of the hosts' delivery engines.
QUEUE_MIN_FRAMES = 256
#: socket priority of control packets (``TC_PRIO_INTERACTIVE``): pfifo_fast's band 0
CONTROL_PRIORITY = 6


class RateError(ValueError):
    """A bandwidth that is not a ``tc`` rate such as ``100mbit`` or ``1gbit``."""


def parse_rate(text: str) -> int:
    """Bits per second of a ``tc``-style rate (``100mbit``, ``1gbit``, ``2.5gbit``)."""
    m = _RATE.match(text or "")
    if not m:
        raise RateError(f"bad bandwidth {text!r}: write a number and a unit "
                        f"({', '.join(_UNITS)}), e.g. 100mbit or 1gbit")
    bps = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if bps < 10**5:
        raise RateError(f"bad bandwidth {text!r}: below 100kbit a frame takes longer than "
                        f"the queue may hold it")
    return bps


def format_rate(bps: int) -> str:
    """The shortest exact ``tc`` spelling of ``bps`` (1000000000 -> '1gbit')."""
    for unit in ("tbit", "gbit", "mbit", "kbit"):
        if bps % _UNITS[unit] == 0:
            return f"{bps // _UNITS[unit]}{unit}"
    return f"{bps}bit"


@dataclass(frozen=True)
class Shaping:
    """One tbf configuration: rate and the bucket size that goes with it."""

    rate_bps: int

    @property
    def burst_bytes(self) -> int:
        return max(10 * FRAME_BYTES, self.rate_bps // 8 // 1000)

    @property
    def limit_bytes(self) -> int:
        """Bytes tbf queues before it drops: the bucket plus max(50 ms of traffic, 256 frames),
        i.e. what ``latency 50ms`` gives wherever 50 ms is the larger."""
        queue = max(self.rate_bps // 8 * QUEUE_LATENCY_MS // 1000, QUEUE_MIN_FRAMES * FRAME_BYTES)
        return queue + self.burst_bytes

    def tc_args(self, dev: str) -> list[str]:
        """``tc`` arguments that (re)place the root qdisc of ``dev`` with this filter."""
        return ["tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "tbf",
                "rate", format_rate(self.rate_bps), "burst", str(self.burst_bytes),
                "limit", str(self.limit_bytes)]

    @property
    def queue_frames(self) -> int:
        """The queue in full frames: pfifo_fast's limit per band (the interface's txqueuelen)."""
        return -(-self.limit_bytes // FRAME_BYTES)

    def tc_commands(self, dev: str) -> list[list[str]]:
        """The whole shaping of ``dev``, in order: the queue length pfifo_fast takes when it is
        made, tbf, and pfifo_fast as tbf's queue (control packets in band 0)."""
        return [["ip", "link", "set", "dev", dev, "txqueuelen", str(self.queue_frames)],
                self.tc_args(dev),
                ["tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "pfifo_fast"]]


#: Runs a command where an interface lives and returns (exit status, output).
Runner = Callable[[list[str]], tuple[int, str]]


def shape(dev: str, shaping: Shaping, run: Runner) -> None:
    """Limit what ``dev`` sends to ``shaping.rate_bps``, control packets first; raises
    RuntimeError naming the device and the ``tc`` command that failed."""
    for args in shaping.tc_commands(dev):
        status, out = run(args)
        if status != 0:
            raise RuntimeError(f"shaping {dev} at {format_rate(shaping.rate_bps)} failed "
                               f"({' '.join(args[:3])}): {out.strip() or f'exit {status}'}")


def gbps_to_bps(gbps: float) -> int:
    """A topology file's ``bandwidth_gbps`` as whole bits per second."""
    return int(round(gbps * 1e9))

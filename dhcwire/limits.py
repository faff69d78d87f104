"""The values a job endpoint may take, checked the same wherever they are read.

Topology files (``controller/topology_file.py``), job manifests (``hostagent/manifest.py``) and
the command lines of ``dhc-agent`` all call these, so a value one of them refuses is refused by
the others too (issue 30: a manifest with ``lanes: 3`` or ``switch_ip: 255.255.255.255`` used to
be accepted and send traffic while the topology check rejected the same values).  Each check
returns the value, normalised, or raises ``ValueError`` with a reason that does not name where
the value came from -- the caller adds the file and field.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from dhcwire.header import DHC_HEADER_FIELDS, ETHERNET_MTU, MAX_EPOCH, SLOT_SET_BIT, ip_packet_bytes
from dhcwire.p4names import MAX_FAN_IN

#: Lanes per packet the P4 program can be built with (DHC_LANES in p4src/include/define.p4).
SUPPORTED_LANES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256)
_BITS = {f.name: f.bits for f in DHC_HEADER_FIELDS}
MAX_JOB_ID: int = (1 << _BITS["job_id"]) - 1
MAX_WINDOW: int = SLOT_SET_BIT - 1
#: A worker's child index at its aggregator: a bit of the 32-bit ``child_mask``.
MAX_CHILD_ID: int = MAX_FAN_IN - 1


def integer(value: Any, lo: int, hi: int | None) -> int:
    """``value`` if it is an integer (not a bool, not a float such as ``1e9``) in lo..hi."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {value!r}")
    if value < lo or (hi is not None and value > hi):
        raise ValueError(f"{value} out of range {lo}..{hi if hi is not None else 'inf'}")
    return value


def job_id(value: Any) -> int:
    return integer(value, 0, MAX_JOB_ID)


def epoch(value: Any) -> int:
    return integer(value, 0, MAX_EPOCH)


def window(value: Any) -> int:
    """W, slots per shadow set: the low 15 bits of ``dhc_h.slot``."""
    return integer(value, 1, MAX_WINDOW)


def child_id(value: Any) -> int:
    return integer(value, 0, MAX_CHILD_ID)


def lanes(value: Any) -> int:
    """K: one unfragmented packet, and a lane count the P4 program is built with."""
    k = integer(value, 1, None)
    if ip_packet_bytes(k) > ETHERNET_MTU:
        raise ValueError(f"{k} lanes per packet make {ip_packet_bytes(k)}-byte IPv4 packets, over "
                         f"the {ETHERNET_MTU}-byte Ethernet MTU")
    if k not in SUPPORTED_LANES:
        raise ValueError(f"{k} lanes per packet: the P4 program supports "
                         f"{', '.join(map(str, SUPPORTED_LANES))} (DHC_LANES in p4src/include/define.p4)")
    return k


def node_ip(value: Any, loopback_ok: bool = False) -> str:
    """A unicast IPv4 address a node (host or switch) can own, as dotted text.  ``loopback_ok``:
    127/8 too -- a job endpoint may live on one machine's loopback (tests, ``dhc-ring``), a
    topology node (a Mininet host or switch) may not."""
    try:
        addr = ipaddress.IPv4Address(value)
    except (ipaddress.AddressValueError, ValueError):
        raise ValueError(f"not an IPv4 address: {value!r}") from None
    if isinstance(value, int):
        raise ValueError(f"not an IPv4 address: {value!r} (write it dotted)")
    bad = ("unspecified" if addr.is_unspecified else
           "the broadcast address" if addr == ipaddress.IPv4Address("255.255.255.255") else
           "multicast" if addr.is_multicast else
           "loopback" if addr.is_loopback and not loopback_ok else
           "reserved (240.0.0.0/4)" if addr.is_reserved else None)
    if bad:
        raise ValueError(f"{addr} is {bad}: not usable as a node address")
    return str(addr)


def endpoint_ip(value: Any) -> str:
    """The address of a job endpoint's switch or peer: :func:`node_ip`, loopback allowed."""
    return node_ip(value, loopback_ok=True)

"""The ``dhc_h`` header, packet types and UDP ports: the host-side source of truth for packets.

Every host-side component (the Scapy layer in ``hostagent``, the transport's prebuilt frames, the
controller's rewrite entries, the tests) derives the packet layout from the constants here.
``tests/dhcwire/test_header_matches_p4.py`` proves that ``DHC_HEADER_FIELDS`` equals the ``dhc_h``
header that the P4 program declares, field by field (names, widths, order).  The lane layout and
the levels live in :mod:`dhcwire.lanes` (the codec shares them) and are re-exported here, so a
packet builder needs one import.

Packet:  Ethernet | IPv4 | UDP(dport=DHC_UDP_PORT) | dhc_h | LANES x bit<32>
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from dhcwire.lanes import DEFAULT_LANES, LANE_BYTES, LEVEL_OPS, Level, Op

__all__ = [
    "DEFAULT_LANES", "DHC_HEADER_BYTES", "DHC_HEADER_FIELDS", "DHC_UDP_PORT", "DHC_VERSION",
    "ETHERNET_MTU", "IPV4_UDP_BYTES", "LANE_BYTES", "LEVEL_OPS", "MAX_EPOCH", "MAX_LANES",
    "SLOT_SET_BIT", "WORKER_PORT_BASE", "WORKER_PORT_SPAN",
    "HeaderField", "Level", "Op", "PacketType", "check_lanes", "ip_packet_bytes", "lanes_from_wire",
    "lanes_on_wire", "max_lanes_in_mtu", "pack_header", "slot_for_chunk", "unpack_header", "worker_port",
]

#: UDP destination port on which switches recognise DHC traffic ("DH").
DHC_UDP_PORT: int = 0x4448

#: Protocol version carried in ``dhc_h.version``; anything else is malformed.
DHC_VERSION: int = 1

#: Workers of job j send from, and receive RESULTs on, UDP port ``worker_port(j)``, so one host
#: can be a worker of several jobs at once; switches talk to each other on DHC_UDP_PORT.
WORKER_PORT_BASE: int = 0xC000
WORKER_PORT_SPAN: int = 0x3FFF


def worker_port(job_id: int) -> int:
    """The UDP port a worker of ``job_id`` binds (49152 + job_id mod 16383)."""
    return WORKER_PORT_BASE + job_id % WORKER_PORT_SPAN


#: Top bit of ``dhc_h.slot`` selects the shadow register set.
SLOT_SET_BIT: int = 0x8000


class PacketType(enum.IntEnum):
    """``dhc_h.type``: what a packet means to a switch."""

    DATA = 1    # a contribution (worker -> switch, or partial sum switch -> parent)
    RESULT = 2  # a completed aggregate (root -> down the tree -> workers)
    # worker <-> worker liveness check on the job's worker port; switches only route these
    # (the P4 program aggregates DATA/RESULT only and counts anything else as malformed)
    PROBE = 3
    PROBE_ACK = 4


@dataclass(frozen=True)
class HeaderField:
    """One field of ``dhc_h``: its P4 name and width in bits."""

    name: str
    bits: int


#: ``header dhc_h { ... }`` in p4src/include/headers.p4, in wire order (network byte order).
DHC_HEADER_FIELDS: tuple[HeaderField, ...] = (
    HeaderField("version", 4),
    HeaderField("pkt_type", 4),
    HeaderField("level", 8),
    HeaderField("job_id", 16),
    HeaderField("child_id", 8),   # sender's child index at the receiving aggregator
    HeaderField("flags", 8),
    HeaderField("num_lanes", 8),  # must equal the switch's compiled lane count
    HeaderField("epoch", 8),      # job session; the switch drops frames of any other epoch
    HeaderField("chunk", 32),     # sequence number in the job's stream
    HeaderField("slot", 16),      # chunk mod W, top bit = shadow set ((chunk div W) mod 2)
)

DHC_HEADER_BYTES: int = sum(f.bits for f in DHC_HEADER_FIELDS) // 8

#: A job's session number (``dhc_h.epoch``, bit<8>): the switch accepts only the current one.
MAX_EPOCH: int = (1 << next(f.bits for f in DHC_HEADER_FIELDS if f.name == "epoch")) - 1


def slot_for_chunk(chunk: int, window: int) -> int:
    """The ``slot`` field for ``chunk`` in a job with a window of ``window`` slots."""
    if not 0 < window < SLOT_SET_BIT:
        raise ValueError(f"window must be in 1..{SLOT_SET_BIT - 1}, got {window}")
    shadow = (chunk // window) % 2
    return (chunk % window) | (SLOT_SET_BIT if shadow else 0)


#: ``dhc_h.num_lanes`` is 8 bits wide; K = MAX_LANES travels as 0 (the P4 program does the same).
MAX_LANES: int = 256
#: Bytes of the IPv4 (no options) and UDP headers in front of ``dhc_h``.
IPV4_UDP_BYTES: int = 20 + 8
#: Largest IPv4 packet an Ethernet link carries unfragmented; DHC packets are never fragmented.
ETHERNET_MTU: int = 1500


def ip_packet_bytes(lanes: int) -> int:
    """Bytes of the IPv4 packet (IPv4 + UDP + ``dhc_h`` + lanes) that carries ``lanes`` lanes."""
    return IPV4_UDP_BYTES + DHC_HEADER_BYTES + LANE_BYTES * lanes


def check_lanes(lanes: int) -> None:
    """Refuse a lane count a DHC packet cannot carry: over the MTU, or beyond ``num_lanes``."""
    size = ip_packet_bytes(lanes)
    if size > ETHERNET_MTU:
        raise ValueError(f"{lanes} lanes per packet make {size}-byte IPv4 packets, over the "
                         f"{ETHERNET_MTU}-byte Ethernet MTU (at most {max_lanes_in_mtu()} lanes fit)")
    if not 1 <= lanes <= MAX_LANES:
        raise ValueError(f"{lanes} lanes per packet: dhc_h.num_lanes carries 1..{MAX_LANES}")


def max_lanes_in_mtu() -> int:
    """The most lanes one unfragmented DHC packet can hold."""
    return (ETHERNET_MTU - IPV4_UDP_BYTES - DHC_HEADER_BYTES) // LANE_BYTES


def lanes_on_wire(lanes: int) -> int:
    """The ``num_lanes`` value for ``lanes`` lanes: K itself, and 0 for K = 256 (8-bit field).
    0 lanes (a PROBE or PROBE_ACK, which carry none) is 0 as well."""
    if lanes:
        check_lanes(lanes)
    return lanes % MAX_LANES


def lanes_from_wire(num_lanes: int, pkt_type: int) -> int:
    """The lane count a ``num_lanes`` value announces (inverse of :func:`lanes_on_wire`): 0 is
    256 in DATA and RESULT, which always carry lanes, and 0 in the probes, which carry none."""
    if num_lanes == 0 and pkt_type in (PacketType.DATA, PacketType.RESULT):
        return MAX_LANES
    return num_lanes


def pack_header(**values: int) -> bytes:
    """Serialise ``dhc_h`` from field values (missing fields are 0; ``version`` defaults to
    DHC_VERSION).  Raises ValueError for unknown fields or values that do not fit."""
    unknown = set(values) - {f.name for f in DHC_HEADER_FIELDS}
    if unknown:
        raise ValueError(f"unknown dhc_h fields: {sorted(unknown)}")
    values.setdefault("version", DHC_VERSION)
    word = 0
    for f in DHC_HEADER_FIELDS:
        v = int(values.get(f.name, 0))
        if not 0 <= v < (1 << f.bits):
            raise ValueError(f"dhc_h.{f.name}={v} does not fit in {f.bits} bits")
        word = (word << f.bits) | v
    return word.to_bytes(DHC_HEADER_BYTES, "big")


def unpack_header(data: bytes) -> dict[str, int]:
    """Parse ``dhc_h`` from the first DHC_HEADER_BYTES of ``data``."""
    if len(data) < DHC_HEADER_BYTES:
        raise ValueError(f"dhc_h needs {DHC_HEADER_BYTES} bytes, got {len(data)}")
    word = int.from_bytes(data[:DHC_HEADER_BYTES], "big")
    out: dict[str, int] = {}
    shift = DHC_HEADER_BYTES * 8
    for f in DHC_HEADER_FIELDS:
        shift -= f.bits
        out[f.name] = (word >> shift) & ((1 << f.bits) - 1)
    return out

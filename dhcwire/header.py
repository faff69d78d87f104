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
from typing import TypeVar

from dhcwire.lanes import DEFAULT_LANES, LANE_BYTES, LEVEL_OPS, Level, Op

__all__ = [
    "DEFAULT_LANES", "DHC_HEADER_BYTES", "DHC_HEADER_FIELDS", "DHC_UDP_PORT", "DHC_VERSION",
    "ETHERNET_MTU", "IPV4_UDP_BYTES", "LANE_BYTES", "LEVEL_OPS", "MAX_EPOCH", "MAX_LANES",
    "SLOT_SET_BIT", "WORKER_PORT_BASE", "WORKER_PORT_SPAN",
    "HeaderField", "Level", "Op", "PacketType", "check_lanes", "check_window", "ip_packet_bytes",
    "lanes_from_wire", "lanes_on_wire", "max_lanes_in_mtu", "pack_header", "slot_for_chunk",
    "unpack_header", "worker_port",
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
    """The UDP port a worker of ``job_id`` binds; RESULTs of the job arrive there.

    Parameters
    ----------
    job_id : int
        The job's id (``dhc_h.job_id``, 0..65535).

    Returns
    -------
    int
        ``WORKER_PORT_BASE + job_id mod WORKER_PORT_SPAN`` (49152 + job_id mod 16383).

    Examples
    --------
    >>> worker_port(7)
    49159
    >>> worker_port(16383) == WORKER_PORT_BASE
    True
    """
    return WORKER_PORT_BASE + job_id % WORKER_PORT_SPAN


#: Top bit of ``dhc_h.slot`` selects the shadow register set.
SLOT_SET_BIT: int = 0x8000

#: a chunk number or an integer numpy array of them (``slot_for_chunk`` takes both)
ChunkT = TypeVar("ChunkT")


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


def check_window(window: int) -> None:
    """Refuse a window the slot field cannot carry: W slots per shadow set, 1..SLOT_SET_BIT - 1.

    Parameters
    ----------
    window : int
        W, the slots a job owns in each shadow register set.

    Raises
    ------
    ValueError
        If ``window`` is not in 1..32767 (the low 15 bits of ``dhc_h.slot``).

    Examples
    --------
    >>> check_window(64)
    >>> check_window(0)
    Traceback (most recent call last):
    ...
    ValueError: window must be in 1..32767, got 0
    """
    if not 0 < window < SLOT_SET_BIT:
        raise ValueError(f"window must be in 1..{SLOT_SET_BIT - 1}, got {window}")


def slot_for_chunk(chunk: ChunkT, window: int) -> ChunkT:
    """The ``slot`` field for ``chunk``: ``chunk mod W``, top bit set in odd laps (the shadow set).

    The one home of the slot rule: the agent's transport takes a whole round of chunks at once,
    tests and tools one chunk; the same operators apply element-wise.

    Parameters
    ----------
    chunk : int or numpy.ndarray of int
        Chunk number(s) in the job's stream.
    window : int
        W, slots per shadow set (see :func:`check_window`).

    Returns
    -------
    int or numpy.ndarray
        The ``dhc_h.slot`` value(s), shaped like ``chunk``.

    Raises
    ------
    ValueError
        If ``window`` is out of range.

    Examples
    --------
    >>> slot_for_chunk(5, 4)            # lap 1 (odd): shadow set
    32769
    >>> hex(slot_for_chunk(9, 4))       # lap 2: first set again
    '0x1'
    >>> import numpy as np
    >>> slot_for_chunk(np.arange(6), 4).tolist()
    [0, 1, 2, 3, 32768, 32769]
    """
    check_window(window)
    return (chunk % window) | ((chunk // window) % 2) * SLOT_SET_BIT


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
    """Refuse a lane count a DHC packet cannot carry: over the MTU, or beyond ``num_lanes``.

    Parameters
    ----------
    lanes : int
        K, 32-bit lanes per packet.

    Raises
    ------
    ValueError
        If the IPv4 packet would exceed ``ETHERNET_MTU`` or ``lanes`` is outside 1..256.

    Examples
    --------
    >>> check_lanes(256)
    >>> check_lanes(512)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 512 lanes per packet make 2090-byte IPv4 packets, over the ... (at most 364 lanes fit)
    """
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

    Parameters
    ----------
    lanes : int
        Lanes the packet carries; 0 for a PROBE or PROBE_ACK, which carry none.

    Returns
    -------
    int
        The 8-bit ``dhc_h.num_lanes`` value.

    Raises
    ------
    ValueError
        If ``lanes`` fails :func:`check_lanes`.

    Examples
    --------
    >>> lanes_on_wire(32), lanes_on_wire(256), lanes_on_wire(0)
    (32, 0, 0)
    """
    if lanes:
        check_lanes(lanes)
    return lanes % MAX_LANES


def lanes_from_wire(num_lanes: int, pkt_type: int) -> int:
    """The lane count a ``num_lanes`` value announces (inverse of :func:`lanes_on_wire`).

    Parameters
    ----------
    num_lanes : int
        The ``dhc_h.num_lanes`` field.
    pkt_type : int
        The ``dhc_h.pkt_type`` field: 0 is 256 in DATA and RESULT, which always carry lanes, and
        0 in the probes, which carry none.

    Returns
    -------
    int
        Lanes the packet carries.

    Examples
    --------
    >>> lanes_from_wire(0, PacketType.RESULT), lanes_from_wire(0, PacketType.PROBE)
    (256, 0)
    """
    if num_lanes == 0 and pkt_type in (PacketType.DATA, PacketType.RESULT):
        return MAX_LANES
    return num_lanes


def pack_header(**values: int) -> bytes:
    """Serialise ``dhc_h`` from field values.

    Parameters
    ----------
    **values : int
        Field values by ``DHC_HEADER_FIELDS`` name; missing fields are 0 and ``version``
        defaults to ``DHC_VERSION``.

    Returns
    -------
    bytes
        The ``DHC_HEADER_BYTES`` (14) header bytes in network order.

    Raises
    ------
    ValueError
        For an unknown field name or a value that does not fit its width.

    See Also
    --------
    dhcwire.frames.encode_datagram : header and lanes of one datagram.
    dhcwire.frames.encode_frames : a whole round of datagrams as a numpy array.

    Examples
    --------
    >>> h = pack_header(pkt_type=PacketType.DATA, job_id=7, chunk=5, slot=slot_for_chunk(5, 4))
    >>> h.hex(" ")          # version 1 | DATA, level, job 7, ..., chunk 5, slot 0x8001
    '11 00 00 07 00 00 00 00 00 00 00 05 80 01'
    >>> pack_header(epoch=256)
    Traceback (most recent call last):
    ...
    ValueError: dhc_h.epoch=256 does not fit in 8 bits
    """
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
    """Parse ``dhc_h`` from the first ``DHC_HEADER_BYTES`` of ``data`` (inverse of
    :func:`pack_header`).

    Parameters
    ----------
    data : bytes
        A DHC UDP payload, or at least its first 14 bytes.

    Returns
    -------
    dict of str to int
        Every field of ``DHC_HEADER_FIELDS`` by name, in wire order.

    Raises
    ------
    ValueError
        If ``data`` is shorter than the header.

    Examples
    --------
    >>> fields = unpack_header(pack_header(pkt_type=PacketType.RESULT, job_id=7, chunk=5))
    >>> fields["pkt_type"], fields["job_id"], fields["chunk"], fields["version"]
    (2, 7, 5, 1)
    """
    if len(data) < DHC_HEADER_BYTES:
        raise ValueError(f"dhc_h needs {DHC_HEADER_BYTES} bytes, got {len(data)}")
    word = int.from_bytes(data[:DHC_HEADER_BYTES], "big")
    out: dict[str, int] = {}
    shift = DHC_HEADER_BYTES * 8
    for f in DHC_HEADER_FIELDS:
        shift -= f.bits
        out[f.name] = (word >> shift) & ((1 << f.bits) - 1)
    return out

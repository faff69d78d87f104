"""DHC packets on the host: a Scapy layer and a fast frame codec, both from ``dhcwire.header``.

The Scapy layer is for inspection, tests and tools (``sniff``, ``show()``); the transport
uses ``encode_datagram``/``decode_datagram`` on UDP payloads, which are plain ``struct``
and numpy and do ~1M headers/s.  Both are generated from ``dhcwire.header.DHC_HEADER_FIELDS``,
the one host-side definition of the format.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scapy.fields import BitField, FieldListField, XIntField
from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers

from dhcwire import header as wire


class DHC(Packet):
    """``dhc_h`` followed by ``num_lanes`` 32-bit lanes."""

    name = "DHC"
    fields_desc = [BitField(f.name, wire.DHC_VERSION if f.name == "version" else 0, f.bits)
                   for f in wire.DHC_HEADER_FIELDS] + [
        FieldListField("lanes", [], XIntField("lane", 0),
                       count_from=lambda pkt: wire.lanes_from_wire(pkt.num_lanes, pkt.pkt_type),
                       max_count=wire.MAX_LANES),
    ]

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s


bind_layers(UDP, DHC, dport=wire.DHC_UDP_PORT)


#: Largest session epoch: ``dhc_h.epoch`` is bit<8> (docs/recovery.md).
MAX_EPOCH: int = (1 << {f.name: f.bits for f in wire.DHC_HEADER_FIELDS}.get("epoch", 8)) - 1


class MalformedPacket(ValueError):
    """A datagram on the DHC port that is not a well-formed DHC packet."""


@dataclass(frozen=True)
class Datagram:
    """A parsed DHC UDP payload."""

    pkt_type: int
    level: int
    job_id: int
    child_id: int
    chunk: int
    slot: int
    lanes: np.ndarray  # uint32, length num_lanes
    flags: int = 0
    epoch: int = 0      # the job session the frame belongs to (docs/recovery.md)


def encode_datagram(pkt_type: int, level: int, job_id: int, child_id: int, chunk: int,
                    slot: int, lanes: np.ndarray, flags: int = 0, epoch: int = 0) -> bytes:
    """UDP payload for one chunk: ``dhc_h`` + lanes in network order."""
    lanes = np.asarray(lanes)
    if lanes.dtype != np.uint32 or lanes.ndim != 1:
        raise ValueError(f"lanes must be a 1-D uint32 array, got {lanes.dtype} {lanes.shape}")
    header = wire.pack_header(pkt_type=pkt_type, level=level, job_id=job_id, child_id=child_id,
                              flags=flags, num_lanes=wire.lanes_on_wire(len(lanes)), epoch=epoch, chunk=chunk,
                              slot=slot)
    return header + lanes.astype(">u4").tobytes()


def decode_datagram(payload: bytes, expected_lanes: int | None = None) -> Datagram:
    """Parse a UDP payload; raise MalformedPacket naming what is wrong."""
    if len(payload) < wire.DHC_HEADER_BYTES:
        raise MalformedPacket(f"short packet: {len(payload)} bytes < dhc_h ({wire.DHC_HEADER_BYTES})")
    h = wire.unpack_header(payload)
    if h["version"] != wire.DHC_VERSION:
        raise MalformedPacket(f"bad version {h['version']} (expected {wire.DHC_VERSION})")
    if h["pkt_type"] not in set(wire.PacketType):
        raise MalformedPacket(f"unknown packet type {h['pkt_type']}")
    n = wire.lanes_from_wire(h["num_lanes"], h["pkt_type"])
    if expected_lanes is not None and n != expected_lanes:
        raise MalformedPacket(f"wrong lane count {n} (expected {expected_lanes})")
    body = payload[wire.DHC_HEADER_BYTES:]
    if len(body) != n * wire.LANE_BYTES:
        raise MalformedPacket(f"lane bytes {len(body)} != num_lanes {n} x {wire.LANE_BYTES}")
    lanes = np.frombuffer(body, dtype=">u4").astype(np.uint32)
    return Datagram(pkt_type=h["pkt_type"], level=h["level"], job_id=h["job_id"],
                    child_id=h["child_id"], chunk=h["chunk"], slot=h["slot"], lanes=lanes,
                    flags=h["flags"], epoch=h["epoch"])

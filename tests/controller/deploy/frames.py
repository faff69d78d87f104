"""Frames as workers put them on the wire, built with Scapy and ``dhcwire.header`` (never from P4)."""

from __future__ import annotations

import struct

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

from dhcwire import header as wire


def dhc_data(
    src_mac: str,
    src_ip: str,
    dst_mac: str,
    dst_ip: str,
    lanes: list[int],
    *,
    job: int,
    child_id: int,
    chunk: int,
    window: int,
    level: int,
) -> bytes:
    hdr = wire.pack_header(pkt_type=int(wire.PacketType.DATA), level=level, job_id=job, child_id=child_id,
                           num_lanes=wire.lanes_on_wire(len(lanes)), chunk=chunk,
                           slot=wire.slot_for_chunk(chunk, window))
    body = hdr + struct.pack(f"!{len(lanes)}I", *[v & 0xFFFFFFFF for v in lanes])
    return bytes(Ether(src=src_mac, dst=dst_mac) / IP(src=src_ip, dst=dst_ip, ttl=64)
                 / UDP(sport=40000, dport=wire.DHC_UDP_PORT) / body)


def parse_result(frame: bytes, lanes: int) -> tuple[str, str, dict[str, int], list[int]]:
    """(dst MAC, dst IP, dhc header, lanes) of a DHC frame."""
    pkt = Ether(frame)
    raw = bytes(pkt[UDP].payload)
    hdr = wire.unpack_header(raw)
    body = raw[wire.DHC_HEADER_BYTES:wire.DHC_HEADER_BYTES + 4 * lanes]
    return pkt.dst, pkt[IP].dst, hdr, list(struct.unpack(f"!{lanes}I", body))


def arp_request(src_mac: str, src_ip: str, target_ip: str) -> bytes:
    return bytes(Ether(src=src_mac, dst="ff:ff:ff:ff:ff:ff")
                 / ARP(op=1, hwsrc=src_mac, psrc=src_ip, hwdst="00:00:00:00:00:00", pdst=target_ip))


def arp_answer(frame: bytes) -> str:
    """The MAC an ARP reply announces."""
    pkt = Ether(frame)
    assert pkt[ARP].op == 2, "not an ARP reply"
    return pkt[ARP].hwsrc

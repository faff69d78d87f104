"""STF scenario of issue 30 (items 2 and 6): anti-spoofing, IPv4 fragments, trailing payload."""

from __future__ import annotations

import struct

from scapy.layers.inet import ICMP, IP, UDP
from scapy.layers.l2 import Ether

from dhcwire import header as wire
from tests.p4src.stf.frames import HEADER, SW_IP, SW_MAC, K, W, data, hexs, ip_hex, result_to, setup


def _frame(src_mac: str, src_ip: str, lanes: list[int], *, flags: str = "", trailing: bytes = b"",
           **hdr: int) -> bytes:
    """A DATA (or RESULT) to the switch with IPv4 flags and bytes after the lanes."""
    payload = wire.pack_header(num_lanes=K, **hdr) + struct.pack(f"!{len(lanes)}I", *lanes) + trailing
    return bytes(Ether(src=src_mac, dst=SW_MAC) / IP(src=src_ip, dst=SW_IP, id=1, flags=flags)
                 / UDP(sport=wire.worker_port(7), dport=wire.DHC_UDP_PORT) / payload)


def spoofed_fragmented_trailing() -> str:
    """Issue 30 items 2 and 6: the anti-spoofing tables, the "more fragments" flag and trailing
    payload.  Workers hang on ports 1-3 (host_port, host_source)."""
    sum_level = int(wire.Level.VALUE_SKETCH)
    slot = wire.slot_for_chunk(1, 4)
    common = dict(pkt_type=int(wire.PacketType.DATA), job_id=7, level=sum_level, chunk=1, slot=slot)
    out = [HEADER, "# IPv4 in on a host port from another source is dropped as spoofed (14): a RESULT\n"
           "# forged with the switch's own address, a DATA posing as another worker, a ping with\n"
           "# another host's source.  A DATA with \"more fragments\" set is not DHC (9); one with\n"
           "# 1,300 bytes of trailing payload is malformed (1).  None of them is aggregated: the\n"
           "# three real contributions still sum exactly.\n", setup({sum_level: 0})]
    for i, (_, ip) in enumerate(W):
        out.append(f"add host_source ingress_port:{i + 1} src_addr:{ip_hex(ip)} host_source_ok()\n")
        out.append(f"add host_port ingress_port:{i + 1} host_port_hit()\n")
    forged = _frame(W[0][0], SW_IP, [9, 9, 9, 9], **{**common, "pkt_type": int(wire.PacketType.RESULT)})
    out.append(f"packet 1 {hexs(forged)}\n")
    out.append(f"packet 1 {hexs(_frame(W[0][0], W[1][1], [7, 7, 7, 7], child_id=1, **common))}\n")
    ping = Ether(src=W[0][0], dst=SW_MAC) / IP(src=W[2][1], dst=W[1][1], id=5) / ICMP(type=8) / b"x"
    out.append(f"packet 1 {hexs(bytes(ping))}\n")
    mine = dict(child_id=0, **common)
    out.append(f"packet 1 {hexs(_frame(W[0][0], W[0][1], [5, 5, 5, 5], flags='MF', **mine))}\n")
    out.append(f"packet 1 {hexs(_frame(W[0][0], W[0][1], [5, 5, 5, 5], trailing=bytes(1300), **mine))}\n")
    out.append("wait\n")
    c = [[1, 2, 3, 4], [10, 20, 30, 40], [100, 200, 300, 400]]
    for w in range(2):
        out.append(f"packet {w + 1} {hexs(data(w, c[w], level=sum_level, chunk=1, slot=slot))}\n")
    out.append("wait\n")
    out.append(f"packet 3 {hexs(data(2, c[2], ident=9, level=sum_level, chunk=1, slot=slot))}\n")
    for w in range(3):
        res = result_to(w, [111, 222, 333, 444], ident=9, level=sum_level, chunk=1, slot=slot)
        out.append(f"expect {w + 1} {hexs(res)} $\n")
    out.append("wait\n")
    for idx, n in ((14, 3), (9, 1), (1, 1), (2, 0)):
        out.append(f"check_counter drop_counter({idx}) packets == {n}\n")
    out.append("check_counter job_contributions(2) packets == 3\n")
    return "".join(out)

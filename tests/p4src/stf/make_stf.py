"""Regenerate the STF files in this folder: ``.venv/bin/python -m tests.p4src.stf.make_stf``.

The packets sent and the packets expected are built with Scapy and ``dhcwire.header`` from the
behaviour p4src/README.md specifies (never from the P4 source); the STF files are checked in
so that they can be read and run on their own (softswitch, or p4c's BMv2 STF runner).  They are
written in p4c's dialect: lpm keys as hex digits with ``*`` for the bits outside the prefix, and the
register checks p4c's runner lacks as ``#!softswitch register_read NAME INDEX VALUE`` (a comment
there, a check here).
"""

from __future__ import annotations

import struct
from pathlib import Path

from scapy.layers.inet import ICMP, IP, UDP
from scapy.layers.l2 import ARP, Ether

from dhcwire import header as wire

HERE = Path(__file__).resolve().parent
K = 4
SW_MAC, SW_IP = "00:00:00:00:01:00", "10.0.0.100"
W = [(f"00:00:00:00:00:0{i + 1}", f"10.0.0.{i + 1}") for i in range(3)]
HEADER = "# defines: DHC_LANES=4 DHC_POOL_SIZE=64 DHC_MAX_JOBS=16\n"


def ip_hex(ip: str) -> str:
    return "0x" + "".join(f"{int(x):02x}" for x in ip.split("."))


def lpm_hex(ip: str, plen: int) -> str:
    """An lpm key as p4c's STF runner writes it: ``0x0a0000**`` for 10.0.0.0/24."""
    assert plen % 4 == 0, "p4c's hex form needs a prefix length that is a multiple of 4"
    digits = ip_hex(ip)[2:]
    return "0x" + digits[: plen // 4] + "*" * (8 - plen // 4)


def mac_hex(mac: str) -> str:
    return "0x" + mac.replace(":", "")


def hexs(frame: bytes) -> str:
    h = frame.hex().upper()
    return " ".join(h[i:i + 8] for i in range(0, len(h), 8))


def dhc(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, lanes: list[int], *, ident: int = 1,
        sport: int = 40000, dport: int = wire.DHC_UDP_PORT, udp_csum: int | None = None, ttl: int = 64,
        **hdr: int) -> bytes:
    hdr.setdefault("num_lanes", K)
    payload = wire.pack_header(**hdr) + struct.pack(f"!{len(lanes)}I", *[v & 0xFFFFFFFF for v in lanes])
    udp = UDP(sport=sport, dport=dport) if udp_csum is None else \
        UDP(sport=sport, dport=dport, chksum=udp_csum)
    ip = IP(src=src_ip, dst=dst_ip, ttl=ttl, id=ident)
    return bytes(Ether(src=src_mac, dst=dst_mac) / ip / udp / payload)


def data(w: int, lanes: list[int], *, ident: int = 1, child_id: int | None = None, **hdr: int) -> bytes:
    hdr.setdefault("pkt_type", int(wire.PacketType.DATA))
    hdr.setdefault("job_id", 7)
    return dhc(W[w][0], SW_MAC, W[w][1], SW_IP, lanes, ident=ident, sport=wire.worker_port(hdr["job_id"]),
               child_id=w if child_id is None else child_id, **hdr)


def result_to(w: int, lanes: list[int], *, ident: int, **hdr: int) -> bytes:
    """What a worker receives from the root: RESULT, switch -> worker, UDP DHC -> the job's worker
    port, checksum 0."""
    hdr.setdefault("job_id", 7)
    return dhc(SW_MAC, W[w][0], SW_IP, W[w][1], lanes, ident=ident, sport=wire.DHC_UDP_PORT,
               dport=wire.worker_port(hdr["job_id"]), udp_csum=0,
               pkt_type=int(wire.PacketType.RESULT), child_id=0, **hdr)


def setup(job_levels: dict[int, int]) -> str:
    lines = [
        f"setdefault switch_config set_switch_mac(mac:{mac_hex(SW_MAC)})",
        f"add local_addr dst_addr:{ip_hex(SW_IP)} set_local()",
        "add job_table job_id:7 set_job(base:10, window:4, fan_in:3, mcast_grp:1, is_root:1, uplink_port:0, "
        f"parent_child_id:0, own_addr:{ip_hex(SW_IP)}, parent_addr:0, stats_idx:2)",
        "add epoch_table job_id:7 epoch:0 current_epoch()",
    ]
    for level, op in job_levels.items():
        lines.append(f"add level_table job_id:7 level:{level} set_op(op:{op})")
    for i, (mac, ip) in enumerate(W):
        lines.append(f"add child_table job_id:7 ingress_port:{i + 1} src_addr:{ip_hex(ip)} child_id:{i} "
                     f"set_child(child_mask:{1 << i})")
        lines.append(f"add result_rewrite egress_rid:{i + 1} rewrite(dmac:{mac_hex(mac)}, dip:{ip_hex(ip)}, "
                     f"smac:{mac_hex(SW_MAC)}, sip:{ip_hex(SW_IP)}, dport:{wire.worker_port(7)})")
        lines.append(f"add ipv4_lpm dst_addr:{lpm_hex(ip, 32)} set_nhop(dmac:{mac_hex(mac)}, port:{i + 1})")
    lines.append("mc_mgrp_create 1")
    for i in range(3):
        lines.append(f"mc_node_create {i + 1} {i + 1}")
    for i in range(3):
        lines.append(f"mc_node_associate 1 {i}")
    return "\n".join(lines) + "\n"


def sum_three_workers() -> str:
    sum_level = int(wire.Level.VALUE_SKETCH)
    c = [[1, 2, 3, 0xFFFFFFFF], [10, 20, 30, 1], [100, 200, 300, 0x7FFFFFFF]]
    total = [111, 222, 333, 0x7FFFFFFF]
    out = [HEADER, "# Three workers complete a SUM slot (chunk 5 = slot 1, set 1) at a root; a late\n"
           "# retransmission gets the stored result back by unicast, without being added again.\n",
           setup({sum_level: 0})]
    slot = wire.slot_for_chunk(5, 4)
    for w in range(2):
        out.append(f"packet {w + 1} {hexs(data(w, c[w], level=sum_level, chunk=5, slot=slot))}\n")
    out.append("wait\n")
    out.append(f"packet 3 {hexs(data(2, c[2], ident=9, level=sum_level, chunk=5, slot=slot))}\n")
    for w in range(3):
        res = result_to(w, total, ident=9, level=sum_level, chunk=5, slot=slot)
        out.append(f"expect {w + 1} {hexs(res)} $\n")
    out.append("wait\n# worker 1 lost its copy: retransmits (other data), gets the stored sum\n")
    out.append(f"packet 2 {hexs(data(1, [5, 5, 5, 5], ident=3, level=sum_level, chunk=5, slot=slot))}\n")
    out.append(f"expect 2 {hexs(result_to(1, total, ident=3, level=sum_level, chunk=5, slot=slot))} $\n")
    out.append("wait\n")
    out.append("#!softswitch register_read lane_3 13 0x7fffffff\n")
    out.append("#!softswitch register_read slot_count 13 3\n")
    out.append("check_counter job_contributions(2) packets == 3\n")
    out.append("check_counter job_duplicates(2) packets == 1\n")
    out.append("check_counter job_results(2) packets == 2\n")
    return "".join(out)


def or_duplicates_drops() -> str:
    or_level = int(wire.Level.ELEMENT_INDEX)
    c = [[0x1, 0xF0, 0, 0x80000000], [0x2, 0x0F, 0, 0x1], [0x4, 0xF0, 0, 0x80000000]]
    total = [0x7, 0xFF, 0, 0x80000001]
    out = [HEADER, "# An OR slot with a duplicate before completion, and packets that must be dropped\n"
           "# and counted by reason (drop_counter indexes: 1 malformed, 2 unauthorised, 3 no job,\n"
           "# 5 duplicate of an incomplete slot).\n", setup({or_level: 1})]
    out.append(f"packet 1 {hexs(data(0, c[0], level=or_level))}\n")
    out.append("# duplicate from worker 0, before completion: dropped, not ORed twice (would not show\n"
               "# for OR alone, so the counter checks it)\n")
    out.append(f"packet 1 {hexs(data(0, [0xFFFFFFFF] * 4, level=or_level))}\n")
    out.append("# worker 0's packet on worker 1's port; worker 1 claiming child id 0\n")
    out.append(f"packet 2 {hexs(data(0, c[0], level=or_level))}\n")
    out.append(f"packet 2 {hexs(data(1, c[1], level=or_level, child_id=0))}\n")
    out.append("# unknown job 8\n")
    out.append(f"packet 1 {hexs(data(0, c[0], level=or_level, job_id=8))}\n")
    out.append("# bad version 2; truncated lanes\n")
    out.append(f"packet 1 {hexs(data(0, c[0], level=or_level, version=2))}\n")
    out.append(f"packet 1 {hexs(data(0, c[0], level=or_level)[:-2])}\n")
    out.append("wait\n")
    out.append(f"packet 2 {hexs(data(1, c[1], level=or_level))}\n")
    out.append(f"packet 3 {hexs(data(2, c[2], ident=4, level=or_level))}\n")
    for w in range(3):
        out.append(f"expect {w + 1} {hexs(result_to(w, total, ident=4, level=or_level))} $\n")
    out.append("wait\n")
    for idx, n in ((1, 2), (2, 2), (3, 1), (5, 1), (4, 0), (6, 0)):
        out.append(f"check_counter drop_counter({idx}) packets == {n}\n")
    out.append("check_counter job_contributions(2) packets == 3\n")
    return "".join(out)


def arp_ipv4() -> str:
    w0_mac, w0_ip = W[0]
    w2_mac, w2_ip = W[2]
    req = Ether(src=w0_mac, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=w0_mac, psrc=w0_ip, pdst=SW_IP)
    rep = Ether(src=SW_MAC, dst=w0_mac) / ARP(op=2, hwsrc=SW_MAC, psrc=SW_IP, hwdst=w0_mac, pdst=w0_ip)
    icmp = ICMP(type=8, id=1, seq=1) / b"ping"
    ping = Ether(src=w0_mac, dst=SW_MAC) / IP(src=w0_ip, dst=w2_ip, ttl=64, id=5) / icmp
    routed = Ether(src=SW_MAC, dst=w2_mac) / IP(src=w0_ip, dst=w2_ip, ttl=63, id=5) / icmp
    return "".join([
        HEADER, "# The switch answers ARP for its own address and routes IPv4 by ipv4_lpm.\n",
        f"setdefault switch_config set_switch_mac(mac:{mac_hex(SW_MAC)})\n",
        f"add arp_table target_addr:{ip_hex(SW_IP)} arp_reply(mac:{mac_hex(SW_MAC)})\n",
        f"add ipv4_lpm dst_addr:{lpm_hex('10.0.0.0', 24)} set_nhop(dmac:{mac_hex(w2_mac)}, port:3)\n",
        f"packet 1 {hexs(bytes(req))}\n",
        f"expect 1 {hexs(bytes(rep))} $\n",
        "wait\n",
        f"packet 1 {hexs(bytes(ping))}\n",
        f"expect 3 {hexs(bytes(routed))} $\n",
        "wait\n",
        "# no route; TTL 1\n",
        f"packet 1 {hexs(bytes(Ether(src=w0_mac, dst=SW_MAC) / IP(src=w0_ip, dst='10.1.0.1') / icmp))}\n",
        f"packet 1 {hexs(bytes(Ether(src=w0_mac, dst=SW_MAC) / IP(src=w0_ip, dst=w2_ip, ttl=1) / icmp))}\n",
        "wait\n",
        "check_counter drop_counter(6) packets == 1\n",
        "check_counter drop_counter(7) packets == 1\n",
    ])


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


FILES = {"sum_three_workers.stf": sum_three_workers, "or_duplicates_drops.stf": or_duplicates_drops,
         "arp_ipv4.stf": arp_ipv4, "spoofed_fragmented_trailing.stf": spoofed_fragmented_trailing}


def main() -> None:
    for name, make in FILES.items():
        (HERE / name).write_text(make())


if __name__ == "__main__":
    main()

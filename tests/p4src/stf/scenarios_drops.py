"""STF scenario: every ingress drop reason the root switch of job 7 can count, the IPv4 checksum
(verified on arrival, recomputed on the way out) and ARP (p4src/README.md, "Verdict", drop
reasons).  No frame of it but the transit one and the ARP reply comes out; drop_counter[r] counts
each reason.  The egress reason (11) is in non_root_tree.stf, 5 and 3 also in
or_duplicates_drops.stf, 6 and 7 in arp_ipv4.stf.
"""

from __future__ import annotations

from scapy.layers.inet import ICMP, IP, UDP
from scapy.layers.l2 import ARP, Ether

from dhcwire import header as wire
from tests.p4src.stf.frames import (
    HEADER,
    SW_IP,
    SW_MAC,
    W,
    data,
    hexs,
    ip_hex,
    lpm_hex,
    mac_hex,
    setup,
)

LEVEL = int(wire.Level.VALUE_SKETCH)
OTHER_MAC, OTHER_IP = "00:00:00:00:00:0b", "10.0.0.11"


def _bad_checksum(frame: bytes) -> bytes:
    """``frame`` with its IPv4 header checksum (bytes 24-25) off by one."""
    csum = int.from_bytes(frame[24:26], "big") ^ 1
    return frame[:24] + csum.to_bytes(2, "big") + frame[26:]


def _arp(op: int, pdst: str, *, hlen: int = 6) -> bytes:
    """An ARP frame from worker 0; ``hlen`` patched into the header (the fields stay 6 bytes)."""
    w_mac, w_ip = W[0]
    frame = bytes(Ether(src=w_mac, dst="ff:ff:ff:ff:ff:ff") / ARP(op=op, hwsrc=w_mac, psrc=w_ip, pdst=pdst))
    return frame[:18] + bytes([hlen]) + frame[19:]


def _drops(slot: int) -> list[tuple[int, str, bytes]]:
    """(reason, what, frame) for every frame sent on port 1 that must be dropped."""
    w_mac, w_ip = W[0]
    udp_other = Ether(src=w_mac, dst=SW_MAC) / IP(src=w_ip, dst=SW_IP) / UDP(sport=1234, dport=53) / b"x"
    options = Ether(src=w_mac, dst=SW_MAC) / IP(src=w_ip, dst=SW_IP, options=b"\x01\x01\x01\x00") / b"x"
    return [
        (1, "IPv4 with options", bytes(options)),
        (1, "slot 4 >= window 4", data(0, [1, 1, 1, 1], level=LEVEL, slot=4)),
        (1, "num_lanes 2 at a local address", data(0, [1, 1, 1, 1], level=LEVEL, num_lanes=2)),
        (1, "ARP with hlen 5", _arp(1, SW_IP, hlen=5)),
        (2, "RESULT at the root", data(0, [1, 1, 1, 1], level=LEVEL, pkt_type=int(wire.PacketType.RESULT))),
        (2, "child id 1 on worker 0's port", data(0, [1, 1, 1, 1], level=LEVEL, child_id=1)),
        (4, "level with no level_table entry", data(0, [1, 1, 1, 1], level=9)),
        (4, "level whose op is 2", data(0, [1, 1, 1, 1], level=5)),
        (8, "ARP reply", _arp(2, SW_IP)),
        (8, "ARP request for an address not in arp_table", _arp(1, OTHER_IP)),
        (9, "UDP to port 53 of the switch", bytes(udp_other)),
        (9, "ping to the switch", bytes(Ether(src=w_mac, dst=SW_MAC) / IP(src=w_ip, dst=SW_IP) / ICMP())),
        (10, "IPv6", bytes(Ether(src=w_mac, dst=SW_MAC, type=0x86DD) / (b"\x60" + b"\x00" * 39))),
        (12, "epoch 3 (the job is in epoch 0)", data(0, [1, 1, 1, 1], level=LEVEL, slot=slot, epoch=3)),
        (13, "DHC frame with a bad IPv4 checksum",
         _bad_checksum(data(0, [1, 1, 1, 1], level=LEVEL, slot=slot))),
        (13, "transit frame with a bad IPv4 checksum",
         _bad_checksum(bytes(Ether(src=w_mac, dst=SW_MAC) / IP(src=w_ip, dst=OTHER_IP) / ICMP()))),
    ]


def drop_reasons() -> str:
    w_mac, w_ip = W[0]
    slot = wire.slot_for_chunk(1, 4)
    out = [HEADER, "# Every ingress drop reason, the IPv4 checksum and ARP at the root of job 7\n"
           "# (scenarios_drops.py).\n", setup({LEVEL: 0, 5: 2}),
           f"add arp_table target_addr:{ip_hex(SW_IP)} arp_reply(mac:{mac_hex(SW_MAC)})\n",
           f"add ipv4_lpm dst_addr:{lpm_hex(OTHER_IP, 32)} set_nhop(dmac:{mac_hex(OTHER_MAC)}, port:4)\n"]
    counts: dict[int, int] = {}
    for reason, what, frame in _drops(slot):
        out.append(f"# drop {reason}: {what}\npacket 1 {hexs(frame)}\n")
        counts[reason] = counts.get(reason, 0) + 1
    out.append("wait\n# a DHC frame to another address is transit: routed as IPv4 (TTL - 1, new checksum),\n"
               "# its lanes untouched\n")
    transit = data(0, [1, 2, 3, 4], ident=31, level=LEVEL, slot=slot)
    routed = Ether(transit)
    routed[Ether].src, routed[Ether].dst = SW_MAC, OTHER_MAC
    routed[IP].dst = OTHER_IP
    sent = routed.copy()
    sent[Ether].src, sent[Ether].dst = w_mac, SW_MAC
    del sent[IP].chksum
    routed[IP].ttl -= 1
    del routed[IP].chksum
    out.append(f"packet 1 {hexs(bytes(sent))}\nexpect 4 {hexs(bytes(routed))} $\n")
    out.append("wait\n# an ARP request for the switch's address is answered out of the same port\n")
    rep = Ether(src=SW_MAC, dst=w_mac) / ARP(op=2, hwsrc=SW_MAC, psrc=SW_IP, hwdst=w_mac, pdst=w_ip)
    out.append(f"packet 1 {hexs(_arp(1, SW_IP))}\nexpect 1 {hexs(bytes(rep))} $\nwait\n")
    for reason in sorted(set(range(1, 14)) - {11}):
        out.append(f"check_counter drop_counter({reason}) packets == {counts.get(reason, 0)}\n")
    out.append("check_counter job_contributions(2) packets == 0\n")
    return "".join(out)

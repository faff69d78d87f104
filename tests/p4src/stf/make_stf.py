"""Regenerate the STF files in this folder: ``.venv/bin/python -m tests.p4src.stf.make_stf``.

The packets sent and the packets expected are built with Scapy and ``dhcwire.header`` from the
behaviour p4src/README.md specifies (never from the P4 source); the STF files are checked in
so that they can be read and run on their own (softswitch, or p4c's BMv2 STF runner).  They are
written in p4c's dialect: lpm keys as hex digits with ``*`` for the bits outside the prefix, and the
register checks p4c's runner lacks as ``#!softswitch register_read NAME INDEX VALUE`` (a comment
there, a check here).
"""

from __future__ import annotations

from pathlib import Path

from scapy.layers.inet import ICMP, IP
from scapy.layers.l2 import ARP, Ether

from dhcwire import header as wire
from tests.p4src.stf import (
    scenarios_drops,
    scenarios_replay,
    scenarios_security,
    scenarios_state,
    scenarios_tree,
)
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
    result_to,
    setup,
)

HERE = Path(__file__).resolve().parent


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


FILES = {"sum_three_workers.stf": sum_three_workers, "or_duplicates_drops.stf": or_duplicates_drops,
         "arp_ipv4.stf": arp_ipv4, "non_root_tree.stf": scenarios_tree.non_root_tree,
         "epochs.stf": scenarios_state.epochs, "shadow_sets.stf": scenarios_state.shadow_sets,
         "drop_reasons.stf": scenarios_drops.drop_reasons,
         "spoofed_fragmented_trailing.stf": scenarios_security.spoofed_fragmented_trailing,
         "stale_chunks.stf": scenarios_replay.stale_chunks}


def main() -> None:
    for name, make in FILES.items():
        (HERE / name).write_text(make())


if __name__ == "__main__":
    main()

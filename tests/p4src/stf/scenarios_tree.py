"""STF scenario: the same switch as a non-root aggregator of job 7 (p4src/README.md, "Completion").

Its parent (10.0.1.1, MAC ...:aa) hangs on port 4; this switch is child 2 there.  A completed slot
goes up as this switch's DATA (routed by ipv4_lpm: TTL 64 - 1, the switch MAC as source), a
duplicate of a complete slot goes up again with the stored partial, a duplicate of an incomplete
slot is dropped (5), and a RESULT from the parent on the uplink is multicast down, each replica
rewritten for its child by result_rewrite in egress.  A replica without a rewrite entry is dropped
in egress (egress_drop_counter 11); a RESULT from elsewhere is unauthorised (2).
"""

from __future__ import annotations

from dhcwire import header as wire
from tests.p4src.stf.frames import (
    HEADER,
    SW_IP,
    SW_MAC,
    W,
    data,
    dhc,
    expect,
    ip_hex,
    lpm_hex,
    mac_hex,
    result_to,
    send,
)

PARENT_MAC, PARENT_IP = "00:00:00:00:00:aa", "10.0.1.1"
UPLINK, PARENT_CHILD_ID = 4, 2
LEVEL = int(wire.Level.VALUE_SKETCH)


def _setup() -> str:
    lines = [
        f"setdefault switch_config set_switch_mac(mac:{mac_hex(SW_MAC)})",
        f"add local_addr dst_addr:{ip_hex(SW_IP)} set_local()",
        "add job_table job_id:7 set_job(base:10, window:4, fan_in:3, mcast_grp:1, is_root:0, "
        f"uplink_port:{UPLINK}, parent_child_id:{PARENT_CHILD_ID}, own_addr:{ip_hex(SW_IP)}, "
        f"parent_addr:{ip_hex(PARENT_IP)}, stats_idx:2)",
        "add epoch_table job_id:7 epoch:0 current_epoch()",
        f"add level_table job_id:7 level:{LEVEL} set_op(op:0)",
        f"add ipv4_lpm dst_addr:{lpm_hex(PARENT_IP, 32)} set_nhop(dmac:{mac_hex(PARENT_MAC)}, port:{UPLINK})",
    ]
    for i, (mac, ip) in enumerate(W):
        lines.append(f"add child_table job_id:7 ingress_port:{i + 1} src_addr:{ip_hex(ip)} child_id:{i} "
                     f"set_child(child_mask:{1 << i})")
        lines.append(f"add result_rewrite egress_rid:{i + 1} rewrite(dmac:{mac_hex(mac)}, dip:{ip_hex(ip)}, "
                     f"smac:{mac_hex(SW_MAC)}, sip:{ip_hex(SW_IP)}, dport:{wire.worker_port(7)})")
    lines.append("mc_mgrp_create 1")
    for i in range(3):
        lines.append(f"mc_node_create {i + 1} {i + 1}")
    lines.append("mc_node_create 9 5")                       # rid 9 on port 5: no rewrite entry
    for i in range(4):
        lines.append(f"mc_node_associate 1 {i}")
    return "\n".join(lines) + "\n"


def partial_up(lanes: list[int], *, ident: int, chunk: int, slot: int) -> bytes:
    """This switch's DATA to its parent, as ipv4_lpm sends it out of the uplink."""
    return dhc(SW_MAC, PARENT_MAC, SW_IP, PARENT_IP, lanes, ident=ident, sport=wire.DHC_UDP_PORT,
               udp_csum=0, ttl=63, pkt_type=int(wire.PacketType.DATA), job_id=7, level=LEVEL,
               child_id=PARENT_CHILD_ID, chunk=chunk, slot=slot)


def result_from_parent(lanes: list[int], *, ident: int, chunk: int, slot: int,
                       src_ip: str = PARENT_IP) -> bytes:
    return dhc(PARENT_MAC, SW_MAC, src_ip, SW_IP, lanes, ident=ident, sport=wire.DHC_UDP_PORT,
               udp_csum=0, pkt_type=int(wire.PacketType.RESULT), job_id=7, level=LEVEL, child_id=0,
               chunk=chunk, slot=slot)


def non_root_tree() -> str:
    c = [[1, 2, 3, 4], [10, 20, 30, 40], [100, 200, 300, 0xFFFFFFFF]]
    partial = [111, 222, 333, 43]
    slot = wire.slot_for_chunk(2, 4)
    out = [HEADER, "# A non-root aggregator of job 7: partials up, duplicates, the parent's RESULT down\n"
           "# with a rewrite per replica (scenarios_tree.py says what each step checks).\n", _setup()]
    out.append(send(1, data(0, c[0], level=LEVEL, chunk=2, slot=slot)))
    out.append("# worker 0 again before the slot is complete: dropped (5)\n")
    out.append(send(1, data(0, c[0], level=LEVEL, chunk=2, slot=slot)))
    out.append(send(2, data(1, c[1], level=LEVEL, chunk=2, slot=slot)))
    out.append("wait\n# the third contribution completes the slot: the partial goes up\n")
    out.append(send(3, data(2, c[2], ident=6, level=LEVEL, chunk=2, slot=slot)))
    out.append(expect(UPLINK, partial_up(partial, ident=6, chunk=2, slot=slot)))
    out.append("wait\n# worker 1 retransmits: the stored partial goes up again (the parent answers)\n")
    out.append(send(2, data(1, [9, 9, 9, 9], ident=7, level=LEVEL, chunk=2, slot=slot)))
    out.append(expect(UPLINK, partial_up(partial, ident=7, chunk=2, slot=slot)))
    out.append("wait\n# the parent's RESULT comes down: one rewritten copy per worker, rid 9 dropped\n")
    total = [5000, 6000, 7000, 8000]
    out.append(send(UPLINK, result_from_parent(total, ident=8, chunk=2, slot=slot)))
    for w in range(3):
        out.append(expect(w + 1, result_to(w, total, ident=8, level=LEVEL, chunk=2, slot=slot)))
    out.append("wait\n# a RESULT on a worker port, and one on the uplink from another address:\n"
               "# unauthorised\n")
    out.append(send(1, result_from_parent(total, ident=8, chunk=2, slot=slot)))
    out.append(send(UPLINK, result_from_parent(total, ident=8, chunk=2, slot=slot, src_ip='10.0.1.2')))
    out.append("wait\n")
    for idx, n in ((2, 2), (5, 1)):
        out.append(f"check_counter drop_counter({idx}) packets == {n}\n")
    out.append("check_counter egress_drop_counter(11) packets == 1\n")
    out.append("check_counter job_contributions(2) packets == 3\n")
    out.append("check_counter job_completions(2) packets == 1\n")
    out.append("check_counter job_duplicates(2) packets == 2\n")
    out.append("check_counter job_results(2) packets == 1\n")
    return "".join(out)

"""Frames and control-plane lines shared by the STF generators (``make_stf`` and the scenario
modules): a root switch of job 7 with three workers on ports 1-3, K = 4, pool 64, W = 4.

Packets are built with Scapy and ``dhcwire.header`` from the behaviour p4src/README.md specifies
(never from the P4 source)."""

from __future__ import annotations

import struct

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from dhcwire import header as wire

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




def send(port: int, frame: bytes) -> str:
    """An STF ``packet`` line."""
    return f"packet {port} {hexs(frame)}\n"


def expect(port: int, frame: bytes) -> str:
    """An STF ``expect`` line for exactly ``frame``."""
    return f"expect {port} {hexs(frame)} $\n"

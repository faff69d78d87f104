"""Test fixtures for p4src/dhc.p4: packet builders and switch configurations.

Packets are built with Scapy and ``dhc.wire`` (never from the P4 source), and
switches are programmed only through the documented control-plane contract in
``p4src/README.md`` (P4Info names, key names, action parameters).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

from dhc import wire

REPO = Path(__file__).resolve().parents[2]
PROGRAM = str(REPO / "p4src" / "dhc.p4")
STF_DIR = Path(__file__).resolve().parent / "stf"

# P4Info names (p4src/README.md, "Control-plane contract")
T_LOCAL = "DhcIngress.dhc_index.local_addr"
T_JOB = "DhcIngress.dhc_index.job_table"
T_LEVEL = "DhcIngress.dhc_index.level_table"
T_CHILD = "DhcIngress.dhc_index.child_table"
T_EPOCH = "DhcIngress.dhc_index.epoch_table"
T_SWITCH = "DhcIngress.forwarding.switch_config"
T_ARP = "DhcIngress.forwarding.arp_table"
T_LPM = "DhcIngress.forwarding.ipv4_lpm"
T_REWRITE = "DhcEgress.rewrite.result_rewrite"
C_DROP = "DhcIngress.drops.drop_counter"
C_EGRESS_DROP = "DhcEgress.rewrite.egress_drop_counter"
C_CONTRIB = "DhcIngress.stats.job_contributions"
C_COMPLETE = "DhcIngress.stats.job_completions"
C_DUP = "DhcIngress.stats.job_duplicates"
C_RESULTS = "DhcIngress.stats.job_results"

# drop_counter indexes (p4src/include/define.p4)
DROP_MALFORMED = 1
DROP_UNAUTHORISED = 2
DROP_NO_JOB = 3
DROP_NO_LEVEL = 4
DROP_DUP_PENDING = 5
DROP_NO_ROUTE = 6
DROP_TTL = 7
DROP_ARP = 8
DROP_LOCAL_NOT_DHC = 9
DROP_UNSUPPORTED = 10
DROP_NO_REWRITE = 11
DROP_STALE_EPOCH = 12
DROP_BAD_CHECKSUM = 13
DROP_REASONS = 16


def ip2int(addr: str) -> int:
    a, b, c, d = (int(x) for x in addr.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


def mac2int(mac: str) -> int:
    return int(mac.replace(":", ""), 16)


def load_switch(lanes: int = 4, pool: int = 64, max_jobs: int = 16):
    """Compile p4src/dhc.p4 on the softswitch with small sizes."""
    from softswitch import Switch

    return Switch.load(PROGRAM, defines={"DHC_LANES": str(lanes), "DHC_POOL_SIZE": str(pool),
                                         "DHC_MAX_JOBS": str(max_jobs)})


# ---------------------------------------------------------------- packets


@dataclass(frozen=True)
class Host:
    name: str
    mac: str
    ip: str


def dhc_frame(src: Host, dst_mac: str, dst_ip: str, lanes: list[int], *, job: int, chunk: int = 0,
              slot: int = 0, level: int = int(wire.Level.VALUE_SKETCH), child_id: int = 0,
              pkt_type: int = int(wire.PacketType.DATA), num_lanes: int | None = None,
              version: int = wire.DHC_VERSION, sport: int | None = None, ttl: int = 64,
              epoch: int = 0) -> bytes:
    """Ethernet | IPv4 | UDP | dhc_h | lanes, as a worker (or switch) puts it on the wire."""
    hdr = wire.pack_header(version=version, pkt_type=pkt_type, level=level, job_id=job, child_id=child_id,
                           num_lanes=len(lanes) if num_lanes is None else num_lanes, epoch=epoch, chunk=chunk,
                           slot=slot)
    payload = hdr + struct.pack(f"!{len(lanes)}I", *[v & 0xFFFFFFFF for v in lanes])
    pkt = (Ether(src=src.mac, dst=dst_mac) / IP(src=src.ip, dst=dst_ip, ttl=ttl, id=1)
           / UDP(sport=wire.worker_port(job) if sport is None else sport, dport=wire.DHC_UDP_PORT)
           / payload)
    return bytes(pkt)


@dataclass
class Parsed:
    """A DHC frame taken apart independently of the P4 program."""

    eth_src: str
    eth_dst: str
    ip_src: str
    ip_dst: str
    ttl: int
    ip_checksum_ok: bool
    udp_sport: int
    udp_dport: int
    udp_checksum: int
    header: dict[str, int]
    lanes: list[int]


def parse_dhc(frame: bytes, lanes: int) -> Parsed:
    pkt = Ether(frame)
    ip, udp = pkt[IP], pkt[UDP]
    raw = bytes(udp.payload)
    hdr = wire.unpack_header(raw)
    body = raw[wire.DHC_HEADER_BYTES:wire.DHC_HEADER_BYTES + 4 * lanes]
    if len(body) != 4 * lanes:
        raise AssertionError(f"DHC frame carries {len(body)} lane bytes, expected {4 * lanes}")
    chk = IP(bytes(ip))
    stored = chk.chksum
    del chk.chksum
    recomputed = IP(bytes(chk)).chksum
    return Parsed(pkt.src, pkt.dst, ip.src, ip.dst, ip.ttl, stored == recomputed, udp.sport, udp.dport,
                  udp.chksum, hdr, list(struct.unpack(f"!{lanes}I", body)))


def arp_request(src: Host, target_ip: str) -> bytes:
    return bytes(Ether(src=src.mac, dst="ff:ff:ff:ff:ff:ff")
                 / ARP(op=1, hwsrc=src.mac, psrc=src.ip, hwdst="00:00:00:00:00:00", pdst=target_ip))


# ---------------------------------------------------------------- configurations


@dataclass
class Child:
    """A child of an aggregator: who it is, where it hangs, how results reach it."""

    host: Host           # its address (worker, or lower aggregator's job address)
    port: int
    child_id: int        # its index at this aggregator (bit child_id of the bitmap)
    rid: int             # replica id of its copy of the RESULT
    is_switch: bool = False  # a lower aggregator listens on DHC_UDP_PORT, a worker on its job's port


@dataclass
class Aggregator:
    """One aggregating switch's view of one job."""

    job: int
    base: int
    window: int
    children: list[Child]
    own: Host                          # the switch's address for this job
    mcast_grp: int = 1
    stats_idx: int = 0
    parent: Host | None = None         # None = root
    uplink_port: int = 0
    parent_child_id: int = 0
    levels: dict[int, int] = field(default_factory=lambda: {int(lv): int(op) for lv, op in wire.LEVEL_OPS.items()})
    epoch: int = 0                     # the job's current session


def program_switch_basics(sw, own: Host, routes: dict[str, tuple[str, int]]) -> None:
    """Switch MAC, own address (local + ARP), and /32 routes ``ip -> (next-hop mac, port)``."""
    from softswitch.api import Exact, Lpm

    sw.table_set_default(T_SWITCH, "DhcIngress.forwarding.set_switch_mac", params={"mac": mac2int(own.mac)})
    sw.table_add(T_LOCAL, "DhcIngress.dhc_index.set_local", match={"dst_addr": Exact(ip2int(own.ip))})
    sw.table_add(T_ARP, "DhcIngress.forwarding.arp_reply", match={"target_addr": Exact(ip2int(own.ip))},
                 params={"mac": mac2int(own.mac)})
    for ip, (mac, port) in routes.items():
        sw.table_add(T_LPM, "DhcIngress.forwarding.set_nhop", match={"dst_addr": Lpm(ip2int(ip), 32)},
                     params={"dmac": mac2int(mac), "port": port})


def program_job(sw, agg: Aggregator) -> None:
    """job_table, epoch_table, level_table, child_table, the multicast group and the per-replica rewrites."""
    from softswitch.api import Exact, Replica

    sw.table_add(T_JOB, "DhcIngress.dhc_index.set_job", match={"job_id": Exact(agg.job)}, params={
        "base": agg.base, "window": agg.window, "fan_in": len(agg.children), "mcast_grp": agg.mcast_grp,
        "is_root": 1 if agg.parent is None else 0, "uplink_port": agg.uplink_port,
        "parent_child_id": agg.parent_child_id, "own_addr": ip2int(agg.own.ip),
        "parent_addr": ip2int(agg.parent.ip) if agg.parent else 0, "stats_idx": agg.stats_idx})
    set_epoch(sw, agg.job, agg.epoch)
    for level, op in agg.levels.items():
        sw.table_add(T_LEVEL, "DhcIngress.dhc_index.set_op",
                     match={"job_id": Exact(agg.job), "level": Exact(level)}, params={"op": op})
    for ch in agg.children:
        sw.table_add(T_CHILD, "DhcIngress.dhc_index.set_child", match={
            "job_id": Exact(agg.job), "ingress_port": Exact(ch.port), "src_addr": Exact(ip2int(ch.host.ip)),
            "child_id": Exact(ch.child_id)}, params={"child_mask": 1 << ch.child_id})
        sw.table_add(T_REWRITE, "DhcEgress.rewrite.rewrite", match={"egress_rid": Exact(ch.rid)}, params={
            "dmac": mac2int(ch.host.mac), "dip": ip2int(ch.host.ip),
            "smac": mac2int(agg.own.mac), "sip": ip2int(agg.own.ip),
            "dport": wire.DHC_UDP_PORT if ch.is_switch else wire.worker_port(agg.job)})
    sw.mc_group_set(agg.mcast_grp, [Replica(ch.port, ch.rid) for ch in agg.children])


def set_epoch(sw, job: int, epoch: int, old: int | None = None) -> None:
    """Make ``epoch`` the job's current session (deleting the ``old`` entry if given)."""
    from softswitch.api import Exact

    if old is not None:
        sw.table_delete(T_EPOCH, match={"job_id": Exact(job), "epoch": Exact(old)})
    sw.table_add(T_EPOCH, "DhcIngress.dhc_index.current_epoch",
                 match={"job_id": Exact(job), "epoch": Exact(epoch)})


def drops(sw) -> dict[int, int]:
    """Non-zero drop_counter cells, {reason index: packets}."""
    out = {}
    for i in range(DROP_REASONS):
        pkts, _ = sw.counter_read(C_DROP, i)
        if pkts:
            out[i] = pkts
    return out


def job_counts(sw, stats_idx: int) -> dict[str, int]:
    return {name: sw.counter_read(c, stats_idx)[0] for name, c in
            (("contributions", C_CONTRIB), ("completions", C_COMPLETE), ("duplicates", C_DUP),
             ("results", C_RESULTS))}

"""Test fixtures for p4src/dhc.p4: packet builders and switch configurations.

Packets are built with Scapy and ``dhcwire.header`` (never from the P4 source), and
switches are programmed only through the documented control-plane contract in
``p4src/README.md`` (P4Info names, key names, action parameters).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

from dhcwire import header as wire
from dhcwire.addresses import ip2int, mac2int
from dhcwire.p4names import (
    A_ARP_REPLY,
    A_CURRENT_EPOCH,
    A_REWRITE,
    A_SET_CHILD,
    A_SET_JOB,
    A_SET_LOCAL,
    A_SET_NHOP,
    A_SET_OP,
    A_SWITCH_MAC,
    C_DROP,
    DROP_COUNTER_SIZE,
    JOB_COUNTERS,
    T_ARP,
    T_CHILD,
    T_EPOCH,
    T_JOB,
    T_LEVEL,
    T_LOCAL,
    T_LPM,
    T_REWRITE,
    T_SWITCH,
)

REPO = Path(__file__).resolve().parents[2]
PROGRAM = str(REPO / "p4src" / "dhc.p4")
STF_DIR = Path(__file__).resolve().parent / "stf"

def load_switch(lanes: int = 4, pool: int = 64, max_jobs: int = 16, backend: str = "python"):
    """Compile p4src/dhc.p4 on the softswitch (python or native backend) with small sizes."""
    from softswitch import Switch
    from softswitch.native.switch import NativeSwitch

    cls = NativeSwitch if backend == "native" else Switch
    return cls.load(PROGRAM, defines={"DHC_LANES": str(lanes), "DHC_POOL_SIZE": str(pool),
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
    if num_lanes is None:
        num_lanes = len(lanes) % wire.MAX_LANES     # 8 bits: 256 lanes travel as 0
    hdr = wire.pack_header(version=version, pkt_type=pkt_type, level=level, job_id=job, child_id=child_id,
                           num_lanes=num_lanes, epoch=epoch, chunk=chunk, slot=slot)
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
    levels: dict[int, int] = field(
        default_factory=lambda: {int(lv): int(op) for lv, op in wire.LEVEL_OPS.items()}
    )
    epoch: int = 0                     # the job's current session


def program_switch_basics(sw, own: Host, routes: dict[str, tuple[str, int]]) -> None:
    """Switch MAC, own address (local + ARP), and /32 routes ``ip -> (next-hop mac, port)``."""
    from softswitch.api import Exact, Lpm

    sw.table_set_default(T_SWITCH, A_SWITCH_MAC, params={"mac": mac2int(own.mac)})
    sw.table_add(T_LOCAL, A_SET_LOCAL, match={"dst_addr": Exact(ip2int(own.ip))})
    sw.table_add(T_ARP, A_ARP_REPLY, match={"target_addr": Exact(ip2int(own.ip))},
                 params={"mac": mac2int(own.mac)})
    for ip, (mac, port) in routes.items():
        sw.table_add(T_LPM, A_SET_NHOP, match={"dst_addr": Lpm(ip2int(ip), 32)},
                     params={"dmac": mac2int(mac), "port": port})


def program_job(sw, agg: Aggregator) -> None:
    """job_table, epoch_table, level_table, child_table, the multicast group and the per-replica rewrites."""
    from softswitch.api import Exact, Replica

    sw.table_add(T_JOB, A_SET_JOB, match={"job_id": Exact(agg.job)}, params={
        "base": agg.base, "window": agg.window, "fan_in": len(agg.children), "mcast_grp": agg.mcast_grp,
        "is_root": 1 if agg.parent is None else 0, "uplink_port": agg.uplink_port,
        "parent_child_id": agg.parent_child_id, "own_addr": ip2int(agg.own.ip),
        "parent_addr": ip2int(agg.parent.ip) if agg.parent else 0, "stats_idx": agg.stats_idx})
    set_epoch(sw, agg.job, agg.epoch)
    for level, op in agg.levels.items():
        sw.table_add(T_LEVEL, A_SET_OP,
                     match={"job_id": Exact(agg.job), "level": Exact(level)}, params={"op": op})
    for ch in agg.children:
        sw.table_add(T_CHILD, A_SET_CHILD, match={
            "job_id": Exact(agg.job), "ingress_port": Exact(ch.port), "src_addr": Exact(ip2int(ch.host.ip)),
            "child_id": Exact(ch.child_id)}, params={"child_mask": 1 << ch.child_id})
        sw.table_add(T_REWRITE, A_REWRITE, match={"egress_rid": Exact(ch.rid)}, params={
            "dmac": mac2int(ch.host.mac), "dip": ip2int(ch.host.ip),
            "smac": mac2int(agg.own.mac), "sip": ip2int(agg.own.ip),
            "dport": wire.DHC_UDP_PORT if ch.is_switch else wire.worker_port(agg.job)})
    sw.mc_group_set(agg.mcast_grp, [Replica(ch.port, ch.rid) for ch in agg.children])


def set_epoch(sw, job: int, epoch: int, old: int | None = None) -> None:
    """Make ``epoch`` the job's current session (deleting the ``old`` entry if given)."""
    from softswitch.api import Exact

    if old is not None:
        sw.table_delete(T_EPOCH, match={"job_id": Exact(job), "epoch": Exact(old)})
    sw.table_add(T_EPOCH, A_CURRENT_EPOCH,
                 match={"job_id": Exact(job), "epoch": Exact(epoch)})


def drops(sw) -> dict[int, int]:
    """Non-zero drop_counter cells, {reason index: packets}."""
    out = {}
    for i in range(DROP_COUNTER_SIZE):
        pkts, _ = sw.counter_read(C_DROP, i)
        if pkts:
            out[i] = pkts
    return out


def job_counts(sw, stats_idx: int) -> dict[str, int]:
    return {name: sw.counter_read(c, stats_idx)[0] for name, c in JOB_COUNTERS.items()}

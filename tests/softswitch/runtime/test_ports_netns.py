"""The softswitch process on real veth ports: forwarding, multicast, packet-in/out, shutdown, idle CPU."""

from __future__ import annotations

import os
import signal
import time

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bench.softswitch.ports_lab import cpu_seconds, free_port
from tests.softswitch.runtime.conftest import CPU_PORT, PROGRAMS
from tests.softswitch.runtime.netns import Lab
from tests.softswitch.runtime.p4rt import Client, U, mc_group

pytestmark = [pytest.mark.root, pytest.mark.own_netns]   # Lab names all it makes uniquely

if os.geteuid() != 0:
    pytest.skip("needs root for network namespaces", allow_module_level=True)

SWITCH_MAC = "02:00:00:00:00:fe"


def _mac(s: str) -> int:
    return int(s.replace(":", ""), 16)


@pytest.fixture(scope="module")
def lab(fwd_cpu):
    with Lab(3) as lab:
        port = free_port()
        lab.start_switch(PROGRAMS / "fwd_cpu.p4", port)
        ctl = Client(f"127.0.0.1:{port}", election_id=1)
        ctl.p4info = fwd_cpu[0]  # the CLI loaded the program; the controller only needs its P4Info
        for p, hp in lab.hosts.items():
            ip_int = int.from_bytes(bytes(map(int, hp.ip.split("."))), "big")
            ctl.write_ok((U.INSERT, ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (ip_int, 32)},
                                                    "MyIngress.ipv4_forward",
                                                    {"dstAddr": _mac(hp.mac), "port": p})))
        lab.ctl = ctl
        try:
            yield lab
        finally:
            ctl.close()


def _udp(src, dst, marker: bytes) -> bytes:
    return bytes(Ether(src=src.mac, dst=SWITCH_MAC) / IP(src=src.ip, dst=dst.ip, ttl=64)
                 / UDP(sport=1234, dport=5678) / marker)


def test_ipv4_forwarding_of_real_frames(lab):
    h1, h2, h3 = lab.hosts[1], lab.hosts[2], lab.hosts[3]
    for i, (src, dst) in enumerate([(h1, h2), (h2, h3), (h3, h1)]):
        marker = f"fwd-{i}".encode()
        dst.drain()
        src.send(_udp(src, dst, marker))
        got = dst.recv_until(lambda f, m=marker: f.endswith(m))
        assert got is not None, f"no frame at {dst.ip}; log:\n{lab.log.read_text()[-2000:]}"
        pkt = Ether(got)
        assert pkt.dst == dst.mac and pkt.src == SWITCH_MAC
        assert pkt[IP].ttl == 63
        sent_chk = pkt[IP].chksum
        del pkt[IP].chksum
        assert IP(bytes(pkt[IP])).chksum == sent_chk  # recomputed correctly by the pipeline


def test_frames_are_forwarded_in_order(lab):
    h1, h2 = lab.hosts[1], lab.hosts[2]
    h2.drain()
    n = 200
    for i in range(n):
        h1.send(_udp(h1, h2, b"seq%05d" % i))
    seen = []
    while len(seen) < n:
        got = h2.recv_until(lambda f: b"seq" in f[-8:], timeout=5)
        if got is None:
            break
        seen.append(int(got[-5:]))
    assert seen == list(range(n))


def test_multicast_replication(lab):
    ctl = lab.ctl
    acl = ctl.table_entry("MyIngress.acl", {"hdr.ethernet.dstAddr": ("t", 0xFFFFFFFFFFFF, 0xFFFFFFFFFFFF)},
                          "MyIngress.flood", {"grp": 7}, priority=10)
    ctl.write_ok((U.INSERT, mc_group(7, [(1, 1), (2, 1), (3, 1)])), (U.INSERT, acl))
    try:
        for hp in lab.hosts.values():
            hp.drain()
        frame = bytes(Ether(src=lab.hosts[1].mac, dst="ff:ff:ff:ff:ff:ff", type=0x88B6) / b"flood-me")
        lab.hosts[1].send(frame)
        for hp in lab.hosts.values():  # BMv2 semantics: the ingress port gets its replica too
            assert hp.recv_until(lambda f: f.endswith(b"flood-me")) == frame
    finally:
        ctl.write_ok((U.DELETE, acl), (U.DELETE, mc_group(7, [])))


def test_packet_in_and_out_through_the_cpu_port(lab):
    ctl = lab.ctl
    punt = ctl.table_entry("MyIngress.acl", {"hdr.ethernet.etherType": ("t", 0x88B5, 0xFFFF)},
                           "MyIngress.to_cpu", priority=20)
    ctl.write_ok((U.INSERT, punt))
    try:
        frame = bytes(Ether(src=lab.hosts[3].mac, dst=SWITCH_MAC, type=0x88B5) / b"to-the-controller")
        lab.hosts[3].send(frame)
        payload, meta = ctl.packet_in(timeout=5)
        assert payload == frame and meta["ingress_port"] == 3
        out = bytes(Ether(src=SWITCH_MAC, dst=lab.hosts[2].mac, type=0x88B7) / b"from-the-controller")
        lab.hosts[2].drain()
        ctl.packet_out(out, egress_port=2)
        assert lab.hosts[2].recv_until(lambda f: f.endswith(b"from-the-controller")) == out
        ent = ctl.read(ctl.table_entry("MyIngress.acl"))
        assert len(ent) == 1
    finally:
        ctl.write_ok((U.DELETE, punt))
    assert CPU_PORT not in lab.hosts


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_idle_cpu_and_clean_shutdown(sig):
    with Lab(2) as lab:
        proc = lab.start_switch(PROGRAMS / "fwd_cpu.p4", free_port())
        time.sleep(0.5)
        before, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(1.5)
        share = (cpu_seconds(proc.pid) - before) / (time.monotonic() - t0)
        assert share < 0.02, f"idle switch with two ports used {share:.1%} CPU"
        proc.send_signal(sig)
        t0 = time.monotonic()
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - t0 < 5

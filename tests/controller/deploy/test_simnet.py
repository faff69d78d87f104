"""The intended entries, installed with the in-process Switch API on softswitches wired per the
topology (``tests.simnet``), make workers' AllReduce of lanes come out exact everywhere.
This proves the entries themselves: routes, ARP, job/child/level tables, multicast + rewrite."""

from __future__ import annotations

import dataclasses
import random

import pytest

from controller.placement import place
from controller.plan import manifest_jobs
from controller.topology_file import load
from dhcwire import header as wire
from tests.controller.deploy.frames import arp_answer, arp_request, dhc_data, parse_result
from tests.simnet import SimNet

MASK = 0xFFFFFFFF


@pytest.fixture(scope="module", params=["single", "leafspine"])
def net(request) -> SimNet:
    topo = load(f"topologies/{request.param}.yaml")
    return SimNet(topo, place(topo))


def resolve(net: SimNet, host: str, ip: str) -> str:
    """ARP through the network, as the worker's kernel would."""
    h = net.topology.hosts[host]
    got = net.inject(host, arp_request(h.mac, h.ip, ip))
    assert list(got) == [host] and len(got[host]) == 1, f"{host} got no single ARP reply for {ip}: {got}"
    return arp_answer(got[host][0])


def allreduce(net: SimNet, job: dict, chunks: list[int], level: wire.Level, seed: int) -> None:
    """Every worker sends every chunk; each worker must receive exactly one RESULT per chunk,
    addressed to it, holding the exact lane-wise SUM/OR of all workers' lanes."""
    rng = random.Random(seed)
    op = wire.LEVEL_OPS[level]
    lanes_k = job["lanes"]          # the topology's lanes per packet (the switch is built for it)
    workers = sorted(job["workers"])
    topo = net.topology
    dmac = {w: resolve(net, w, job["workers"][w]["switch_ip"]) for w in workers}
    for chunk in chunks:
        values = {w: [rng.getrandbits(32) for _ in range(lanes_k)] for w in workers}
        expect = [0] * lanes_k
        for w in workers:
            for i, v in enumerate(values[w]):
                expect[i] = (expect[i] + v) & MASK if op == wire.Op.SUM else expect[i] | v
        got: dict[str, list[bytes]] = {}
        order = workers[:]
        rng.shuffle(order)
        for w in order:
            me = job["workers"][w]
            h = topo.hosts[w]
            frame = dhc_data(h.mac, h.ip, dmac[w], me["switch_ip"], values[w], job=job["job_id"],
                             child_id=me["child_id"], chunk=chunk, window=job["window"], level=int(level))
            for host, frames in net.inject(w, frame).items():
                got.setdefault(host, []).extend(frames)
        assert sorted(got) == workers, f"chunk {chunk}: results reached {sorted(got)}, expected {workers}"
        for w in workers:
            assert len(got[w]) == 1, f"{w} got {len(got[w])} frames for chunk {chunk}"
            dst_mac, dst_ip, hdr, lanes = parse_result(got[w][0], lanes_k)
            assert (dst_mac, dst_ip) == (topo.hosts[w].mac, topo.hosts[w].ip)
            assert hdr["pkt_type"] == wire.PacketType.RESULT and hdr["chunk"] == chunk
            assert hdr["job_id"] == job["job_id"]
            assert lanes == expect, f"{w}: wrong aggregate for chunk {chunk}"


def test_every_job_allreduces_exactly(net: SimNet) -> None:
    jobs = manifest_jobs(net.topology, net.placement)
    assert jobs, "no job to test"
    for job in jobs:
        w = job["window"]
        # both shadow sets of slot 0 and 1, and a slot reused after its set was released
        chunks = [0, 1, w, w + 1, 2 * w]
        allreduce(net, job, chunks, wire.Level.VALUE_SKETCH, seed=job["job_id"])
        allreduce(net, job, [3], wire.Level.BLOCK_INDEX, seed=100 + job["job_id"])
    assert not net.unwired
    for name, sw in net.switches.items():
        drops = {i: sw.counter_read("DhcIngress.drops.drop_counter", i)[0] for i in range(1, 16)}
        assert not any(drops.values()), f"{name} dropped packets: {drops}"


def test_worker_counts_match_topology(net: SimNet) -> None:
    sizes = sorted(len(j["workers"]) for j in manifest_jobs(net.topology, net.placement))
    assert sizes == {"single": [4], "leafspine": [3, 8]}[net.topology.name]


def test_hosts_ping_each_other_across_the_topology(net: SimNet) -> None:
    from scapy.layers.inet import ICMP, IP
    from scapy.layers.l2 import Ether

    topo = net.topology
    hosts = sorted(topo.hosts)
    src, dst = topo.hosts[hosts[0]], topo.hosts[hosts[-1]]
    mac = resolve(net, src.name, dst.ip)
    assert mac == dst.mac
    got = net.inject(
        src.name, bytes(Ether(src=src.mac, dst=mac) / IP(src=src.ip, dst=dst.ip, ttl=64) / ICMP())
    )
    assert list(got) == [dst.name]
    pkt = Ether(got[dst.name][0])
    assert pkt.dst == dst.mac and pkt[IP].src == src.ip
    assert pkt[IP].ttl == 64 - (len(topo.path(src.name, dst.name)) - 2)


@pytest.mark.slow
def test_fattree_jobs_allreduce_exactly() -> None:
    """k=4 fat-tree (20 switches, multi-level trees through non-aggregating switches).  What this
    proves is the entries (routes, trees, rewrites), not the lane count: K = 8 instead of the
    file's 128 keeps 20 in-process switches cheap (K itself: tests/p4src/test_aggregation.py)."""
    topo = load("topologies/fattree4.yaml")
    topo = topo.with_jobs([dataclasses.replace(j, lanes=8) for j in topo.jobs])
    net = SimNet(topo, place(topo))
    for job in manifest_jobs(topo, net.placement):
        allreduce(net, job, [0, job["window"]], wire.Level.VALUE_SKETCH, seed=job["job_id"])
    assert not net.unwired

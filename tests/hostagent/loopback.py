"""Real agents over real UDP sockets against the real P4 program, without Mininet.

Run as a script inside a private network namespace (``unshare --net``), so every address
of the topology lives on that namespace's loopback and no packet can leave it:

    unshare --net python -m tests.hostagent.loopback --topo topologies/single.yaml --json

A bridge thread owns one UDP socket per switch address.  A datagram a worker sends to its
switch becomes an Ethernet/IPv4/UDP frame entering ``tests.simnet.SimNet`` (every switch
runs ``p4src/dhc.p4`` in-process, programmed with the controller's intended entries) at the
worker's port; every frame the network delivers to a host goes back to that host's socket,
from the source address the switch wrote.  ``--loss`` drops that share of datagrams in each
direction (seeded), so the agents' retransmission runs against the program's duplicate logic.
"""

from __future__ import annotations

import argparse
import json
import random
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from controller.placement import place
from controller.topology_file import load
from dhc.codec import simulate_allreduce
from dhc.synthetic import synthetic_job
from dhcwire.header import DHC_UDP_PORT
from hostagent.agent import Agent
from hostagent.transport import JobEndpoint, RetryPolicy
from tests.simnet import SimNet


class Bridge(threading.Thread):
    """Moves datagrams between worker sockets and the in-process switch network."""

    def __init__(self, net: SimNet, loss: float, seed: int):
        super().__init__(daemon=True)
        self.net, self.loss, self.rng = net, loss, random.Random(seed)
        topo = net.topology
        self.host_by_ip = {h.ip: h for h in topo.hosts.values()}
        self.socks = {}
        for sw in topo.switches.values():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((sw.ip, DHC_UDP_PORT))
            self.socks[sw.ip] = s
        self.stop_flag = threading.Event()
        self.dropped = 0
        self.frames = 0

    def _lost(self) -> bool:
        if self.loss and self.rng.random() < self.loss:
            self.dropped += 1
            return True
        return False

    def run(self) -> None:
        while not self.stop_flag.is_set():
            ready, _, _ = select.select(list(self.socks.values()), [], [], 0.05)
            for s in ready:
                data, (src_ip, src_port) = s.recvfrom(65535)
                host = self.host_by_ip.get(src_ip)
                if host is None or self._lost():
                    continue
                dst_ip = s.getsockname()[0]
                frame = bytes(Ether(src=host.mac, dst="02:00:00:00:ff:ff") /
                              IP(src=src_ip, dst=dst_ip, ttl=64) /
                              UDP(sport=src_port, dport=DHC_UDP_PORT, chksum=0) / data)
                self.frames += 1
                for frames in self.net.inject(host.name, frame).values():
                    for out in frames:
                        pkt = Ether(out)
                        if IP not in pkt or UDP not in pkt or self._lost():
                            continue
                        sender = self.socks.get(pkt[IP].src)
                        if sender is not None:
                            sender.sendto(bytes(pkt[UDP].payload), (pkt[IP].dst, pkt[UDP].dport))


def add_loopback_addresses(topo) -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for node in [*topo.hosts.values(), *topo.switches.values()]:
        subprocess.run(["ip", "addr", "add", f"{node.ip}/32", "dev", "lo"], check=True)


def run_worker(topo, jp, rank: int, host: str, x: np.ndarray, expected: np.ndarray, codec: str,
               timeout: float, results: dict[str, dict]) -> None:
    """One worker thread: join the job as ``host`` and record whether its sum is exact."""
    job = topo.job(jp.job_id)
    agg = jp.first_aggregator[host]
    child = next(c.index for c in jp.aggregator(agg).children if c.name == host)
    ep = JobEndpoint(job_id=job.id, child_id=child, switch_ip=topo.switches[agg].ip,
                     window=job.window, lanes=job.lanes, bind_ip=topo.hosts[host].ip)
    try:
        with Agent(ep, len(job.workers), codec=codec,
                   retry=RetryPolicy(initial_timeout=timeout, max_retries=30)) as agent:
            got, report = agent.allreduce(x)
        results[host] = {"exact": bool(np.array_equal(got.view(np.uint32), expected.view(np.uint32))),
                         **report.as_dict()}
    except Exception as err:  # reported, not swallowed: the test asserts on it
        results[host] = {"exact": False, "error": f"{type(err).__name__}: {err}"}


def run(topo_path: str, dim: int, density: float, codec: str, loss: float, seed: int,
        clustered: bool, timeout: float) -> dict:
    topo = load(topo_path)
    add_loopback_addresses(topo)
    placement = place(topo)
    net = SimNet(topo, placement)
    bridge = Bridge(net, loss, seed)
    bridge.start()
    out: dict = {"jobs": []}
    try:
        for jp in placement.jobs:
            job = topo.job(jp.job_id)
            workers = list(job.workers)
            xs = synthetic_job(len(workers), dim, density, seed, clustered)
            expected = simulate_allreduce(xs, codec=codec).sum
            results: dict[str, dict] = {}

            threads = [threading.Thread(target=run_worker, args=(topo, jp, r, h, xs[r], expected,
                                                                 codec, timeout, results))
                       for r, h in enumerate(workers)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            out["jobs"].append({"job": job.id, "seconds": time.perf_counter() - t0,
                                "workers": results})
    finally:
        bridge.stop_flag.set()
        bridge.join()
    out["bridge_dropped"] = bridge.dropped
    out["frames"] = bridge.frames
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--topo", default=str(Path(__file__).resolve().parents[2] / "topologies/single.yaml"))
    p.add_argument("--dim", type=int, default=20_000)
    p.add_argument("--density", type=float, default=0.01)
    p.add_argument("--codec", default="hg")
    p.add_argument("--loss", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--clustered", action="store_true")
    p.add_argument("--timeout", type=float, default=0.05)
    a = p.parse_args(argv)
    print(json.dumps(run(a.topo, a.dim, a.density, a.codec, a.loss, a.seed, a.clustered, a.timeout)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

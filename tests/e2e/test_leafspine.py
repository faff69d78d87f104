"""End to end on the leaf-spine (2 spines, 4 leaves, 8 hosts; job 1: 8 workers over a two-level
tree, job 2: 3 workers sharing hosts with job 1): exactness, concurrency, loss, security,
malformed input.  Marked root: Mininet, namespaces and real softswitch processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dhcwire import header as wire
from tests.e2e.helpers import data_payload, drops, run_and_check, send_from
from topologies.faults import clear_loss, dropped_packets, inject_loss
from topologies.workload import Workload

pytestmark = [pytest.mark.root, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SPINE = "sp2"  # the placement's root for both jobs (checked below)


def test_placement_uses_a_two_level_tree(leafspine_net):
    jp1 = leafspine_net.placement.job(1)
    assert jp1.root == SPINE and len(jp1.aggregators) == 5
    assert leafspine_net.placement.job(2).root == SPINE


def test_two_concurrent_jobs_are_exact_and_isolated(leafspine_net):
    before = {j.job_id: j.completions for j in leafspine_net.status()[SPINE].jobs}
    out = run_and_check(leafspine_net, Workload(dim=100_000, density=0.01, seed=11))
    assert {o.job_id for o in out} == {1, 2} and len(out) == 11
    after = {j.job_id: j.completions for j in leafspine_net.status()[SPINE].jobs}
    chunks = {o.job_id: o.summary["packets_sent"] - o.summary["retransmissions"] for o in out}
    for job in (1, 2):  # every chunk of a job completed once at the root, none of the other's
        assert after[job] - before[job] >= chunks[job] - 2 * 64 * 2


def test_clustered_and_dense_modes_are_exact(leafspine_net):
    run_and_check(leafspine_net, Workload(dim=100_000, density=0.01, clustered=True, seed=12))
    run_and_check(leafspine_net, Workload(dim=8_000, codec="dense", seed=13), jobs=[1])


@pytest.mark.parametrize("percent", [1, 5, 20])
def test_random_loss_on_host_links_still_exact(leafspine_net, percent):
    job = 2 if percent == 20 else 1
    workers = list(leafspine_net.topo.job(job).workers)
    hosts = [leafspine_net.handle.host(h) for h in workers]
    try:
        for h in hosts:
            inject_loss(h, percent)
        t0 = time.monotonic()
        # d = 60k: as many packets per worker at K = 256 as d = 30k gave at K = 128
        out = run_and_check(leafspine_net, Workload(dim=60_000, density=0.01, seed=20 + percent,
                                                    timeout=0.1, retries=30), jobs=[job])
        assert time.monotonic() - t0 < 180
        lost = sum(dropped_packets(h) for h in hosts)
    finally:
        for h in hosts:
            clear_loss(h)
    assert lost > 0
    # a loss may hit the closing padding exchange, after the AllReduce's own report
    assert sum(o.summary["session"]["retransmissions"] for o in out) > 0


def test_outsider_and_spoofed_child_are_dropped_and_counted(leafspine_net):
    topo, jp2 = leafspine_net.topo, leafspine_net.placement.job(2)
    root_ip = topo.switches[SPINE].ip
    kids = {c.name: c.index for c in jp2.aggregator(SPINE).children}
    outsider = next(h for h in topo.hosts if h not in topo.job(2).workers)
    spoofer = next(h for h in kids if kids[h] != 0)
    victim_id = 0
    before = drops(leafspine_net, SPINE).get("unauthorised", 0)
    send_from(leafspine_net, outsider, root_ip, wire.DHC_UDP_PORT,
              [data_payload(2, kids[next(iter(kids))], chunk=0, lanes=topo.job(2).lanes)],
              sport=wire.worker_port(2))
    send_from(leafspine_net, spoofer, root_ip, wire.DHC_UDP_PORT,
              [data_payload(2, victim_id, chunk=0, lanes=topo.job(2).lanes)],
              sport=wire.worker_port(2))
    time.sleep(0.5)
    assert drops(leafspine_net, SPINE).get("unauthorised", 0) - before == 2
    # the operator sees it with `dhc-ctl status`
    addr_map = ",".join(f"{n}={a.addr}@{a.device_id}" for n, a in leafspine_net.addrs.items())
    out = subprocess.run([sys.executable, "-m", "controller.cli", "status", "--topo",
                          str(ROOT / "topologies" / "leafspine.yaml"), "--switch-addr-map", addr_map,
                          "--json"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    spine = next(sw for sw in json.loads(out.stdout)["switches"] if sw["switch"] == SPINE)
    assert spine["drops"]["unauthorised"] - before == 2
    # nothing was added: the job still sums exactly
    run_and_check(leafspine_net, Workload(dim=20_000, density=0.01, seed=31), jobs=[2])


def test_malformed_packets_into_switch_and_agent(leafspine_net):
    topo = leafspine_net.topo
    root_ip = topo.switches[SPINE].ip
    good = data_payload(2, 0, chunk=0, lanes=topo.job(2).lanes)
    short = good[:5]
    bad_version = bytes([(3 << 4) | (good[0] & 0x0F)]) + good[1:]
    wrong_lanes = data_payload(2, 0, chunk=0, lanes=4)
    before = drops(leafspine_net).get("malformed", 0)
    send_from(leafspine_net, "h2", root_ip, wire.DHC_UDP_PORT, [short, bad_version, wrong_lanes])
    time.sleep(0.5)
    # the short one already fails at the first-hop leaf (its parser cannot see past it), the others
    # at the spine they are addressed to
    assert drops(leafspine_net).get("malformed", 0) - before == 3
    # garbage into a running agent's port: ignored and counted, the sum stays exact
    worker = topo.job(2).workers[0]
    spam = send_from(leafspine_net, "h2", topo.hosts[worker].ip, wire.worker_port(2),
                     [b"\x00" * 3, bad_version, good], count=150, interval=0.02, background=True)
    try:
        out = run_and_check(leafspine_net, Workload(dim=60_000, density=0.01, seed=41), jobs=[2])
    finally:
        spam.wait(timeout=30)
    w = next(o for o in out if o.host == worker)
    assert w.summary["malformed_ignored"] > 0

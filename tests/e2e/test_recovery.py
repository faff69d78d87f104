"""Job recovery in Mininet (docs/recovery.md): after each way a session can fail -- a killed
worker, a killed and restarted switch, a stray DATA frame, mismatched tensors -- ``dhc-ctl jobs
reset`` and a correct AllReduce of the *same* job give the exact sum, restarting nothing but what
was killed.  One network for the module; the tests run in file order, each starting from a job
whose previous session may have failed."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from scapy.layers.inet import UDP
from scapy.utils import rdpcap

from controller.cli import main as ctl
from controller.deploy.apply import deploy
from dhcwire import header as wire
from dhcwire.frames import MalformedPacket, decode_datagram
from dhcwire.header import DHC_UDP_PORT, worker_port
from hostagent.manifest import read_manifest
from tests.e2e.helpers import data_payload, drops, run_and_check, send_from
from topologies.story import switch_addresses
from topologies.workload import Workload, agent_command, collect, expected_sum

pytestmark = [pytest.mark.root, pytest.mark.slow]
GOOD = Workload(dim=60_000, density=0.01, seed=21)
FAILING = Workload(dim=300_000, density=0.02, seed=22, timeout=0.05, retries=5)
#: the AllReduce whose DATA is captured and replayed: two AllReduces in one session, several laps
CAPTURED = Workload(dim=200_000, density=0.02, seed=23, repeat=2)


def _epoch(net) -> int:
    return read_manifest(net.manifest)["jobs"][0]["epoch"]


def _reset(net) -> int:
    before = _epoch(net)
    amap = ",".join(f"{n}={a.addr}@{a.device_id}" for n, a in net.addrs.items())
    rc = ctl(["jobs", "reset", "--topo", str(net.topo_file), "--switch-addr-map", amap, "--job", "1",
              "--manifest", str(net.manifest), "--json"])
    assert rc == 0
    after = _epoch(net)
    assert after == (before + 1) % 256
    return after


def _start(net, workload: Workload, dims: dict[str, int] | None = None) -> dict:
    job = net.topo.job(1)
    expect = net.workdir / f"expected-{workload.seed}.npy"
    expected_sum(workload, len(job.workers), expect)
    procs = {}
    for rank, h in enumerate(job.workers):
        cmd = agent_command(net.manifest, h, rank, workload, expect, 1)
        if dims:
            cmd[cmd.index("--dim") + 1] = str(dims[h])
        procs[h] = net.handle.host(h).popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return procs


def _assert_reset_hint(outcomes, code: int) -> None:
    for o in outcomes:
        assert o.returncode == code, (o.host, o.returncode, o.stderr[-600:])
        assert "dhc-ctl jobs reset --job 1" in o.summary.get("error", ""), o.summary


def test_first_session_is_exact(recovery_net):
    run_and_check(recovery_net, GOOD)


def test_killed_worker_then_reset_is_exact(recovery_net):
    net = recovery_net
    procs = _start(net, FAILING)
    victim = net.topo.job(1).workers[-1]
    time.sleep(0.5)
    procs[victim].kill()
    procs[victim].communicate()
    outcomes = collect({h: p for h, p in procs.items() if h != victim}, 1, deadline_s=90)
    _assert_reset_hint(outcomes, 3)
    assert all(victim in o.summary["error"] for o in outcomes)
    _reset(net)
    run_and_check(net, GOOD)


def test_stray_frame_then_reset_is_exact(recovery_net):
    net = recovery_net
    h1 = net.topo.job(1).workers[0]
    child = next(c.index for c in net.placement.jobs[0].aggregators[0].children if c.name == h1)
    sw_ip = net.topo.switches["s1"].ip
    epoch = _epoch(net)
    # a DATA of the current epoch from h1's own port and child id: poisons chunk 0's slot
    lanes = net.topo.job(1).lanes
    send_from(net, h1, sw_ip, DHC_UDP_PORT, [data_payload(1, child, 0, lanes=lanes, epoch=epoch)],
              sport=worker_port(1))
    _reset(net)
    stale = drops(net, "s1").get("stale_epoch", 0)
    # the same frame replayed after the reset is stale: dropped and counted, never aggregated
    send_from(net, h1, sw_ip, DHC_UDP_PORT, [data_payload(1, child, 0, lanes=lanes, epoch=epoch)],
              sport=worker_port(1))
    time.sleep(0.3)
    assert drops(net, "s1").get("stale_epoch", 0) == stale + 1
    run_and_check(net, GOOD)


def test_spoofed_results_are_dropped_and_the_allreduce_is_exact(recovery_net):
    """Issue 30, item 2: h1 forges RESULTs for chunks 0-1 as the switch (its job address, UDP
    0x4448) to h2's worker port while the job runs.  s1 drops every one as spoofed at h1's port
    (anti-spoofing, installed from the topology); the AllReduce is exact, no reset needed."""
    net = recovery_net
    h1, h2 = net.topo.job(1).workers[:2]
    sw_ip = read_manifest(net.manifest)["jobs"][0]["workers"][h1]["switch_ip"]
    epoch, lanes = _epoch(net), net.topo.job(1).lanes
    forged = [data_payload(1, 0, c, lanes=lanes, epoch=epoch, pkt_type=wire.PacketType.RESULT)
              for c in (0, 1)]
    before = drops(net, "s1").get("spoofed", 0)
    flood = send_from(net, h1, net.topo.hosts[h2].ip, worker_port(1), forged, sport=DHC_UDP_PORT,
                      count=300, interval=0.005, background=True, src=sw_ip)
    run_and_check(net, GOOD)
    flood.wait(timeout=30)
    time.sleep(0.3)
    assert drops(net, "s1").get("spoofed", 0) - before == 600


def test_mismatched_tensors_then_reset_is_exact(recovery_net):
    net = recovery_net
    workers = net.topo.job(1).workers
    dims = {h: FAILING.dim + (7 if i == 0 else 0) for i, h in enumerate(workers)}
    outcomes = collect(_start(net, FAILING, dims), 1, deadline_s=120)
    assert all(o.returncode != 0 for o in outcomes), [(o.host, o.returncode) for o in outcomes]
    assert any("dhc-ctl jobs reset --job 1" in o.summary.get("error", "") for o in outcomes), \
        [o.summary.get("error") for o in outcomes]
    _reset(net)
    run_and_check(net, GOOD)


def test_killed_switch_named_then_restart_redeploy_reset_is_exact(recovery_net):
    net = recovery_net
    s1 = net.handle.net.get("s1")
    procs = _start(net, FAILING)
    time.sleep(0.5)
    s1.proc.kill()
    s1.proc.wait()
    outcomes = collect(procs, 1, deadline_s=90)
    _assert_reset_hint(outcomes, 3)
    sw_ip = net.topo.switches["s1"].ip
    for o in outcomes:
        assert f"switch {sw_ip}" in o.summary["error"] and "does not answer ARP" in o.summary["error"], (
            o.summary
        )
        assert "not answering a liveness probe" not in o.summary["error"], o.summary
    # restart only the switch; the controller redeploys it (the manifest's epoch: nothing held it)
    s1.start([])
    epochs = {1: _epoch(net)}
    report = deploy(net.topo, net.placement, switch_addresses(net.handle), timeout=60.0, epochs=epochs)
    assert report.epochs == epochs
    _reset(net)
    run_and_check(net, GOOD)


@contextmanager
def _capture(net, host: str) -> Iterator[Path]:
    """tcpdump on ``host``'s interface: every datagram it sends to a DHC port, into a pcap."""
    path = net.workdir / f"capture-{host}-{time.monotonic_ns()}.pcap"
    h = net.handle.host(host)
    proc = h.popen(["tcpdump", "-i", str(h.defaultIntf()), "-U", "-w", str(path),
                    "udp", "and", "dst", "port", str(DHC_UDP_PORT)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)                        # tcpdump attached before the first frame
    try:
        yield path
    finally:
        time.sleep(0.5)
        proc.terminate()
        proc.wait(timeout=10)


def _data_frames(path: Path, job: int) -> list[tuple[int, bytes]]:
    """(chunk, UDP payload) of every DATA of ``job`` in the capture, in capture order."""
    out = []
    for pkt in rdpcap(str(path)):
        if UDP not in pkt:
            continue
        payload = bytes(pkt[UDP].payload)
        try:
            dg = decode_datagram(payload)
        except MalformedPacket:
            continue
        if dg.pkt_type == wire.PacketType.DATA and dg.job_id == job:
            out.append((dg.chunk, payload))
    return out


def _stale_chunks_reach(net, n: int, timeout_s: float = 30.0) -> int:
    """Poll s1's stale_chunk counter until it reaches ``n`` (the softswitch may still be working
    through a burst); returns the last value read."""
    end = time.monotonic() + timeout_s
    while True:
        got = drops(net, "s1").get("stale_chunk", 0)
        if got >= n or time.monotonic() > end:
            return got
        time.sleep(0.5)


def test_replayed_and_delayed_data_of_an_earlier_session_is_stale(recovery_net):
    """Issue 30, item 1, as the issue found it: h1's DATA of a clean, exact session is captured;
    after it, one frame from the middle and then chunks 0-63 are replayed from h1.  Every frame
    older than its cell's chunk is dropped as stale_chunk; the next session of the job (same
    epoch: the manifest path continues the chunk sequence) is exact with no reset, while frames
    of the captured session keep arriving as delayed duplicates during both of its AllReduces."""
    net = recovery_net
    h1 = net.topo.job(1).workers[0]
    sw_ip = read_manifest(net.manifest)["jobs"][0]["workers"][h1]["switch_ip"]
    lap = 2 * net.topo.job(1).window
    with _capture(net, h1) as pcap:
        run_and_check(net, CAPTURED)
    frames = _data_frames(pcap, 1)
    chunks = sorted({c for c, _ in frames})
    end = chunks[-1] + 1                                   # sessions end on a 2W boundary
    assert end % lap == 0 and len(chunks) >= 2 * lap, (len(chunks), end, lap)
    first = {c: p for c, p in reversed(frames)}            # each chunk's first transmission
    middle = chunks[len(chunks) // 2]
    replay = [middle, *chunks[:64]]
    stale = sum(1 for c in replay if c < end - lap)        # the last lap's cells still hold theirs
    assert stale >= 64
    epoch = _epoch(net)
    before = drops(net, "s1").get("stale_chunk", 0)
    # 65 frames of 1 KiB are too long a command line for the host's shell: run it directly
    sender = send_from(net, h1, sw_ip, DHC_UDP_PORT, [first[c] for c in replay], sport=worker_port(1),
                       background=True)
    assert sender.wait(timeout=60) == 0
    assert _stale_chunks_reach(net, before + stale) - before == stale, drops(net, "s1")
    time.sleep(1.0)
    assert drops(net, "s1").get("stale_chunk", 0) - before == stale       # and no more
    # h1's agent holds its worker port while it runs: the duplicates go out through a raw socket
    delayed = send_from(net, h1, sw_ip, DHC_UDP_PORT, [p for _, p in frames[::9]],
                        sport=worker_port(1), count=4, interval=0.3, background=True,
                        src=net.topo.hosts[h1].ip)
    run_and_check(net, Workload(dim=GOOD.dim, density=GOOD.density, seed=GOOD.seed, repeat=2))
    delayed.wait(timeout=60)
    assert _epoch(net) == epoch
    assert _stale_chunks_reach(net, before + stale + 1) - before > stale

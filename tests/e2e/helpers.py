"""Shared steps of the end-to-end tests."""

from __future__ import annotations

import sys

import numpy as np

from dhcwire import header as wire
from dhcwire.frames import encode_datagram
from topologies.story import run_jobs
from topologies.workload import Workload


def run_and_check(net, workload: Workload, jobs: list[int] | None = None, deadline_s: float = 240.0):
    """Run the jobs' workers concurrently; assert every worker holds the exact sum."""
    outcomes = run_jobs(net.handle, net.manifest, net.topo, workload, net.workdir, jobs, deadline_s)
    assert outcomes, "no worker ran"
    bad = [(o.host, o.job_id, o.returncode, o.summary.get("error"), o.stderr[-500:])
           for o in outcomes if not o.exact]
    assert not bad, f"workers without the exact sum: {bad}"
    return outcomes


def send_from(net, host: str, dst: str, port: int, payloads: list[bytes], sport: int = 0,
              count: int = 1, interval: float = 0.0, background: bool = False, src: str | None = None):
    """Send raw UDP payloads from ``host`` (a real socket in its namespace; ``src``: with that
    forged source address, through a raw socket)."""
    cmd = [sys.executable, "-m", "tests.e2e.inject", "--dst", dst, "--port", str(port),
           "--count", str(count), "--interval", str(interval)]
    if src:
        cmd += ["--src", src]
    if sport:
        cmd += ["--sport", str(sport)]
    for p in payloads:
        cmd += ["--hex", p.hex()]
    h = net.handle.host(host)
    if background:
        return h.popen(cmd)
    out = h.cmd(" ".join(cmd))
    assert "sent" in out, out
    return out


def data_payload(job: int, child: int, chunk: int = 0, lanes: int = wire.DEFAULT_LANES, **hdr) -> bytes:
    """A DATA datagram as a worker builds it (lanes of ones)."""
    return encode_datagram(hdr.pop("pkt_type", wire.PacketType.DATA), hdr.pop("level", wire.Level.DENSE),
                           job, child, chunk, wire.slot_for_chunk(chunk, 64),
                           np.ones(lanes, dtype=np.uint32), **hdr)


def drops(net, switch: str | None = None) -> dict[str, int]:
    """Drop counters of one switch, or summed over every switch."""
    status = net.status()
    out: dict[str, int] = {}
    for name, st in status.items():
        if switch is None or name == switch:
            for reason, n in st.drops.items():
                out[reason] = out.get(reason, 0) + n
    return out

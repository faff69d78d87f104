"""One worker of ``dhc-bench e2e-profile``: AllReduces with a clock on every stage.

    python -m bench.e2e.e2e_profile_worker --manifest M --host h1 --rank 0 --mode dhc \
        --dim 1000000 --density 0.01 --seed 1 --repeat 6 --switch-pid 1234

Runs the same codec rounds as ``dhc-agent`` (``--mode dhc``: HG-Sketch summed by the switches)
or ``python -m bench.baselines.ring --codec hg`` (``--mode sketch_ring``: summed over the host ring),
but wraps the reducer so that each round's network time and the codec work between rounds are
timed with the wall clock every Mininet host shares (``time.time``), and reads the scheduler's
accounting (``/proc/<pid>/task/*/schedstat``: nanoseconds on a CPU and nanoseconds runnable but
waiting for one) of this process and of the software switch at the start and end of each
AllReduce, this process's user and system CPU (``getrusage``) and the CPU it spent inside the
reducer (the network rounds: framing, system calls, the kernel's work charged to them).
Prints one JSON line.  The first ``--warmup`` AllReduces are reported too; the
orchestrator leaves them out.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.baselines.ring import RingReducer, load_ring
from bench.baselines.ring_transport import RingConfig, RingTransport
from dhc.codec import make_worker
from dhc.synthetic import synthetic_gradient
from hostagent.chunk_state import position_for
from hostagent.manifest import load_endpoint
from hostagent.reducer import NetworkReducer
from hostagent.transport import ChunkTransport

MODES = ("dhc", "sketch_ring")


def schedstat(pid: int | str = "self") -> tuple[float, float]:
    """(seconds on a CPU, seconds runnable but waiting) summed over the threads of ``pid``;
    (0, 0) if the kernel keeps no such accounting or the process is gone."""
    run = wait = 0
    for f in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            a, b, _ = f.read_text().split()
        except (OSError, ValueError):
            continue
        run, wait = run + int(a), wait + int(b)
    return run / 1e9, wait / 1e9


#: /proc/stat's clock ticks per second (USER_HZ)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def machine_ticks(text: str | None = None) -> tuple[int, int, int, int]:
    """All cores' clock ticks from ``/proc/stat``'s ``cpu`` line: (busy, of it in interrupts
    and softirqs, stolen by the hypervisor, total).  Busy is user + nice + system + irq +
    softirq; unlike schedstat it includes the softirq work (tbf's timers, veth delivery) the
    kernel does not charge to the task it interrupted.  Ticks are 1/CLOCK_TICKS s: sum them over
    many AllReduces.

    >>> machine_ticks("cpu  10 1 5 80 2 3 4 6 0 0\\ncpu0 1 1 1 1 1 1 1 1 0 0")
    (23, 7, 6, 111)
    """
    if text is None:
        with open("/proc/stat") as f:
            text = f.readline()
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, text.split()[1:9])
    busy = user + nice + system + irq + softirq
    return busy, irq + softirq, steal, busy + idle + iowait + steal


class TimedReducer:
    """Wraps a reducer: the wall-clock interval of every reduce call (one round), and the UDP
    datagrams and payload bytes this worker sent in it (``stats``: its transport's counters)."""

    def __init__(self, inner, stats) -> None:
        self.inner, self.stats = inner, stats
        self.rounds: list[dict] = []

    def reduce(self, segments: Sequence) -> list[np.ndarray]:
        p0, b0, t0 = self.stats.packets_sent, self.stats.bytes_sent, time.time()
        r0, q0, c0 = self.stats.retransmissions, self.stats.packets_received, time.process_time()
        out = self.inner.reduce(segments)
        self.rounds.append({"start": t0, "end": time.time(),
                            "cpu_seconds": time.process_time() - c0,
                            "packets": self.stats.packets_sent - p0,
                            "bytes": self.stats.bytes_sent - b0,
                            "retransmissions": self.stats.retransmissions - r0,
                            "received": self.stats.packets_received - q0,
                            "lanes": int(sum(len(s.lanes) for s in segments))})
        return out


def one_allreduce(x: np.ndarray, n: int, reducer: TimedReducer, switch_pid: int | None,
                  before_rounds=None, fuse_rounds: bool = False) -> dict:
    """One timed AllReduce: wall interval, rounds, and schedstat deltas of us and the switch."""
    reducer.rounds = []
    m0 = machine_ticks()
    own0, sw0, t0 = schedstat(), schedstat(switch_pid) if switch_pid else (0.0, 0.0), time.time()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    worker = make_worker(x, n, codec="hg", fuse_rounds=fuse_rounds)
    if before_rounds is not None:
        before_rounds(int(worker.d))
    segs = worker.first_round()
    while not worker.done:
        segs = worker.feed(reducer.reduce(segs))
    worker.result()
    t1, own1, ru1 = time.time(), schedstat(), resource.getrusage(resource.RUSAGE_SELF)
    sw1 = schedstat(switch_pid) if switch_pid else (0.0, 0.0)
    m1 = machine_ticks()
    return {"start": t0, "end": t1, "rounds": reducer.rounds,
            "cpu_seconds": own1[0] - own0[0], "runqueue_wait_seconds": own1[1] - own0[1],
            "user_seconds": ru1.ru_utime - ru0.ru_utime, "system_seconds": ru1.ru_stime - ru0.ru_stime,
            "switch_cpu_seconds": sw1[0] - sw0[0], "switch_runqueue_wait_seconds": sw1[1] - sw0[1],
            "machine_ticks": [b - a for a, b in zip(m0, m1, strict=True)]}


def run(args: argparse.Namespace) -> list[dict]:
    x = synthetic_gradient(args.dim, args.density, seed=args.seed, rank=args.rank)
    if args.mode == "dhc":
        endpoint, n = load_endpoint(args.manifest, args.host)
        position = position_for(endpoint)      # a manifest session keeps the epoch: resume its chunks
        with ChunkTransport(endpoint, first_chunk=position.load()) as transport:
            reducer = TimedReducer(NetworkReducer(transport), transport.stats)
            out = [one_allreduce(x, n, reducer, args.switch_pid, fuse_rounds=args.fuse_rounds)
                   for _ in range(args.repeat)]
            transport.finish()
            position.save(transport.next_chunk)
        return out
    job_id, peers, rank = load_ring(args.manifest, args.host)
    with RingTransport(RingConfig(job_id=job_id, rank=rank, peers=peers)) as transport:
        ring = RingReducer(transport, first_step=transport.next_step)
        reducer = TimedReducer(ring, transport.stats)

        def meet(d: int) -> None:    # as sketch_ring_allreduce: rendezvous, then the rounds
            transport.rendezvous(d)
            ring.step = transport.next_step

        out = []
        for _ in range(args.repeat):
            out.append(one_allreduce(x, len(peers), reducer, args.switch_pid, meet,
                                     fuse_rounds=args.fuse_rounds))
            transport.next_step = ring.step
        transport.linger()
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.e2e.e2e_profile_worker",
                                description=__doc__.splitlines()[0])
    p.add_argument("--manifest", type=Path, required=True)
    p.add_argument("--host", required=True)
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--mode", choices=MODES, required=True)
    p.add_argument("--dim", type=int, default=1_000_000)
    p.add_argument("--density", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=6)
    p.add_argument("--switch-pid", type=int, help="the software switch's pid (schedstat)")
    p.add_argument("--fuse-rounds", action="store_true", help="the codec's two-round form")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    print(json.dumps({"host": args.host, "mode": args.mode, "allreduces": run(args)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

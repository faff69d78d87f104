"""Host-only ring AllReduce over UDP: the dense baseline DHC is measured against.

    python -m bench.baselines.ring --manifest jobs.json --host h1 --dim 1000000 --density 0.01 \
        --seed 1 --rank 0 --expect sum.npy --json

Every worker of the job (peers and ring order from the deployment's job manifest) runs one
process; no switch aggregates anything, the switches only forward.  The algorithm is the classic
bandwidth-optimal ring: reduce-scatter (N-1 steps) then all-gather (N-1 steps), each host sending
2 (N-1)/N of the tensor.  It runs on **int32** values quantized exactly as DHC's dense codec does
(``dhc.quantize``: one power-of-two scale from the global max exponent, agreed in N-1 tiny steps
first), so its result is bit for bit the dense codec's and DHC's — ``--expect`` checks exactly,
with no summation-order tolerance.  Transport: ``bench.baselines.ring_transport``.

Exit codes (as ``dhc-agent``): 0 ok, 1 result differs from --expect, 2 bad input, 3 timeout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np

from dhc import quantize as qz
from dhc.codec import make_worker
from dhc.errors import CodecError
from dhc.protocol import Segment, run_worker
from dhc.synthetic import synthetic_gradient
from dhcwire.lanes import Op
from hostagent.manifest import ManifestError, find_job
from hostagent.summary import finish

from .ring_transport import RING_RETRY, RingConfig, RingError, RingPeer, RingTimeout, RingTransport

#: int32 marker for "this worker's tensor is all zeros" in the exponent exchange
NO_EXPONENT = -(1 << 31)


@dataclass
class RingReport:
    """What one ring AllReduce cost this host."""

    elements: int
    workers: int
    rank: int
    seconds: float
    bytes_sent: int
    bytes_received: int
    packets_sent: int
    data_packets_sent: int
    acks_sent: int
    retransmissions: int
    duplicates: int
    dense_float32_bytes: int
    scale_exponent: int
    buffer_grows: int = 0       # native engine: steps longer than the receive buffer it held
    rounds: int = 1             # ring AllReduces run (sketch_ring: one per codec round)

    def as_dict(self) -> dict:
        return asdict(self)


def chunk_edges(dim: int, n: int) -> list[int]:
    """Boundaries of the N ring chunks of a ``dim``-element tensor (sizes differ by at most 1)."""
    return [i * dim // n for i in range(n + 1)]


def ring_reduce(transport: RingTransport, values: np.ndarray, is_or: np.ndarray | None,
                step: int) -> tuple[np.ndarray, int]:
    """Elementwise aggregate of ``values`` (uint32) over the ring: uint32 SUM with wraparound,
    or bitwise OR where ``is_or`` is set (the switch's two ops).  Reduce-scatter (N-1 steps)
    then all-gather (N-1 steps), numbered from ``step``; returns (aggregate, next step)."""
    cfg = transport.cfg
    n, r = len(cfg.peers), cfg.rank
    acc = np.ascontiguousarray(values, dtype=np.uint32).copy()
    edges = chunk_edges(int(acc.size), n)

    def chunk(i: int) -> slice:
        return slice(edges[i % n], edges[i % n + 1])

    def received(vals: np.ndarray, i: int) -> np.ndarray:
        want = edges[i % n + 1] - edges[i % n]
        if vals.size != want:
            raise RingError(f"ring job {cfg.job_id} step {step}: {cfg.prev.name} sent {vals.size} "
                            f"values for chunk {i % n}, expected {want} (different --dim?)")
        return vals.view(np.uint32)

    # reduce-scatter: after step k, chunk (r-k-1) holds k+2 contributions
    for k in range(n - 1):
        dst = chunk(r - k - 1)
        got = received(transport.exchange(step, acc[chunk(r - k)].view(np.int32)), r - k - 1)
        summed = acc[dst] + got
        acc[dst] = summed if is_or is None else np.where(is_or[dst], acc[dst] | got, summed)
        step += 1
    # all-gather: chunk r+1 is complete here; pass the complete chunks around
    for k in range(n - 1):
        got = received(transport.exchange(step, acc[chunk(r + 1 - k)].view(np.int32)), r - k)
        acc[chunk(r - k)] = got
        step += 1
    return acc, step


class RingReducer:
    """``dhc.protocol.Reducer`` over the host ring: a codec's rounds (HG-Sketch or dense) summed
    by the hosts, as LHC or S2 run over NCCL, instead of by the switches."""

    def __init__(self, transport: RingTransport, first_step: int = 0):
        self.transport = transport
        self.step = first_step
        self.rounds = 0

    def reduce(self, segments: Sequence[Segment]) -> list[np.ndarray]:
        lengths = [len(s.lanes) for s in segments]
        lanes = (np.concatenate([s.lanes for s in segments]) if segments
                 else np.zeros(0, dtype=np.uint32))
        is_or = np.repeat(np.array([s.op == Op.OR for s in segments], dtype=bool), lengths)
        out, self.step = ring_reduce(self.transport, lanes, is_or, self.step)
        self.rounds += 1
        return np.split(out, np.cumsum(lengths)[:-1]) if segments else []


def _report(transport: RingTransport, before: dict[str, int], d: int, seconds: float,
            scale_exp: int, rounds: int = 1) -> RingReport:
    after = transport.stats.as_dict()
    delta = {k: after[k] - before[k] for k in after}
    return RingReport(elements=d, workers=len(transport.cfg.peers), rank=transport.cfg.rank,
                      seconds=seconds, bytes_sent=delta["bytes_sent"],
                      bytes_received=delta["bytes_received"], packets_sent=delta["packets_sent"],
                      data_packets_sent=delta["data_packets_sent"], acks_sent=delta["acks_sent"],
                      retransmissions=delta["retransmissions"], duplicates=delta["duplicates"],
                      dense_float32_bytes=4 * d, scale_exponent=scale_exp,
                      buffer_grows=delta["buffer_grows"], rounds=rounds)


def ring_allreduce(x: np.ndarray, transport: RingTransport) -> tuple[np.ndarray, RingReport]:
    """Sum ``x`` over the ring, dense; returns (float32 sum, report).  Raises RingTimeout/RingError."""
    cfg = transport.cfg
    x = qz.check_tensor(x)
    qz.check_finite(x)
    n, d = len(cfg.peers), int(x.size)
    qz.check_worker_count(n)
    before = transport.stats.as_dict()
    t0 = time.perf_counter()
    transport.rendezvous(d)
    # 1. the global max exponent: a ring all-gather of one int32 per host (N-1 steps)
    local = qz.max_exponent(x)
    carry = best = np.array([NO_EXPONENT if local is None else local], dtype=np.int32)
    step = transport.next_step
    for _ in range(n - 1):
        carry = transport.exchange(step, carry)
        step += 1
        if carry.size != 1:
            raise RingError(f"ring job {cfg.job_id}: exponent step carried {carry.size} values")
        best = np.maximum(best, carry)
    global_exp = None if int(best[0]) == NO_EXPONENT else int(best[0])
    scale_exp = qz.scale_exponent(global_exp, n)
    # 2. int32 values; |q| <= floor((2**31-1)/N), so no partial sum can wrap
    q = qz.quantize(x, scale_exp, n).astype(np.int32)
    acc, transport.next_step = ring_reduce(transport, q.view(np.uint32), None, step)
    result = qz.dequantize(acc.view(np.int32).astype(np.int64), scale_exp)
    return result, _report(transport, before, d, time.perf_counter() - t0, scale_exp)


def sketch_ring_allreduce(x: np.ndarray, transport: RingTransport,
                          fuse_rounds: bool = False) -> tuple[np.ndarray, RingReport]:
    """Sum ``x`` with HG-Sketch rounds aggregated over the ring (no switch aggregates): the
    same codec and the same exact sum as DHC, with the host ring as the reducer
    (``fuse_rounds``: the codec's two-round form, as ``dhc-agent --fuse-rounds``)."""
    n = len(transport.cfg.peers)
    before = transport.stats.as_dict()
    t0 = time.perf_counter()
    worker = make_worker(x, n, codec="hg", fuse_rounds=fuse_rounds)
    transport.rendezvous(int(worker.d))
    reducer = RingReducer(transport, first_step=transport.next_step)
    run_worker(worker, reducer)
    transport.next_step = reducer.step
    result = worker.result()
    return result, _report(transport, before, int(worker.d), time.perf_counter() - t0,
                           worker.scale_exponent, reducer.rounds)


# ---------------------------------------------------------------------- manifest and CLI
def load_ring(path: Path, host: str, job_id: int | None = None) -> tuple[int, tuple[RingPeer, ...], int]:
    """(job id, peers in ring order, this host's rank) from a job manifest
    (``hostagent.manifest`` format); the ring order is the manifest's worker order."""
    _, job = find_job(path, host, job_id)
    try:
        peers = tuple(RingPeer(name, str(w["ip"])) for name, w in job["workers"].items())
        jid = int(job["job_id"])
    except (KeyError, TypeError, ValueError) as err:
        raise ManifestError(f"{path}: job {job.get('job_id')}: missing or bad field {err}") from err
    return jid, peers, [p.name for p in peers].index(host)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.baselines.ring", description=__doc__.splitlines()[0])
    p.add_argument("--manifest", type=Path, required=True, help="job manifest JSON (dhc-ctl deploy)")
    p.add_argument("--host", required=True, help="this worker's host name in the manifest")
    p.add_argument("--job", type=int, help="job id (when the host is in several jobs)")
    p.add_argument("--input", type=Path, help=".npy file (float32)")
    p.add_argument("--dim", type=int, default=100_000)
    p.add_argument("--density", type=float, default=0.01)
    p.add_argument("--clustered", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rank", type=int, default=0, help="selects this worker's synthetic tensor")
    p.add_argument("--expect", type=Path, help=".npy with the expected float32 sum (bit for bit)")
    p.add_argument("--output", type=Path, help="write the sum here (.npy)")
    p.add_argument("--window", type=int, default=64, help="largest number of unacked packets")
    p.add_argument("--timeout", type=float, default=0.2, help="first retransmission timeout (s)")
    p.add_argument("--retries", type=int, default=12, help="retransmissions per packet")
    p.add_argument("--codec", choices=["dense", "hg"], default="dense",
                   help="dense: int32 values (the classic ring); hg: HG-Sketch rounds over the "
                        "ring (sketch_ring)")
    p.add_argument("--fuse-rounds", action="store_true",
                   help="hg: the element index and the sketch in one round (dhc-agent --fuse-rounds)")
    p.add_argument("--repeat", type=int, default=1,
                   help="AllReduce the tensor this many times; the summary is the last one's")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    return p


def _tensor(args: argparse.Namespace) -> np.ndarray:
    if args.input:
        try:
            return np.asarray(np.load(args.input, allow_pickle=False), dtype=np.float32)
        except (OSError, ValueError) as err:
            raise ManifestError(f"{args.input}: cannot read .npy: {err}") from err
    return synthetic_gradient(args.dim, args.density, seed=args.seed, rank=args.rank,
                              clustered=args.clustered)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        job_id, peers, rank = load_ring(args.manifest, args.host, args.job)
        retry = replace(RING_RETRY, initial_timeout=args.timeout, max_retries=args.retries)
        cfg = RingConfig(job_id=job_id, rank=rank, peers=peers, window=args.window, retry=retry)
        x = _tensor(args)
    except (ManifestError, RingError, CodecError) as err:
        print(f"ring: {err}", file=sys.stderr)
        return 2
    if args.fuse_rounds and args.codec != "hg":
        print("ring: --fuse-rounds applies to --codec hg only", file=sys.stderr)
        return 2
    mode = "ring" if args.codec == "dense" else "sketch_ring"
    summary: dict = {"mode": mode, "codec": args.codec, "job": job_id, "host": args.host,
                     "workers": len(peers)}
    reduce = (ring_allreduce if args.codec == "dense"
              else partial(sketch_ring_allreduce, fuse_rounds=args.fuse_rounds))
    try:
        with RingTransport(cfg) as transport:
            for _ in range(max(1, args.repeat)):
                result, report = reduce(x, transport)
            transport.linger()
    except (RingTimeout, RingError) as err:
        print(json.dumps({**summary, "ok": False, "error": str(err)}))
        print(f"ring: {err}", file=sys.stderr)
        return 3 if isinstance(err, RingTimeout) else 2
    except CodecError as err:
        print(f"ring: {err}", file=sys.stderr)
        return 2
    summary.update(report.as_dict())
    summary["ok"] = True
    return finish(summary, result, args.output, args.expect, args.json)


if __name__ == "__main__":
    sys.exit(main())

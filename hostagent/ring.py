"""Host-only ring AllReduce over UDP: the dense baseline DHC is measured against.

    python -m hostagent.ring --manifest jobs.json --host h1 --dim 1000000 --density 0.01 \
        --seed 1 --rank 0 --expect sum.npy --json

Every worker of the job (peers and ring order from the deployment's job manifest) runs one
process; no switch aggregates anything, the switches only forward.  The algorithm is the classic
bandwidth-optimal ring: reduce-scatter (N-1 steps) then all-gather (N-1 steps), each host sending
2 (N-1)/N of the tensor.  It runs on **int32** values quantized exactly as DHC's dense codec does
(``dhc.quantize``: one power-of-two scale from the global max exponent, agreed in N-1 tiny steps
first), so its result is bit for bit the dense codec's and DHC's — ``--expect`` checks exactly,
with no summation-order tolerance.  Transport: ``hostagent.ring_transport``.

Exit codes (as ``dhc-agent``): 0 ok, 1 result differs from --expect, 2 bad input, 3 timeout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from dhc import quantize as qz
from dhc.errors import CodecError
from dhc.synthetic import synthetic_gradient
from hostagent.manifest import ManifestError, find_job
from hostagent.ring_transport import RingConfig, RingError, RingPeer, RingTimeout, RingTransport
from hostagent.summary import finish

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

    def as_dict(self) -> dict:
        return asdict(self)


def chunk_edges(dim: int, n: int) -> list[int]:
    """Boundaries of the N ring chunks of a ``dim``-element tensor (sizes differ by at most 1)."""
    return [i * dim // n for i in range(n + 1)]


def ring_allreduce(x: np.ndarray, transport: RingTransport) -> tuple[np.ndarray, RingReport]:
    """Sum ``x`` over the ring; returns (float32 sum, report).  Raises RingTimeout/RingError."""
    cfg = transport.cfg
    x = qz.check_tensor(x)
    qz.check_finite(x)
    n, r, d = len(cfg.peers), cfg.rank, int(x.size)
    qz.check_worker_count(n)
    before = transport.stats.as_dict()
    t0 = time.perf_counter()
    transport.rendezvous(d)
    # 1. the global max exponent: a ring all-gather of one int32 per host (N-1 steps)
    local = qz.max_exponent(x)
    carry = best = np.array([NO_EXPONENT if local is None else local], dtype=np.int32)
    step = 0
    for _ in range(n - 1):
        carry = transport.exchange(step, carry)
        step += 1
        if carry.size != 1:
            raise RingError(f"ring job {cfg.job_id}: exponent step carried {carry.size} values")
        best = np.maximum(best, carry)
    global_exp = None if int(best[0]) == NO_EXPONENT else int(best[0])
    scale_exp = qz.scale_exponent(global_exp, n)
    # 2. int32 values; |q| <= floor((2**31-1)/N), so no partial sum can wrap
    acc = qz.quantize(x, scale_exp, n).astype(np.int32)
    edges = chunk_edges(d, n)

    def chunk(i: int) -> slice:
        return slice(edges[i % n], edges[i % n + 1])

    def expect_len(got: np.ndarray, i: int) -> np.ndarray:
        want = edges[i % n + 1] - edges[i % n]
        if got.size != want:
            raise RingError(f"ring job {cfg.job_id} step {step}: {cfg.prev.name} sent {got.size} "
                            f"values for chunk {i % n}, expected {want} (different --dim?)")
        return got

    # 3. reduce-scatter: after step k, chunk (r-k-1) holds k+2 contributions
    for k in range(n - 1):
        got = expect_len(transport.exchange(step, acc[chunk(r - k)]), r - k - 1)
        acc[chunk(r - k - 1)] += got
        step += 1
    # 4. all-gather: chunk r+1 is complete here; pass the complete chunks around
    for k in range(n - 1):
        got = expect_len(transport.exchange(step, acc[chunk(r + 1 - k)]), r - k)
        acc[chunk(r - k)] = got
        step += 1
    result = qz.dequantize(acc.astype(np.int64), scale_exp)
    elapsed = time.perf_counter() - t0
    after = transport.stats.as_dict()
    delta = {k: after[k] - before[k] for k in after}
    report = RingReport(elements=d, workers=n, rank=r, seconds=elapsed,
                        bytes_sent=delta["bytes_sent"], bytes_received=delta["bytes_received"],
                        packets_sent=delta["packets_sent"],
                        data_packets_sent=delta["data_packets_sent"], acks_sent=delta["acks_sent"],
                        retransmissions=delta["retransmissions"], duplicates=delta["duplicates"],
                        dense_float32_bytes=4 * d, scale_exponent=scale_exp)
    return result, report


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
    p = argparse.ArgumentParser(prog="python -m hostagent.ring", description=__doc__.splitlines()[0])
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
        cfg = RingConfig(job_id=job_id, rank=rank, peers=peers, window=args.window,
                         initial_timeout=args.timeout, max_retries=args.retries)
        x = _tensor(args)
    except (ManifestError, RingError, CodecError) as err:
        print(f"ring: {err}", file=sys.stderr)
        return 2
    summary: dict = {"mode": "ring", "job": job_id, "host": args.host, "workers": len(peers)}
    try:
        with RingTransport(cfg) as transport:
            result, report = ring_allreduce(x, transport)
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

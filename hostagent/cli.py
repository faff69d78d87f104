"""``dhc-agent``: join a job and AllReduce a tensor through the network.

    dhc-agent --job 1 --child 0 --switch 10.0.0.201 --workers 4 --window 64 \
              --dim 1000000 --density 0.01 --seed 7 --rank 0 --json
    dhc-agent --manifest jobs.json --host h1 --input grad.npy --expect sum.npy --output out.npy

With ``--manifest`` the endpoint comes from the deployment's job manifest (written by
``dhc-ctl deploy``), including the job's session epoch (``--epoch`` overrides it; after a failed
AllReduce, ``dhc-ctl jobs reset`` moves the job to a fresh epoch and rewrites the manifest:
docs/recovery.md).  The JSON summary on stdout has bytes sent/received, retransmissions,
time (of the last AllReduce; ``session`` holds the whole session's counters, the closing
padding exchange included), and — given ``--expect`` — whether the result equals the expected sum
bit for bit.
Exit codes: 0 ok, 1 result differs from --expect, 2 bad input, 3 timeout (a peer or switch
did not answer), 4 decode error.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dhc.errors import CodecError, DecodeError
from dhc.synthetic import synthetic_gradient
from dhcwire import header as wire
from dhcwire import limits
from hostagent.agent import Agent
from hostagent.chunk_state import ChunkStateError
from hostagent.manifest import ManifestError, load_endpoint
from hostagent.service_client import JoinConfig, ServiceError, config_from_env
from hostagent.summary import finish
from hostagent.transport import JobEndpoint, RetryPolicy, TransportTimeout


def _checked(check: Callable[[object], object], parse: Callable[[str], object] = int):
    """An argparse ``type``: parse the text, then the shared check of ``dhcwire.limits`` (the same
    a topology file and a manifest get), so a bad value is a usage error naming the option."""
    def convert(text: str):
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {_KIND.get(parse, 'valid')}") from None
        try:
            return check(value)
        except ValueError as err:
            raise argparse.ArgumentTypeError(f"{text!r}: {err}") from None
    convert.__name__ = check.__name__   # argparse names the type in "invalid ... value"
    return convert


_KIND: dict[Callable, str] = {int: "an integer", float: "a number"}


def _count(lo: int, hi: int | None = None) -> Callable[[str], int]:
    return _checked(lambda n: limits.integer(n, lo, hi))


def _positive(value: object) -> object:
    if not value > 0 or value != value or value == float("inf"):
        raise ValueError("must be a positive finite number")
    return value


def _density(value: float) -> float:
    if not 0 < value <= 1:
        raise ValueError("must be in (0, 1]")
    return value


def _bind(value: str) -> str:
    return str(ipaddress.IPv4Address(value))


_lanes = _checked(limits.lanes)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dhc-agent", description=__doc__.splitlines()[0])
    who = p.add_argument_group("job endpoint (or --manifest/--host)")
    who.add_argument("--manifest", type=Path, help="job manifest JSON written by dhc-ctl deploy")
    who.add_argument("--host", help="this worker's host name in the manifest")
    who.add_argument("--job", type=_checked(limits.job_id), help="job id")
    who.add_argument("--child", type=_checked(limits.child_id), help="child index at the first aggregator")
    who.add_argument("--switch", type=_checked(limits.endpoint_ip, str),
                     help="first aggregator's job address")
    who.add_argument("--workers", type=_count(1), help="number of workers in the job")
    who.add_argument("--window", type=_checked(limits.window), default=64, help="slots per job (W)")
    who.add_argument("--lanes", type=_lanes, default=wire.DEFAULT_LANES, help="lanes per packet (K)")
    who.add_argument("--bind", type=_checked(_bind, str), default="0.0.0.0", help="local address to bind")
    who.add_argument("--epoch", type=_checked(limits.epoch), default=None,
                     help="session epoch of the job (default: the manifest's, else 0)")
    svc = p.add_argument_group("job service (instead of the above: only the controller's address)")
    svc.add_argument("--controller", default=None, metavar="ADDR",
                     help="join through the job service at ADDR (HOST:PORT or unix:/path; $DHC_CONTROLLER)")
    svc.add_argument("--job-name", default=None, help="job name (default $DHC_JOB, $TORCHELASTIC_RUN_ID)")
    svc.add_argument("--token", default=None, help="the job's token (default $DHC_TOKEN)")
    svc.add_argument("--host-ip", default=None, help="this host's data-network address (default: found)")
    svc.add_argument("--session-key", default=None,
                     help="equal on every rank of one session, new for each (default $DHC_SESSION_KEY)")
    svc.add_argument("--tls-ca", default=None, help="CA certificate of the service's TLS")
    data = p.add_argument_group("tensor")
    data.add_argument("--input", type=Path, help=".npy file (float32)")
    data.add_argument("--dim", type=_count(1), default=100_000)
    data.add_argument("--density", type=_checked(_density, float), default=0.01)
    data.add_argument("--clustered", action="store_true", help="nonzeros in few blocks")
    data.add_argument("--seed", type=int, default=0)
    data.add_argument("--rank", type=int, default=0, help="selects this worker's synthetic tensor")
    p.add_argument("--codec", choices=["hg", "dense"], default="hg")
    p.add_argument("--fuse-rounds", action="store_true",
                   help="HG-Sketch: send the element index and the sketch in one round (two round "
                        "trips instead of three; the sketch is sized from the summed nonzero "
                        "counts, so overlapping supports cost more lanes). Every worker of the "
                        "job must agree")
    p.add_argument("--repeat", type=_count(1), default=1, help="AllReduce the tensor this many times")
    p.add_argument("--expect", type=Path, help=".npy with the expected float32 sum")
    p.add_argument("--output", type=Path, help="write the sum here (.npy)")
    p.add_argument("--timeout", type=_checked(_positive, float), default=0.2,
                   help="first retransmission timeout (s)")
    p.add_argument("--retries", type=_count(0, 1000), default=12, help="retransmissions per chunk")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--progress", action="store_true", help="show a progress bar on stderr")
    return p


def _service_config(args: argparse.Namespace) -> JoinConfig | None:
    """The join request when the endpoint comes from the job service (``--controller``)."""
    controller = args.controller or (None if args.manifest or args.job is not None
                                     else os.environ.get("DHC_CONTROLLER"))
    if not controller:
        return None
    try:
        return config_from_env(controller, job=args.job_name, token=args.token, host_ip=args.host_ip,
                               session_key=args.session_key, tls_ca=args.tls_ca, bind_ip=args.bind,
                               lanes=args.lanes if args.lanes != wire.DEFAULT_LANES else 0,
                               rank=args.rank if args.rank or "RANK" not in os.environ else None,
                               world_size=args.workers)
    except ServiceError as err:
        raise ManifestError(str(err)) from None


def _endpoint(args: argparse.Namespace) -> tuple[JobEndpoint, int]:
    if args.manifest:
        if not args.host:
            raise ManifestError("--manifest needs --host")
        return load_endpoint(args.manifest, args.host, job_id=args.job, bind_ip=args.bind,
                             epoch=args.epoch)
    missing = [n for n in ("job", "child", "switch", "workers") if getattr(args, n) is None]
    if missing:
        raise ManifestError("missing " + ", ".join("--" + m for m in missing) + " (or --manifest)")
    return JobEndpoint(job_id=args.job, child_id=args.child, switch_ip=args.switch,
                       window=args.window, lanes=args.lanes, bind_ip=args.bind,
                       epoch=args.epoch or 0), args.workers


def _tensor(args: argparse.Namespace) -> np.ndarray:
    if args.input:
        try:
            x = np.load(args.input, allow_pickle=False)
        except (OSError, ValueError, EOFError) as err:
            raise ManifestError(f"{args.input}: cannot read .npy: {err}") from None
        if not isinstance(x, np.ndarray) or x.dtype.kind not in "biuf":
            what = x.dtype if isinstance(x, np.ndarray) else type(x).__name__
            raise ManifestError(f"{args.input}: expected a real-valued tensor, got {what}")
        return np.asarray(x, dtype=np.float32)
    return synthetic_gradient(args.dim, args.density, seed=args.seed, rank=args.rank,
                              clustered=args.clustered)


def _service_ack(agent: Agent) -> dict:
    """The job service's answer to this agent's failure report (service mode only)."""
    return {"service": agent.service_ack} if agent.service_ack else {}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    retry = RetryPolicy(initial_timeout=args.timeout, max_retries=args.retries)
    if args.fuse_rounds and args.codec != "hg":
        print("dhc-agent: --fuse-rounds applies to --codec hg only (the dense codec has one round)",
              file=sys.stderr)
        return 2
    params = {"fuse_rounds": True} if args.fuse_rounds else {}
    try:
        service = _service_config(args)
        if service is not None:
            x = _tensor(args)
            joined = Agent.join(service, codec=args.codec, retry=retry, codec_params=params)
            endpoint, n_workers = joined.endpoint, joined.n_workers
        else:
            endpoint, n_workers = _endpoint(args)
            x = _tensor(args)
    except (ManifestError, CodecError, ServiceError) as err:
        print(f"dhc-agent: {err}", file=sys.stderr)
        return 2
    summary: dict = {"job": endpoint.job_id, "epoch": endpoint.epoch, "child": endpoint.child_id,
                     "switch": endpoint.switch_ip, "workers": n_workers, "codec": args.codec,
                     "fused_rounds": bool(args.fuse_rounds)}
    bar = None
    try:
        with (joined if service is not None else Agent(endpoint, n_workers, codec=args.codec, retry=retry,
                                                           codec_params=params)) \
                as agent:
            reports = []
            for _ in range(args.repeat):
                if args.progress:
                    from tqdm import tqdm
                    bar = tqdm(unit="chunk", file=sys.stderr, desc=f"job {endpoint.job_id}")
                result, report = agent.allreduce(x, progress=bar.update if bar else None)
                if bar:
                    bar.close()
                reports.append(report.as_dict())
    except TransportTimeout as err:
        print(json.dumps({**summary, "ok": False, "error": str(err), **_service_ack(agent)}))
        print(f"dhc-agent: {err}", file=sys.stderr)
        return 3
    except DecodeError as err:
        msg = f"{err}. {agent.recovery_hint}"
        print(json.dumps({**summary, "ok": False, "error": msg, **_service_ack(agent)}))
        print(f"dhc-agent: decode failed: {msg}", file=sys.stderr)
        return 4
    except (CodecError, ChunkStateError) as err:
        print(f"dhc-agent: {err}", file=sys.stderr)
        return 2
    summary.update(reports[-1])
    summary["repeats"] = len(reports)
    # the whole session, the closing padding exchange included (its losses are recovered too)
    summary["session"] = {k: v for k, v in agent.transport.stats.as_dict().items() if isinstance(v, int)}
    summary["ok"] = True
    return finish(summary, result, args.output, args.expect, args.json)


if __name__ == "__main__":
    sys.exit(main())

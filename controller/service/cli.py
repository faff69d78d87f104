"""``dhc-ctl serve`` and ``dhc-ctl jobs create | list | delete`` (the job service's commands).

``serve`` runs the service in the foreground until SIGTERM/SIGINT; the others talk to a running
service over gRPC (``--controller ADDR``, optional ``--tls-ca``).  Exit codes: 0 ok, 2 bad input,
5 the service cannot be reached, 9 the service refused the request (its message printed).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from controller.deploy.errors import PlanError
from controller.errors import ControllerError

EXIT_UNREACHABLE = 5
EXIT_REFUSED = 9


class ServiceError(ControllerError):
    """The job service refused a request."""

    exit_code = EXIT_REFUSED


class ServiceUnreachable(ServiceError):
    """The job service did not answer."""

    exit_code = EXIT_UNREACHABLE


def _secret(path: str | None, env: str) -> str | None:
    if path:
        try:
            text = Path(path).read_text().strip()
        except OSError as err:
            raise PlanError(f"{path}: cannot read: {err.strerror}") from None
        if not text:
            raise PlanError(f"{path}: empty secret")
        return text
    return os.environ.get(env) or None


def _lanes(args: argparse.Namespace, topo) -> int:
    if args.lanes:
        return args.lanes
    lanes = {j.lanes for j in topo.jobs}
    from dhcwire.lanes import DEFAULT_LANES
    return lanes.pop() if len(lanes) == 1 else DEFAULT_LANES


def cmd_serve(args: argparse.Namespace) -> int:
    from controller.pipeline import PROGRAM, PipelineFiles, SoftswitchBuild
    from controller.service.server import Service, ServiceConfig, listen_addresses
    from controller.service.sessions import Limits
    from controller.switch_addrs import switch_addresses
    from controller.topology_file import load

    topo = load(args.topo)
    addrs = switch_addresses(topo, args.switch_addr_map)
    if not addrs:
        raise PlanError(f"no switch of {topo.name} has a P4Runtime address: give grpc_port in the topology "
                        "or --switch-addr-map NAME=HOST:PORT,...")
    source = None if args.no_pipeline else SoftswitchBuild(Path(args.program or PROGRAM))
    if args.p4info or args.device_config:
        if not (args.p4info and args.device_config):
            raise PlanError("--p4info and --device-config go together")
        source = PipelineFiles(Path(args.p4info), Path(args.device_config))
    if not args.watch_interval > 0:
        raise PlanError(f"--watch-interval must be > 0, got {args.watch_interval}")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise PlanError("--tls-cert and --tls-key go together")
    limits = Limits(heartbeat_interval_s=args.heartbeat_interval, heartbeat_timeout_s=args.heartbeat_timeout,
                    join_timeout_s=args.join_timeout, window=args.window)
    cfg = ServiceConfig(topo, addrs, args.listen, Path(args.state), _lanes(args, topo),
                        source, limits, _secret(args.secret_file, "DHC_JOIN_SECRET"),
                        _secret(args.admin_token_file, "DHC_ADMIN_TOKEN"),
                        Path(args.tls_cert) if args.tls_cert else None,
                        Path(args.tls_key) if args.tls_key else None, timeout=args.timeout,
                        watch_interval_s=args.watch_interval)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s dhc-ctl serve: %(message)s",
                        stream=sys.stderr)
    service = Service(cfg)
    port = service.start()
    if port == 0:
        service.stop()
        bad = [a for a, p in zip(listen_addresses(args.listen), service.ports, strict=False) if p == 0]
        raise PlanError(f"cannot listen on {', '.join(bad) or args.listen}")
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: service._stop.set())
    print(json.dumps({"listening": args.listen, "port": port, "ports": service.ports, "fabric": topo.name,
                      "switches": sorted(cfg.addrs), "lanes": cfg.lanes, "state": str(cfg.state),
                      "tls": bool(args.tls_cert)}), flush=True)
    service.wait()
    service.stop()
    return 0


def _call(args: argparse.Namespace, method: str, request):
    import grpc

    from dhcwire.jobservice import open_channel, rpc

    with open_channel(args.controller, args.tls_ca) as channel:
        try:
            return getattr(rpc.JobServiceStub(channel), method)(request, timeout=args.timeout)
        except grpc.RpcError as err:
            if err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise ServiceUnreachable(f"job service at {args.controller} does not answer: "
                                         f"{err.details()}") from None
            raise ServiceError(f"job service refused {method}: {err.code().name}: {err.details()}") from None


def cmd_jobs_create(args: argparse.Namespace) -> int:
    from dhcwire.jobservice import pb

    admin = _secret(args.admin_token_file, "DHC_ADMIN_TOKEN") or ""
    reply = _call(args, "CreateJob", pb.CreateJobRequest(admin_token=admin, job=args.name,
                                                         world_size=args.world_size))
    if args.json:
        print(json.dumps({"job": args.name, "world_size": args.world_size, "token": reply.token}))
    else:
        print(reply.token)
        print(f"job {args.name!r} created (world size {args.world_size}); give every rank this token "
              "(DHC_TOKEN or --token); it is not shown again", file=sys.stderr)
    return 0


def cmd_jobs_delete(args: argparse.Namespace) -> int:
    from dhcwire.jobservice import pb

    admin = _secret(args.admin_token_file, "DHC_ADMIN_TOKEN") or ""
    print(_call(args, "DeleteJob", pb.DeleteJobRequest(admin_token=admin, job=args.name)).message)
    return 0


def cmd_jobs_list(args: argparse.Namespace) -> int:
    from google.protobuf.json_format import MessageToDict

    from dhcwire.jobservice import pb

    reply = _call(args, "Status", pb.StatusRequest())
    if args.json:
        print(json.dumps(MessageToDict(reply, always_print_fields_with_no_presence=True)))
        return 0
    table = Table(title=f"jobs of fabric {reply.fabric}")
    for col in ("job", "id", "state", "session", "epoch", "ranks", "regions", "last failure"):
        table.add_column(col)
    for j in reply.jobs:
        table.add_row(j.name, str(j.job_id or "-"), j.state, str(j.session), str(j.epoch),
                      f"{len(j.members)}/{j.world_size}",
                      ", ".join(f"{r.switch}:{r.base}..{r.base + r.slots - 1}" for r in j.regions) or "-",
                      j.last_failure or "")
    console = Console()
    console.print(table)
    console.print("refused: " + (", ".join(f"{c.name} {c.count}" for c in reply.refused) or "none")
                  + f"; epochs moved: {reply.epochs_moved}")
    return 0


def _client(p: argparse.ArgumentParser) -> None:
    p.add_argument("--controller", default=os.environ.get("DHC_CONTROLLER"), required="DHC_CONTROLLER" not in
                   os.environ, help="the job service: HOST:PORT or unix:/path (default $DHC_CONTROLLER)")
    p.add_argument("--tls-ca", default=None, help="CA certificate: talk TLS and check the service against it")
    p.add_argument("--admin-token-file", default=None,
                   help="the service's admin token (default $DHC_ADMIN_TOKEN)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the service")


def register_jobs(jsub: argparse._SubParsersAction, guard) -> None:
    """``jobs create | list | delete`` under ``dhc-ctl jobs``."""
    cr = jsub.add_parser("create", help="create a job on a running job service; prints its token")
    _client(cr)
    cr.add_argument("--name", required=True, help="job name (under torchrun: the --rdzv-id)")
    cr.add_argument("--world-size", type=int, required=True, help="number of ranks")
    cr.set_defaults(handler=guard(cmd_jobs_create))
    ls = jsub.add_parser("list", help="the job service's jobs, sessions, epochs, regions, refusals")
    _client(ls)
    ls.set_defaults(handler=guard(cmd_jobs_list))
    rm = jsub.add_parser("delete", help="delete a job from the job service (its entries go)")
    _client(rm)
    rm.add_argument("--name", required=True, help="job name")
    rm.set_defaults(handler=guard(cmd_jobs_delete))


def register_serve(sub: argparse._SubParsersAction, guard, common) -> None:
    p = sub.add_parser("serve",
                       help="run the job service for one fabric (gRPC; agents need only its address)")
    common(p, placement=False)
    p.add_argument("--listen", default="0.0.0.0:50060",
                   help="HOST:PORT or unix:/path, or several comma-separated (default 0.0.0.0:50060)")
    p.add_argument("--state", required=True, help="SQLite file with the service's state (created if absent)")
    p.add_argument("--secret-file", default=None,
                   help="shared join secret: any job name may be joined (and is created) with it "
                        "(default $DHC_JOIN_SECRET; without one, jobs come from `jobs create`)")
    p.add_argument("--admin-token-file", default=None,
                   help="token for `jobs create|delete` (default $DHC_ADMIN_TOKEN)")
    p.add_argument("--tls-cert", default=None, help="PEM certificate chain: serve TLS")
    p.add_argument("--tls-key", default=None, help="PEM private key of --tls-cert")
    p.add_argument("--lanes", type=int, default=0, help="lanes per packet of the program (default: the "
                   "topology's jobs' lanes)")
    p.add_argument("--window", type=int, default=64, help="default slots per job (W)")
    p.add_argument("--heartbeat-interval", type=float, default=1.0, help="seconds between agents' heartbeats")
    p.add_argument("--heartbeat-timeout", type=float, default=6.0,
                   help="a rank silent this long abandons its session (new epoch)")
    p.add_argument("--watch-interval", type=float, default=1.0,
                   help="seconds between the watcher's rounds: silent ranks, restarted switches")
    p.add_argument("--join-timeout", type=float, default=120.0, help="longest wait for all ranks to join")
    p.add_argument("--no-pipeline", action="store_true", help="use the program the switches run")
    p.add_argument("--program", default=None, help="P4 program (default p4src/dhc.p4)")
    p.add_argument("--p4info", default=None, help="push this P4Info (e.g. p4c's for BMv2)")
    p.add_argument("--device-config", default=None, help="with --p4info: the device config (BMv2 JSON)")
    p.set_defaults(handler=guard(cmd_serve))

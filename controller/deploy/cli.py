"""``dhc-ctl deploy | jobs add | jobs remove | jobs reset | status | shell``: the deployment subcommands.

``register(sub)`` adds them to ``dhc-ctl``'s subparsers (``controller/cli.py``).  Human output is
rich tables, ``--json`` prints one JSON object on stdout.  Exit codes: 0 ok, 2 bad input file or
placement, 5 switch unreachable / request refused, 6 updates rejected (each named), 7 conflict
with another job's state, 8 ``status`` found an unreachable switch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from controller.bmv2_build import Bmv2Build
from controller.deploy.errors import ConflictError, PlanError, WriteError
from controller.errors import ControllerError
from controller.pipeline import PROGRAM, PipelineFiles, PipelineSource, SoftswitchBuild
from controller.placement import Placement, place_incremental
from controller.rollout import rollout
from controller.targets import TARGETS, check_lanes
from controller.topology_file import load

EXIT_UNREACHABLE = 8


def _placement(path: str) -> Placement:
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as err:
        raise PlanError(f"placement {path}: cannot read: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise PlanError(f"placement {path}: not a placement written by 'dhc-ctl place' "
                        f"(not UTF-8 text at byte {err.start})") from None
    try:
        return Placement.from_json(text)
    except json.JSONDecodeError as err:
        raise PlanError(f"placement {path}:{err.lineno}:{err.colno}: not JSON: {err.msg}") from None
    except RecursionError:
        raise PlanError(
            f"placement {path}: not a placement written by 'dhc-ctl place' (nested too deeply)"
        ) from None
    except (KeyError, TypeError, ValueError) as err:
        raise PlanError(
            f"placement {path}: not a placement written by 'dhc-ctl place' (bad field {err})"
        ) from None


def _addresses(args: argparse.Namespace, topo):
    from controller.switch_addrs import switch_addresses

    addrs = switch_addresses(topo, args.switch_addr_map)
    if not addrs:
        raise PlanError(f"no switch of {topo.name} has a P4Runtime address: give grpc_port in the topology "
                        "or --switch-addr-map NAME=HOST:PORT,...")
    return addrs


def _manifest_epochs(path: str | None) -> dict[int, int]:
    """job -> epoch of an existing manifest (what the agents use); {} if there is none."""
    from hostagent.manifest import ManifestError, read_manifest

    if not path or not Path(path).is_file():
        return {}
    try:
        jobs = read_manifest(Path(path))["jobs"]
    except ManifestError:
        return {}   # it is rewritten anyway
    return {j["job_id"]: j["epoch"] for j in jobs if isinstance(j, dict)
            and isinstance(j.get("job_id"), int) and isinstance(j.get("epoch"), int)}


def _error_doc(err: ControllerError) -> dict:
    doc: dict = {"error": type(err).__name__, "message": str(err)}
    if isinstance(err, WriteError):
        doc["failures"] = [vars(f) for f in err.failures]
    if isinstance(err, ConflictError):
        doc["conflicts"] = err.conflicts
    return doc


def _guard(handler):
    """Run a handler; report ControllerErrors as JSON (with per-update details) or on stderr."""
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except ControllerError as err:
            if getattr(args, "json", False):
                print(json.dumps(_error_doc(err)))
            print(f"dhc-ctl: {err}", file=sys.stderr)
            return err.exit_code
    return run


def _render_report(report, title: str, console: Console) -> None:
    table = Table(title=title)
    for col in ("switch", "pipeline", "inserted", "modified", "deleted"):
        table.add_column(col)
    for n, r in report.switches.items():
        table.add_row(
            n, "pushed" if r.pipeline_pushed else "-", str(r.inserted), str(r.modified), str(r.deleted)
        )
    console.print(table)
    console.print(
        f"{report.writes} update(s) written" + (" (already up to date)" if not report.writes else "")
    )
    if report.skipped:
        console.print(f"[yellow]no P4Runtime address, not deployed:[/yellow] {', '.join(report.skipped)}")


def _deploy(args: argparse.Namespace, jobs: set[int] | None, pipeline: bool, title: str,
            placement: Placement | None = None) -> int:
    topo = load(args.topo)
    placement = placement or _placement(args.placement)
    target = getattr(args, "target", "softswitch")
    check_lanes(topo, target)
    source: PipelineSource = (Bmv2Build(Path(args.program)) if target == "bmv2"
                              else SoftswitchBuild(Path(args.program)))
    if getattr(args, "p4info", None) or getattr(args, "device_config", None):
        if not (args.p4info and args.device_config):
            raise PlanError("--p4info and --device-config go together")
        source = PipelineFiles(Path(args.p4info), Path(args.device_config))
    done = rollout(topo, _addresses(args, topo), placement=placement, manifest=args.manifest, jobs=jobs,
                   pipeline=pipeline, prune=args.prune, source=source, dry_run=args.dry_run,
                   timeout=args.timeout, epochs=_manifest_epochs(args.manifest))
    report = done.report
    doc = report.to_dict()
    if args.manifest:
        doc["manifest"] = str(args.manifest)
    if args.json:
        print(json.dumps(doc))
    else:
        _render_report(report, title + (" (dry run: nothing written)" if args.dry_run else ""), Console())
        if args.manifest:
            Console().print(f"job manifest written to {args.manifest}")
    return 0


@_guard
def cmd_deploy(args: argparse.Namespace) -> int:
    return _deploy(args, None, not args.no_pipeline, "deployment")


@_guard
def cmd_jobs_add(args: argparse.Namespace) -> int:
    """A job the placement does not hold yet is placed incrementally (the placed jobs keep their
    trees unless moving some lowers the bottleneck); the placement file is updated and the new
    job plus any moved job are installed."""
    placement = _placement(args.placement)
    jobs = {args.job}
    if args.job not in {jp.job_id for jp in placement.jobs}:
        placed = {jp.job_id for jp in placement.jobs}
        topo = load(args.topo)
        if args.job not in {j.id for j in topo.jobs}:
            raise PlanError(f"job(s) [{args.job}] are not in the placement ({args.placement}) nor in the "
                            f"topology ({args.topo})")
        topo = topo.with_jobs([j for j in topo.jobs if j.id in placed or j.id == args.job])
        grown = place_incremental(topo, placement, time_limit=args.time_limit)
        jobs |= {jp.job_id for jp in placement.jobs if grown.job(jp.job_id).root != jp.root}
        placement = grown
        if not args.dry_run:
            Path(args.placement).write_text(placement.to_json(indent=2) + "\n")
    return _deploy(args, jobs, False, f"job {args.job} added" + (f" (moved: {sorted(jobs - {args.job})})"
                                                                  if len(jobs) > 1 else ""), placement)


@_guard
def cmd_jobs_remove(args: argparse.Namespace) -> int:
    from controller.deploy.apply import remove_job

    topo = load(args.topo)
    report = remove_job(topo, _addresses(args, topo), args.job, timeout=args.timeout)
    if not report.writes:
        raise PlanError(f"job {args.job} does not exist on any switch of {topo.name} "
                        f"({', '.join(report.switches) or 'none addressed'}): nothing removed")
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        _render_report(report, f"job {args.job} removed", Console())
    return 0


@_guard
def cmd_jobs_reset(args: argparse.Namespace) -> int:
    from controller.reset import reset_job
    from hostagent.manifest import ManifestError, read_manifest, set_epoch

    topo = load(args.topo)
    addrs = _addresses(args, topo)
    if args.manifest:   # checked before any switch changes: it is rewritten after they did
        try:
            jobs = read_manifest(Path(args.manifest))["jobs"]
        except ManifestError as err:
            raise PlanError(f"manifest: {err}") from None
        if not any(isinstance(j, dict) and j.get("job_id") == args.job for j in jobs):
            raise PlanError(f"manifest {args.manifest}: job {args.job} is not in it")
    avoid = {v for k, v in _manifest_epochs(args.manifest).items() if k == args.job}
    report = reset_job(addrs, args.job, avoid=avoid, timeout=args.timeout)
    if args.manifest:
        try:
            set_epoch(Path(args.manifest), args.job, report.new_epoch)
        except ManifestError as err:
            raise PlanError(
                f"switches moved job {args.job} to epoch {report.new_epoch}, but the manifest "
                f"was not rewritten: {err}; start agents with --epoch {report.new_epoch}"
            ) from None
        report.manifest = str(args.manifest)
    if args.json:
        print(json.dumps(report.to_dict()))
        return 0
    console = Console()
    table = Table(title=f"job {args.job} reset to epoch {report.new_epoch}")
    for col in ("switch", "epoch before", "epoch now"):
        table.add_column(col)
    for sw, before in report.before.items():
        table.add_row(sw, ", ".join(map(str, before)) or "(none)", str(report.new_epoch))
    console.print(table)
    console.print(f"order: {report.order}")
    if report.manifest:
        console.print(f"manifest {report.manifest}: job {args.job} epoch = {report.new_epoch}; restart the "
                      "job's workers from it")
    else:
        console.print(
            f"[yellow]no --manifest: start the job's workers with --epoch {report.new_epoch}[/yellow]"
        )
    return 0


@_guard
def cmd_status(args: argparse.Namespace) -> int:
    from controller import status

    topo = load(args.topo)
    result = status.collect(_addresses(args, topo), timeout=args.timeout)
    if args.json:
        print(json.dumps(status.to_json(result)))
    else:
        status.render(result, Console())
    return EXIT_UNREACHABLE if any(s.error for s in result) else 0


@_guard
def cmd_shell(args: argparse.Namespace) -> int:
    topo = load(args.topo)
    addrs = _addresses(args, topo)
    if args.switch not in addrs:
        raise PlanError(
            f"no P4Runtime address for switch {args.switch!r} (known: {', '.join(sorted(addrs))})"
        )
    a = addrs[args.switch]
    argv = [sys.executable, "-m", "p4runtime_sh", "--grpc-addr", a.addr, "--device-id", str(a.device_id),
            "--election-id", args.election_id]
    if args.print_command:
        print(" ".join(argv))
        return 0
    os.execv(sys.executable, argv)
    return 0  # not reached


def _common(p: argparse.ArgumentParser, placement: bool) -> None:
    p.add_argument("--topo", required=True, help="topology file (YAML or .json)")
    if placement:
        p.add_argument("--placement", required=True, help="placement JSON written by 'dhc-ctl place --out'")
    p.add_argument(
        "--switch-addr-map",
        default=None,
        metavar="MAP",
        help="NAME=HOST:PORT[@DEVICE],... or a JSON/YAML file (default: grpc_port/device_id of the topology)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--timeout", type=float, default=10.0, help="per-RPC timeout in seconds")


def _writer(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--manifest", default=None, metavar="OUT.json", help="write the workers' job manifest here"
    )
    p.add_argument("--prune", action="store_true",
                   help="also delete state the placement does not contain (other jobs, orphans)")
    p.add_argument("--dry-run", action="store_true", help="compute and report the changes, write nothing")
    p.add_argument("--program", default=str(PROGRAM), help="P4 program to push (default p4src/dhc.p4)")
    p.add_argument("--target", choices=sorted(TARGETS), default="softswitch",
                   help="the switches' P4 target: softswitch (its front end builds the program) or "
                        "bmv2 (p4c builds it, cached; jobs at a K BMv2 cannot run are refused)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("deploy", help="program every switch for a placement (P4Runtime, idempotent)")
    _common(p, placement=True)
    _writer(p)
    p.add_argument(
        "--no-pipeline", action="store_true", help="do not push the P4 program; use the running one"
    )
    p.add_argument(
        "--p4info", default=None, help="push this P4Info instead of compiling --program (e.g. p4c's for BMv2)"
    )
    p.add_argument(
        "--device-config", default=None, help="with --p4info: the device config to push (BMv2 JSON)"
    )
    p.set_defaults(handler=cmd_deploy)

    jobs = sub.add_parser("jobs", help="add, remove or reset one job's entries")
    jsub = jobs.add_subparsers(dest="jobs_command", required=True)
    add = jsub.add_parser("add", help="install one job of the placement (the pipeline must be running)")
    _common(add, placement=True)
    _writer(add)
    add.add_argument("--job", type=int, required=True, help="job id")
    add.add_argument("--time-limit", type=float, default=60.0,
                     help="for a job the placement lacks: placement time limit (the file is updated)")
    add.set_defaults(handler=cmd_jobs_add)
    rm = jsub.add_parser("remove", help="delete exactly one job's entries from every switch")
    _common(rm, placement=False)
    rm.add_argument("--job", type=int, required=True, help="job id")
    rm.set_defaults(handler=cmd_jobs_remove)
    rs = jsub.add_parser("reset", help="start a fresh session epoch for one job (after a failed AllReduce)")
    _common(rs, placement=False)
    rs.add_argument("--job", type=int, required=True, help="job id")
    rs.add_argument("--manifest", default=None, metavar="JOBS.json",
                    help="job manifest to rewrite with the new epoch (what the agents read)")
    rs.set_defaults(handler=cmd_jobs_reset)
    from controller.service.cli import register_jobs, register_serve  # the job service's commands
    register_jobs(jsub, _guard)
    register_serve(sub, _guard, _common)

    st = sub.add_parser("status", help="per-switch, per-job counters")
    _common(st, placement=False)
    st.set_defaults(handler=cmd_status)

    sh = sub.add_parser("shell", help="open p4runtime-shell on one switch")
    sh.add_argument("switch", help="switch name")
    sh.add_argument("--topo", required=True, help="topology file")
    sh.add_argument("--switch-addr-map", default=None, metavar="MAP", help="as for deploy")
    sh.add_argument("--election-id", default="0,2", help="HIGH,LOW (default 0,2: above the deployer's 0,1)")
    sh.add_argument(
        "--print-command", action="store_true", help="print the p4runtime-shell command, do not run it"
    )
    sh.set_defaults(handler=cmd_shell)

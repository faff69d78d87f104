"""``dhc-ctl``: the DHC control-plane CLI.

Subcommands register themselves in ``build_parser``; each handler takes the parsed arguments and
returns an exit code.  Exit codes: 0 ok, 2 bad input file, 3 infeasible placement, 4 solver gave
no answer in time, 1 anything else the user can fix.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from controller.deploy.cli import register as register_deploy_commands
from controller.errors import ControllerError, InfeasiblePlacement, TopologyError
from controller.placement import Placement, place
from controller.targets import TARGETS, check_lanes
from controller.topology_file import load

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_INFEASIBLE = 3


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.2f} MiB"


def render_placement(p: Placement, console: Console, top_links: int = 10) -> None:
    """Human-readable placement: summary, one row per aggregator, the busiest links."""
    o = p.objective
    console.print(
        f"[bold]placement of {p.topology}[/bold]  solver {p.solver}, "
        f"{p.solve_time_s:.3f} s, {'optimal (proven)' if p.optimal else '[red]NOT proven optimal[/red]'}"
        + (f", budget {p.budget}" if p.budget is not None else "")
    )
    console.print(f"bottleneck {_mib(o.bottleneck_bytes)}/iteration per direction, total "
                  f"{_mib(o.total_bytes)}, {o.aggregator_count} register regions, "
                  f"{len(p.deployed)} programmable switches (cost {o.deploy_cost})")
    console.print(bound_line(p))
    table = Table(title="aggregation trees")
    for col in ("job", "switch", "role", "parent", "fan-in", "children", "region"):
        table.add_column(col)
    for jp in p.jobs:
        if jp.root is None:
            table.add_row(
                str(jp.job_id), "-", "single worker", "-", "0", ", ".join(jp.first_aggregator) or "-", "-"
            )
            continue
        for agg in jp.aggregators:
            kids = ", ".join(f"{c.index}:{c.name}" for c in agg.children)
            table.add_row(str(jp.job_id), agg.switch, "root" if agg.parent is None else "aggregator",
                          agg.parent or "-", str(len(agg.children)), kids,
                          f"{agg.region_base}..{agg.region_base + agg.region_slots - 1}")
    console.print(table)
    busy = sorted((ll for ll in p.link_loads if ll.bytes), key=lambda ll: (-ll.bytes, ll.a, ll.b))[:top_links]
    links = Table(title=f"busiest links (top {len(busy)}, load per direction)")
    for col in ("link", "streams", "bytes/iteration"):
        links.add_column(col)
    for ll in busy:
        links.add_row(f"{ll.a}:{ll.a_port} - {ll.b}:{ll.b_port}", str(ll.streams), _mib(ll.bytes))
    console.print(links)


def bound_line(p: Placement) -> str:
    """Proven lower bounds and the gaps to them, and how the time split into building and solving."""
    gaps = p.gaps()
    total = ("not proven (bottleneck not proven)" if p.bound.total_bytes is None
             else f"{_mib(p.bound.total_bytes)} (gap {gaps['total']:.2%})")
    return (
        f"proven lower bound: bottleneck {_mib(p.bound.bottleneck_bytes)} (gap {gaps['bottleneck']:.2%}), "
        f"total {total}; model build {p.build_time_s:.3f} s of {p.solve_time_s:.3f} s"
    )


def cmd_place(args: argparse.Namespace) -> int:
    topo = load(args.topo)
    check_lanes(topo, args.target)   # a K the target cannot run is refused before solving
    try:
        result = place(topo, args.budget, time_limit=args.time_limit, workers=args.workers)
    except InfeasiblePlacement as err:
        raise InfeasiblePlacement(err.binding, source=args.topo) from None
    if args.out:
        Path(args.out).write_text(result.to_json(indent=2) + "\n")
    if args.json:
        print(result.to_json())
    else:
        render_placement(result, Console())
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dhc-ctl", description="DHC controller: place and deploy in-network aggregation"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("place", help="compute the optimal aggregation trees (OR-Tools CP-SAT)")
    p.add_argument("--topo", required=True, help="topology file (YAML or .json)")
    p.add_argument("--budget", type=int, default=None,
                   help="deployment budget: total deploy_cost of switches made programmable (default: all)")
    p.add_argument("--json", action="store_true", help="print the placement as one JSON object")
    p.add_argument("--out", help="also write the placement JSON to this file")
    p.add_argument("--time-limit", type=float, default=60.0, help="solver time limit in seconds")
    p.add_argument("--workers", type=int, default=2, help="solver threads")
    p.add_argument("--target", choices=sorted(TARGETS), default="softswitch",
                   help="the P4 target the jobs will run on: refuse jobs whose lanes it cannot run")
    p.set_defaults(handler=cmd_place)
    register_deploy_commands(sub)  # deploy, jobs add|remove, status, shell (controller/deploy/cli.py)
    return parser


def _fail(err: ControllerError, as_json: bool) -> int:
    if as_json:
        doc: dict = {"error": type(err).__name__, "message": str(err)}
        if isinstance(err, InfeasiblePlacement):
            doc["binding"] = [vars(b) for b in err.binding]
            doc["file"] = err.source
        if isinstance(err, TopologyError):
            doc["file"] = err.source
            doc["problems"] = [vars(p) for p in err.problems]
        print(json.dumps(doc))
    print(f"dhc-ctl: {err}", file=sys.stderr)
    return err.exit_code


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "budget", None) is not None and args.budget < 0:
        print("dhc-ctl: --budget must be >= 0", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return args.handler(args)
    except ControllerError as err:
        return _fail(err, getattr(args, "json", False))
    except BrokenPipeError:  # output piped into e.g. `head`: not an error of ours
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep the interpreter from re-raising at exit
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

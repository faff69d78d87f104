"""``make run``: the whole DHC story on one machine, with a summary table; exit 0 only if exact.

    python -m topologies.run_story --topo topologies/leafspine.yaml [--mode sketch|dense]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from controller.errors import ControllerError, TopologyError
from controller.topology_file import load
from topologies.shaping import RateError, parse_rate
from topologies.story import StoryResult, run_story
from topologies.workload import Workload


def summary_table(result: StoryResult) -> Table:
    t = Table(title=f"DHC on {result.topology} ({result.target}): per worker")
    for col in ("job", "worker", "exact", "codec", "bytes sent", "dense fp32", "ratio", "seconds",
                "retransmits"):
        t.add_column(col, justify="right" if col not in ("worker", "codec") else "left")
    for o in result.outcomes:
        s = o.summary
        sent, dense = s.get("bytes_sent", 0), s.get("dense_float32_bytes", 0)
        t.add_row(str(o.job_id), o.host, "yes" if o.exact else "NO",
                  str(s.get("codec", "?")), f"{sent:,}", f"{dense:,}",
                  f"{dense / sent:.1f}x" if sent else "-", f"{s.get('seconds', 0):.2f}",
                  str(s.get("retransmissions", "-")))
    return t


def placement_table(result: StoryResult) -> Table:
    t = Table(title=f"placement ({result.placement.solver}, optimal={result.placement.optimal}, "
                    f"{result.placement.solve_time_s:.2f} s)")
    for col in ("job", "root", "aggregator", "parent", "children"):
        t.add_column(col)
    for jp in result.placement.jobs:
        for a in jp.aggregators:
            t.add_row(str(jp.job_id), str(jp.root), a.switch, str(a.parent),
                      ", ".join(f"{c.name}#{c.index}" for c in a.children))
    return t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="run_story", description=__doc__.splitlines()[0])
    p.add_argument("--topo", default="topologies/leafspine.yaml")
    p.add_argument("--mode", choices=["sketch", "dense"], default="sketch")
    p.add_argument("--target", choices=["auto", "softswitch", "bmv2"], default="auto")
    p.add_argument("--dim", type=int, default=200_000)
    p.add_argument("--density", type=float, default=0.01)
    p.add_argument("--clustered", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--bw", help="shape every link to this tc rate (e.g. 100mbit, 1gbit); "
                                "default: each link's bandwidth_gbps from the topology file")
    p.add_argument("--workdir", type=Path)
    p.add_argument("--json", action="store_true", help="print the result as JSON too")
    args = p.parse_args(argv)
    console = Console()
    if os.geteuid() != 0:
        console.print("[red]make run needs root (Mininet creates network namespaces)[/red]")
        return 2
    try:
        topo = load(args.topo)
        if args.bw:
            parse_rate(args.bw)
    except (TopologyError, RateError) as err:
        console.print(f"[red]{err}[/red]")
        return 2
    dim = args.dim if args.mode == "sketch" else min(args.dim, 50_000)
    workload = Workload(dim=dim, density=args.density, clustered=args.clustered, seed=args.seed,
                        codec="hg" if args.mode == "sketch" else "dense")
    console.print(f"DHC story: {topo.name}, {len(topo.switches)} switches, {len(topo.hosts)} hosts, "
                  f"{len(topo.jobs)} job(s); {workload.codec} codec, d={dim}, "
                  f"density={args.density:g}{' clustered' if args.clustered else ''}")
    try:
        result = run_story(topo, workload, args.target, args.workdir, bandwidth=args.bw)
    except ControllerError as err:   # e.g. p4c missing or failing for --target bmv2
        console.print(f"[red]{err}[/red]")
        return 2
    for job_id, (asked, used) in sorted(result.lanes_changed.items()):
        console.print(f"job {job_id}: {asked} lanes per packet asked, {result.target} runs {used} "
                      "(controller/targets.py; docs/bmv2.md): the manifest tells the workers")
    console.print(placement_table(result))
    console.print(summary_table(result))
    for o in result.outcomes:
        if not o.exact:
            why = o.summary.get("error") or (o.stderr.strip().splitlines() or ["no output"])[-1]
            console.print(f"[red]job {o.job_id} {o.host}: exit {o.returncode}: {why}[/red]")
    console.print(f"links: {result.bandwidth} (tbf); deploy {result.deploy_seconds:.1f} s, "
                  f"AllReduce {result.run_seconds:.1f} s; "
                  + ("[green]every worker holds the exact sum[/green]" if result.exact
                     else "[red]NOT EXACT[/red]"))
    if args.json:
        print(
            json.dumps(
                {
                    "exact": result.exact,
                    "target": result.target,
                    "lanes_changed": {str(j): list(v) for j, v in result.lanes_changed.items()},
                    "bandwidth": result.bandwidth,
                    "workers": [o.summary for o in result.outcomes],
                    "status": result.status,
                }
            )
        )
    return 0 if result.exact else 1


if __name__ == "__main__":
    sys.exit(main())

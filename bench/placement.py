"""Placement at scale, and the models side by side (``dhc-bench placement --json``).

**Goal instances** (``--goals``, default the three of the placement issue): a k-ary fat-tree with
random jobs, placed by ``place`` (the scalable root-class model); reported: wall time (model
building included), building time, the bottleneck and total with their proven lower bounds and
gaps, and whether the wall time met the target.  The solver's time limit is a fraction of the
target, so building, evaluation and the limit together stay inside it.

**Side by side** (``--long``; ``--ks`` x ``--jobs``, about 450 s, so opt-in): the same seeded
instance solved by the scalable model, the root-assignment model (where it is exact) and the
tree-flow model, to check that the bottlenecks agree wherever the references prove their
optimum.  A second set adds limits (tight register memory, a deployment budget), which only the
tree-flow model solves.

The machine's load average is recorded with every run: the figures are wall-clock times.
"""

from __future__ import annotations

import argparse
import os
import time

from controller.errors import ControllerError
from controller.placement import place
from topologies.fattree import build_fattree, random_jobs

#: k, jobs, workers per job, wall-time target (s); from the placement issue.
GOALS = ("16:64:8:5", "32:256:32:30", "48:512:32:120")
#: Share of the wall-time target given to the solver as its time limit.
LIMIT_SHARE = 0.75


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--goals", nargs="*", default=list(GOALS), metavar="K:JOBS:WORKERS:SECONDS",
                        help="goal instances (default: the issue's three); none to skip")
    parser.add_argument("--ks", type=int, nargs="*", default=[4, 8], help="fat-tree arities, side by side")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 4, 16], help="job counts, side by side")
    parser.add_argument("--workers-per-job", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=60.0, help="per solve, side by side")
    parser.add_argument("--general-time-limit", type=float, default=10.0,
                        help="per solve of the tree-flow model (side-by-side and limited instances)")
    parser.add_argument("--skip-general", action="store_true", help="no tree-flow model runs")
    parser.add_argument("--long", action="store_true",
                        help="also the side-by-side comparison with the exact models (--ks x --jobs; "
                             "about 450 s, so opt-in)")


def _solve(topo, budget, time_limit, method) -> dict:
    start = time.perf_counter()
    try:
        p = place(topo, budget, time_limit=time_limit, method=method)
    except ControllerError as err:
        return {"error": type(err).__name__, "message": str(err),
                "wall_s": round(time.perf_counter() - start, 4)}
    wall = time.perf_counter() - start
    gaps = p.gaps()
    return {"solver": p.solver, "wall_s": round(wall, 3), "build_s": p.build_time_s,
            "solve_s": round(p.solve_time_s - p.build_time_s, 3), "optimal": p.optimal,
            "bottleneck_bytes": p.objective.bottleneck_bytes, "bottleneck_bound": p.bound.bottleneck_bytes,
            "bottleneck_gap": gaps["bottleneck"], "total_bytes": p.objective.total_bytes,
            "total_bound": p.bound.total_bytes, "total_gap": gaps["total"],
            "aggregators": p.objective.aggregator_count, "phases": list(p.notes)}


def _goal(spec: str, seed: int) -> dict:
    try:
        k, n_jobs, workers, target = (float(x) if i == 3 else int(x) for i, x in enumerate(spec.split(":")))
    except ValueError:
        raise ValueError(f"--goals: {spec!r} is not K:JOBS:WORKERS:SECONDS") from None
    base = build_fattree(k)
    topo = base.with_jobs(random_jobs(base, n_jobs, workers, seed=seed))
    load_before = os.getloadavg()[0]
    row = {
        "k": k,
        "switches": len(topo.switches),
        "hosts": len(topo.hosts),
        "jobs": n_jobs,
        "workers_per_job": workers,
        "target_wall_s": target,
        "time_limit_s": round(LIMIT_SHARE * target, 2),
        "load_avg_1min_before": round(load_before, 2),
    }
    row["result"] = r = _solve(topo, None, LIMIT_SHARE * target, "auto")
    row["load_avg_1min_after"] = round(os.getloadavg()[0], 2)
    row["within_target"] = "error" not in r and r["wall_s"] <= target
    return row


def _side_by_side(args: argparse.Namespace) -> tuple[list[dict], list[dict]]:
    rows, limited = [], []
    for k in args.ks:
        base = build_fattree(k)
        for n_jobs in args.jobs:
            topo = base.with_jobs(random_jobs(base, n_jobs, min(args.workers_per_job, len(base.hosts)),
                                              seed=args.seed))
            row = {"k": k, "switches": len(topo.switches), "hosts": len(topo.hosts), "jobs": n_jobs,
                   "scale": _solve(topo, None, args.time_limit, "scale"),
                   "assign": _solve(topo, None, args.time_limit, "assign")}
            if not args.skip_general:
                row["general"] = _solve(topo, None, args.general_time_limit, "general")
            s = row["scale"]
            for ref in ("assign", "general"):
                r = row.get(ref)
                if r and "error" not in r and "error" not in s and r["optimal"]:
                    row[f"same_bottleneck_as_{ref}"] = r["bottleneck_bytes"] == s["bottleneck_bytes"]
            rows.append(row)
        if args.skip_general:
            continue
        n_jobs = min(4, max(args.jobs))
        jobs = random_jobs(base, n_jobs, min(args.workers_per_job, len(base.hosts)), seed=args.seed)
        tight = build_fattree(k, register_slots=2 * jobs[0].window).with_jobs(jobs)  # one region per switch
        budget = len(base.switches) // 4
        for name, topo, b in (
            ("memory: one region per switch", tight, None),
            (f"budget: {budget} of {len(base.switches)} switches", base.with_jobs(jobs), budget),
        ):
            limited.append({"k": k, "jobs": n_jobs, "limit": name,
                            "general": _solve(topo, b, args.general_time_limit, "general")})
    return rows, limited


def run(args: argparse.Namespace) -> dict:
    goals = [_goal(spec, args.seed) for spec in args.goals]
    rows, limited = _side_by_side(args) if args.long else ([], [])
    return {"benchmark": "placement", "seed": args.seed, "solver_threads": 2, "cpus": os.cpu_count(),
            "goals": goals, "instances": rows, "limited": limited}

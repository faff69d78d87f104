"""Placement solve time on k-ary fat-trees (``dhc-bench placement --json``).

For each k and job count, the same random instance (seeded) is solved by the model ``place``
picks (the root-assignment model when no limit can bind) and, side by side, by the general
tree-flow model, so the speed-up and the agreement of the two optima are measured in one run.
A second set of instances adds limits (tight register memory, a deployment budget), which only
the general model can solve; those report whether optimality was proven within the time limit.
"""

from __future__ import annotations

import argparse
import time

from controller.errors import ControllerError
from controller.placement import place
from topologies.fattree import build_fattree, random_jobs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ks", type=int, nargs="+", default=[4, 8], help="fat-tree arities")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 4, 16], help="job counts")
    parser.add_argument("--workers-per-job", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=60.0, help="per solve, default model")
    parser.add_argument("--general-time-limit", type=float, default=10.0,
                        help="per solve of the general model (side-by-side and limited instances)")
    parser.add_argument("--skip-general", action="store_true", help="only the default model")


def _solve(topo, budget, time_limit, general) -> dict:
    start = time.perf_counter()
    try:
        p = place(topo, budget, time_limit=time_limit, force_general=general)
    except ControllerError as err:
        return {"error": type(err).__name__, "message": str(err),
                "wall_s": round(time.perf_counter() - start, 4)}
    return {"solver": p.solver, "wall_s": round(time.perf_counter() - start, 4), "optimal": p.optimal,
            "bottleneck_bytes": p.objective.bottleneck_bytes, "total_bytes": p.objective.total_bytes,
            "aggregators": p.objective.aggregator_count, "deployed": len(p.deployed), "phases": list(p.notes)}


def run(args: argparse.Namespace) -> dict:
    rows, limited = [], []
    for k in args.ks:
        base = build_fattree(k)
        for n_jobs in args.jobs:
            topo = base.with_jobs(random_jobs(base, n_jobs, min(args.workers_per_job, len(base.hosts)),
                                              seed=args.seed))
            row = {"k": k, "switches": len(topo.switches), "hosts": len(topo.hosts), "jobs": n_jobs,
                   "default": _solve(topo, None, args.time_limit, False)}
            if not args.skip_general:
                row["general"] = g = _solve(topo, None, args.general_time_limit, True)
                d = row["default"]
                if "error" not in g and "error" not in d:
                    row["same_objective"] = (g["bottleneck_bytes"], g["total_bytes"]) == (
                        d["bottleneck_bytes"], d["total_bytes"])
                    row["general_over_default_time"] = round(g["wall_s"] / max(d["wall_s"], 1e-9), 1)
            rows.append(row)
        if args.skip_general:
            continue
        n_jobs = min(4, max(args.jobs))
        jobs = random_jobs(base, n_jobs, min(args.workers_per_job, len(base.hosts)), seed=args.seed)
        window_slots = 2 * jobs[0].window
        tight = build_fattree(k, register_slots=window_slots).with_jobs(jobs)  # one region per switch
        budget = len(base.switches) // 4
        for name, topo, b in (("memory: one region per switch", tight, None),
                              (f"budget: {budget} of {len(base.switches)} switches", base.with_jobs(jobs), budget)):
            limited.append({"k": k, "jobs": n_jobs, "limit": name,
                            "general": _solve(topo, b, args.general_time_limit, True)})
    return {"benchmark": "placement", "workers_per_job": args.workers_per_job, "seed": args.seed,
            "solver_threads": 2, "instances": rows, "limited": limited}

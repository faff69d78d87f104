"""``dhc-bench scale``: DHC and its baselines at datacenter scale (SimGrid, ``sim/``).

Arms (each a set of ``sim.runner.simulate`` scenarios on the smallest fat-tree that holds the
workers, line-rate hosts unless ``--host``):

* ``workers``: time per AllReduce against workers at 10, 100 and 400 Gbit/s, every mode, with
  and without this machine's codec time (``network_s``);
* ``density``: the crossover in density (64 workers, 100 Gbit/s), uniform supports;
* ``window``: dense INA and DHC against the window W (the W x K x 4 B per round trip bound);
* ``models``: per real model (``bench/out/models.json`` from ``dhc-bench models``): its size and
  density after top-k, 64 workers at 100 Gbit/s, and the time per training iteration with a
  stated compute time (``COMPUTE_S``: assumed accelerator step times, not measured here).

``--quick`` is a smoke run (seconds); ``--long`` adds 512 and 1,024 workers (k = 16).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from dataclasses import replace
from pathlib import Path

from sim.parts import SwitchModel
from sim.runner import Scenario, simulate

#: assumed per-iteration compute of one worker (forward + backward on an accelerator), seconds
COMPUTE_S = {"resnet50": 0.10, "vgg19": 0.15, "bert_base": 0.20, "lstm": 0.05, "ncf": 0.01}
MODES = ("ring", "sketch_ring", "dense_ina", "dhc")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="a smoke run: 8-16 workers, 100 Gbit/s")
    parser.add_argument("--long", action="store_true", help="also 512 and 1,024 workers (k = 16)")
    parser.add_argument("--dim", type=int, default=25_000_000, help="elements per worker (default 25M)")
    parser.add_argument("--density", type=float, default=0.01)
    parser.add_argument("--host", default="line-rate", help="host profile (line-rate | this-machine)")
    parser.add_argument("--models-json", type=Path, default=Path("bench/out/models.json"))
    parser.add_argument("--arms", default="workers,density,window,models")
    parser.add_argument("--lanes", type=int, default=256,
                        help="K lanes per packet (256, the topology files' value: 1,080-byte frames a "
                             "40 Mpps host can send at 345 Gbit/s; at K = 32 it stops at 59 Gbit/s)")


def fattree_for(n: int) -> str:
    k = 4
    while k ** 3 // 4 < n:
        k += 2
    return f"fattree:k={k}"


def _row(arm: str, res: dict, **keys) -> dict:
    keep = ("seconds", "network_s", "bytes_per_worker", "packets_per_worker", "rounds")
    modes = {m: {k: r[k] for k in keep} for m, r in res["modes"].items()}
    row = {"arm": arm, **keys, "modes": modes, "wall_s": res["wall_s"]["total"]}
    if "dhc" in modes:
        dhc = modes["dhc"]
        row["speedup_of_dhc"] = {m: round(v["seconds"] / dhc["seconds"], 4)
                                 for m, v in modes.items() if m != "dhc"}
        row["network_speedup_of_dhc"] = {m: round(v["network_s"] / dhc["network_s"], 4)
                                         for m, v in modes.items() if m != "dhc"}
    return row


def workers_arm(args: argparse.Namespace, base: Scenario) -> list[dict]:
    ns = [8, 16] if args.quick else [8, 16, 64, 128] + ([512, 1024] if args.long else [])
    bws = [100e9] if args.quick else [10e9, 100e9, 400e9]
    rows = []
    for n in ns:
        for bw in bws:
            res = simulate(replace(base, topo=fattree_for(n), workers=n, bw_bps=bw))
            rows.append(_row("workers", res, workers=n, bw_gbps=bw / 1e9, dim=base.dim, density=base.density))
    return rows


def density_arm(args: argparse.Namespace, base: Scenario) -> list[dict]:
    n = 16 if args.quick else 64
    rows = []
    for d in ([0.01, 0.2] if args.quick else [0.001, 0.003, 0.01, 0.03, 0.1, 0.3]):
        res = simulate(replace(base, topo=fattree_for(n), workers=n, bw_bps=100e9, density=d))
        rows.append(_row("density", res, workers=n, bw_gbps=100.0, dim=base.dim, density=d))
    return rows


def window_arm(args: argparse.Namespace, base: Scenario) -> list[dict]:
    n = 16 if args.quick else 64
    rows = []
    for w in ([4, 256] if args.quick else [4, 16, 64, 256, 1024, 2048]):
        scn = replace(base, topo=fattree_for(n), workers=n, bw_bps=100e9, modes=("dense_ina", "dhc"),
                      codec_time=False, switch=replace(base.switch, window=w))
        res = simulate(scn)
        row = _row("window", res, workers=n, bw_gbps=100.0, window=w, dim=base.dim, density=base.density)
        job = res["modes"]["dense_ina"]["jobs"]["1"]
        row["window_rate_gbps"], row["tree_rtt_us"] = job["window_rate_gbps"], job["tree_rtt_us"]
        rows.append(row)
    return rows


def models_arm(args: argparse.Namespace, base: Scenario) -> list[dict]:
    if args.quick or not args.models_json.exists():
        return []
    models = json.loads(args.models_json.read_text())["models"]
    n = 64
    rows = []
    for m in models:
        scn = replace(base, topo=fattree_for(n), workers=n, bw_bps=100e9, dim=m["parameters"],
                      density=max(m["density_after_top_k"], 1e-5))
        res = simulate(scn)
        row = _row("models", res, model=m["model"], workers=n, bw_gbps=100.0, dim=m["parameters"],
                   density=scn.density, compute_s=COMPUTE_S.get(m["model"], 0.0))
        row["iteration_s"] = {mode: round(row["compute_s"] + v["network_s"], 6)
                              for mode, v in row["modes"].items()}
        rows.append(row)
    return rows


def crossovers(rows: list[dict]) -> dict:
    """Per baseline: the lowest density of the density arm at which DHC's network time is no
    longer below the baseline's (None: DHC is faster across the arm)."""
    dens = sorted((r for r in rows if r["arm"] == "density"), key=lambda r: r["density"])
    out = {}
    for base in ("ring", "sketch_ring", "dense_ina"):
        hit = next((r["density"] for r in dens
                    if r["network_speedup_of_dhc"].get(base, math.inf) <= 1.0), None)
        out[f"density_where_dhc_stops_beating_{base}"] = hit
    return out


def run(args: argparse.Namespace) -> dict:
    started = time.perf_counter()
    load = os.getloadavg()[0]
    dim = 200_000 if args.quick else args.dim
    base = Scenario(dim=dim, density=args.density, host=args.host, switch=SwitchModel(lanes=args.lanes),
                    modes=MODES, bucket=min(1_000_000, dim))
    arms = {"workers": workers_arm, "density": density_arm, "window": window_arm, "models": models_arm}
    wanted = [a.strip() for a in args.arms.split(",") if a.strip()]
    bad = [a for a in wanted if a not in arms]
    if bad:
        raise SystemExit(f"dhc-bench scale: unknown arm(s) {', '.join(bad)}; choose from {', '.join(arms)}")
    rows = [row for a in wanted for row in arms[a](args, base)]
    return {"benchmark": "scale", "quick": args.quick, "long": args.long, "host": args.host,
            "lanes": args.lanes, "rows": rows, "crossovers": crossovers(rows), "compute_s_assumed": COMPUTE_S,
            "wall_s": round(time.perf_counter() - started, 1),
            "load_avg_1min_before_after": [round(load, 2), round(os.getloadavg()[0], 2)],
            "cpus": os.cpu_count()}

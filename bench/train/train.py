"""``dhc-bench train``: data-parallel training in the emulated cluster, four ways, same links.

    sudo .venv/bin/dhc-bench train --json --bw 100mbit [--steps 200] [--out bench/out]
    sudo .venv/bin/dhc-bench train --json --quick           # a smoke run (small model, 6 steps,
                                                             # 2 of them dense warm-up)

One Mininet network (``topologies.story.deployed_net``: P4 switches running ``p4src/dhc.p4``,
links shaped with tbf to ``--bw``), N workers (the topology's first aggregated job), and for each
mode a fresh set of ``bench.train.train_worker`` processes, one per host, training the same model from
the same initial weights on the same shards of scikit-learn's digits (``bench.train.train_data``):

* ``ddp``: plain DDP over gloo (the dense ring between the hosts);
* ``dhc_topk``: the DHC hook, top-k with error feedback, HG-Sketch summed in the switches;
* ``dhc_dense``: the DHC hook, dense quantized values summed in the switches (SwitchML style);
* ``sketch_ring``: the DHC hook's top-k + HG-Sketch over gloo (compression, no INA).

Per mode: median seconds per iteration (first ``WARMUP`` steps left out), test accuracy over
steps and over wall-clock time, bytes each host sent per iteration (its interface counter), and
whether every rank ended with the same parameters.  ``ratios`` compare ``ddp`` with each mode.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.train.train_plots import plot_all
from controller.placement import place
from controller.topology_file import load
from topologies.shaping import RateError, parse_rate

ROOT = Path(__file__).resolve().parents[2]
#: iterations left out of the per-iteration time (DDP's first buckets, JIT, connection set-up)
WARMUP = 3
MASTER_PORT = 29_500
#: dense steps before top-k (the top-k modes): see docs/e2e.md, "Accuracy"
DENSE_WARMUP = 5
#: the ways of training compared (``bench.train.train_worker`` implements each)
TRAIN_MODES = ("ddp", "dhc_topk", "dhc_dense", "sketch_ring")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topo", type=Path, default=ROOT / "topologies" / "single.yaml")
    parser.add_argument("--bw", default="100mbit", help="link rate for every link (tc rate)")
    parser.add_argument("--modes", default=",".join(TRAIN_MODES))
    parser.add_argument("--model", choices=["small", "large"], default="large")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=32, help="per-worker batch")
    parser.add_argument("--ratio", type=float, default=0.01, help="top-k share (DHC modes)")
    parser.add_argument("--dense-warmup", type=int, default=DENSE_WARMUP,
                        help="first steps the top-k modes send dense (dense codec; default "
                             f"{DENSE_WARMUP}); 0: top-k from the first step")
    parser.add_argument("--eval-every", type=int, default=20)
    parser.add_argument("--deadline", type=float, default=1800.0, help="seconds allowed per mode")
    parser.add_argument("--quick", action="store_true", help="small model, 6 steps (smoke run)")
    parser.add_argument("--target", choices=["auto", "softswitch", "bmv2"], default="auto")
    parser.add_argument("--plot-dir", type=Path, help="write train_curves.png/train_steps.png here")


def _check(args: argparse.Namespace) -> list[str]:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in TRAIN_MODES]
    if bad or not modes:
        raise SystemExit(f"dhc-bench train: unknown mode(s) {bad}; choose from {', '.join(TRAIN_MODES)}")
    try:
        parse_rate(args.bw)
    except RateError as err:
        raise SystemExit(f"dhc-bench train: --bw: {err}") from err
    if args.steps < 1 or args.batch < 1 or args.eval_every < 1:
        raise SystemExit("dhc-bench train: --steps, --batch and --eval-every must be >= 1")
    if args.dense_warmup < 0:
        raise SystemExit("dhc-bench train: --dense-warmup must be >= 0")
    if os.geteuid() != 0:
        raise SystemExit("dhc-bench train: needs root (Mininet creates network namespaces)")
    return modes


def _launch(handle, manifest: Path, workers: list[str], mode: str, port: int, args) -> dict:
    """One mode: a worker process per host; returns host -> its JSON result (or error)."""
    first = handle.host(workers[0])
    master = f"{first.IP()}:{port}"
    procs = {}
    for rank, name in enumerate(workers):
        host = handle.host(name)
        cmd = [sys.executable, "-m", "bench.train.train_worker", "--manifest", str(manifest),
               "--host", name, "--rank", str(rank), "--world", str(len(workers)),
               "--master", master, "--ifname", host.intf().name, "--mode", mode,
               "--model", args.model, "--steps", str(args.steps), "--batch", str(args.batch),
               "--ratio", str(args.ratio), "--eval-every", str(args.eval_every),
               "--dense-warmup", str(args.dense_warmup)]
        procs[name] = host.popen(cmd, stdout=-1, stderr=-1, cwd=str(ROOT))
    end = time.monotonic() + args.deadline
    out: dict[str, dict] = {}
    for name, proc in procs.items():
        try:
            stdout, stderr = proc.communicate(timeout=max(1.0, end - time.monotonic()))
        except Exception:     # TimeoutExpired: kill what is left, report it
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
            stdout, stderr = proc.communicate()
        lines = [ln for ln in stdout.decode(errors="replace").splitlines() if ln.startswith("{")]
        out[name] = json.loads(lines[-1]) if proc.returncode == 0 and lines else {
            "error": f"exit {proc.returncode}: " + stderr.decode(errors="replace")[-600:]}
    return out


def summarize(mode: str, results: dict[str, dict]) -> dict:
    """One mode's row from its workers' results."""
    failed = {h: r["error"] for h, r in results.items() if "error" in r}
    if failed:
        return {"mode": mode, "ok": False, "errors": failed}
    rows = list(results.values())
    per_step = [max(r["step_seconds"][i] for r in rows) for i in range(rows[0]["steps"])]
    timed = per_step[WARMUP:] or per_step
    steps = rows[0]["steps"]
    return {
        "mode": mode, "ok": True, "model": rows[0]["model"], "parameters": rows[0]["parameters"],
        "steps": steps, "seconds_per_step": statistics.median(timed),
        "mean_seconds_per_step": statistics.fmean(timed),
        "training_seconds": sum(per_step),
        "bytes_per_step_per_worker": max(r["tx_bytes"] for r in rows) / steps,
        "final_accuracy": rows[0]["final_accuracy"],
        "curve": rows[0]["curve"], "losses": rows[0]["losses"],
        "replicas_identical": len({r["params_digest"] for r in rows}) == 1,
    }


def _ratios(rows: dict[str, dict]) -> dict:
    base = rows.get("ddp")
    out: dict = {}
    if not base or not base.get("ok"):
        return out
    for mode, r in rows.items():
        if mode == "ddp" or not r.get("ok"):
            continue
        out[f"step_time_ddp_over_{mode}"] = base["seconds_per_step"] / r["seconds_per_step"]
        out[f"bytes_ddp_over_{mode}"] = (base["bytes_per_step_per_worker"]
                                         / max(1.0, r["bytes_per_step_per_worker"]))
        out[f"accuracy_points_{mode}_minus_ddp"] = 100 * (r["final_accuracy"] - base["final_accuracy"])
    if "step_time_ddp_over_dhc_topk" in out:
        out["goal_dhc_3x_faster_per_step"] = out["step_time_ddp_over_dhc_topk"] >= 3
        out["goal_accuracy_within_1_point"] = abs(out["accuracy_points_dhc_topk_minus_ddp"]) <= 1
    return out


def run(args: argparse.Namespace) -> dict:
    modes = _check(args)
    if args.quick:
        args.model, args.steps, args.eval_every = "small", 6, 3
        args.dense_warmup = min(args.dense_warmup, 2)   # both kinds of step still run
    from topologies.story import deployed_net  # needs Mininet: `dhc-bench --help` works without

    topo = load(args.topo)
    job = next((j for j in topo.jobs if j.needs_aggregation), None)
    if job is None:
        raise SystemExit(f"dhc-bench train: {args.topo}: no aggregated job")
    placement = place(topo)
    rows: dict[str, dict] = {}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dhc-train-") as tmp, \
            deployed_net(topo, placement, Path(tmp), args.target, bandwidth=args.bw) as (
                handle, manifest, _):
        for i, mode in enumerate(modes):
            rows[mode] = summarize(mode, _launch(handle, manifest, list(job.workers), mode,
                                                 MASTER_PORT + i, args))
    result = {"runs": list(rows.values()), "ratios": _ratios(rows),
              "config": {"topology": topo.name, "bandwidth": args.bw, "workers": len(job.workers),
                         "model": args.model, "steps": args.steps, "batch": args.batch,
                         "topk_ratio": args.ratio, "warmup_steps_excluded": WARMUP,
                         "dense_warmup_steps": args.dense_warmup,
                         "quick": bool(args.quick), "total_seconds": time.perf_counter() - t0}}
    if args.plot_dir:
        result["figures"] = [str(p) for p in plot_all(result, args.plot_dir)]
    return result

"""``dhc-bench e2e``: the 2x2 of compression x in-network aggregation, on one Mininet.

|                         | dense       | HG-Sketch     |
|-------------------------|-------------|---------------|
| host ring (no INA)      | ring        | sketch_ring   |
| in-network (switches)   | dense_ina   | dhc           |

One deployed network per link bandwidth (``topologies.story.deployed_net``: P4 switches running
``p4src/dhc.p4``, placed and deployed by the controller, every link shaped with tbf to
``--bw``), one job, and in one run every mode after the other on the same hosts:

* ``dhc``: ``dhc-agent --codec hg`` on every worker (HG-Sketch lanes summed by the switches);
* ``sketch_ring``: ``python -m bench.baselines.ring --codec hg`` (the same HG-Sketch rounds, summed by
  the hosts over a ring, as LHC or S2 run over NCCL; the switches only forward);
* ``dense_ina``: ``dhc-agent --codec dense`` (every quantized value through the switches,
  SwitchML style) — at ``--dense-dim`` elements if given, and then labelled as scaled;
* ``ring``: ``python -m bench.baselines.ring`` (reduce-scatter + all-gather of the int32-quantized
  dense tensor over UDP).

All four return bit for bit the same float32 sum (the codecs and the ring quantize with the
same global scale), so ``exact`` is one check against one independently simulated sum.  Per
mode: ``seconds`` = median over ``--repeat`` runs of the max over workers of the AllReduce time
each worker measured (first packet to holding the sum) for its last AllReduce: every worker
process first runs ``--warmup`` untimed AllReduces of the same tensor, so process start-up skew
and JIT compilation are not charged to any mode (as in training, where every step is warm);
``wire_bytes``/``packets_sent`` = max over workers of the UDP payload bytes/datagrams it sent.
``ratios`` compare each mode with ``dhc``, side by side at the same bandwidth.

``--rounds`` picks the HG-Sketch form for both ``dhc`` and ``sketch_ring`` (the same codec on
both sides): ``fused`` (the default; ``dhc-agent --fuse-rounds``: the element index and the
sketch share one round, two round trips) or ``separate`` (the codec's default three rounds, the
sketch sized from the exact union).  docs/e2e.md has both measured side by side.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from controller.placement import place
from controller.topology import SUPPORTED_LANES, Topology
from controller.topology_file import load
from dhc.codec import simulate_allreduce
from dhc.synthetic import synthetic_job
from hostagent.fastio import native_selected
from hostagent.native_delivery import native_engine_selected
from topologies.shaping import RateError, parse_rate
from topologies.workload import Workload, collect

ROOT = Path(__file__).resolve().parents[2]
MODES = ("dhc", "sketch_ring", "dense_ina", "ring")
#: HG-Sketch round plans (``--rounds``): fused = the codec's two-round form
ROUNDS = ("fused", "separate")
QUICK_DIM = 50_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topo", type=Path, default=ROOT / "topologies" / "single.yaml",
                        help="topology file (default topologies/single.yaml)")
    parser.add_argument("--job", type=int, help="job to run (default: the first aggregated job)")
    parser.add_argument("--dim", type=int, default=1_000_000, help="tensor elements (default 1M)")
    parser.add_argument("--density", type=float, default=0.01, help="nonzero share (default 0.01)")
    parser.add_argument("--dense-dim", type=int,
                        help="measure dense INA at this many elements (default --dim) and report "
                             "it per element, scaled to --dim")
    parser.add_argument("--clustered", action="store_true", help="clustered supports")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of "
                        + ", ".join(MODES))
    parser.add_argument("--quick", action="store_true", help=f"d = {QUICK_DIM} (a smoke run)")
    parser.add_argument("--target", choices=["auto", "softswitch", "bmv2"], default="auto")
    parser.add_argument("--deadline", type=float, default=240.0, help="seconds allowed per mode")
    parser.add_argument("--bw", default="100mbit,1gbit",
                        help="comma-separated link rates, one network each (default "
                             "100mbit,1gbit); an empty value keeps the topology file's "
                             "bandwidth_gbps per link")
    parser.add_argument("--lanes", default="",
                        help="comma-separated lanes per packet (K), one network each with every "
                             "job built for it, side by side with the bandwidths (default: the "
                             "topology's jobs[].lanes)")
    parser.add_argument("--warmup", type=int, default=3,
                        help="untimed AllReduces each worker process runs first (process start-up "
                             "skew, JIT compilation, first touches); default 3: after one, the "
                             "timed AllReduce was still bimodal (docs/e2e.md)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per mode and bandwidth; seconds are their median (default 3, "
                             "--quick: 1)")
    parser.add_argument("--rounds", choices=ROUNDS, default="fused",
                        help="HG-Sketch rounds of dhc and sketch_ring alike: fused (element index "
                             "and sketch in one round; default) or separate (three rounds)")


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise SystemExit(f"dhc-bench e2e: unknown mode(s) {bad or text!r}; choose from {', '.join(MODES)}")
    return modes


def _check_args(args: argparse.Namespace) -> tuple[int, int]:
    dim = QUICK_DIM if args.quick else args.dim
    dense_dim = min(args.dense_dim or dim, dim)
    if dim < 1 or dense_dim < 1:
        raise SystemExit(f"dhc-bench e2e: --dim and --dense-dim must be >= 1 (got {dim}, {dense_dim})")
    if not 0.0 < args.density <= 1.0:
        raise SystemExit(f"dhc-bench e2e: --density must be in (0, 1], got {args.density}")
    if args.repeat < 1 or args.warmup < 0:
        raise SystemExit(f"dhc-bench e2e: --repeat must be >= 1 and --warmup >= 0, got "
                         f"{args.repeat} and {args.warmup}")
    _lane_counts(args.lanes)
    for bw in _bandwidths(args.bw):
        try:
            parse_rate(bw)
        except RateError as err:
            raise SystemExit(f"dhc-bench e2e: --bw: {err}") from err
    if os.geteuid() != 0:
        raise SystemExit("dhc-bench e2e: needs root (Mininet creates network namespaces)")
    return dim, dense_dim


def _bandwidths(text: str) -> list[str]:
    return [b.strip() for b in text.split(",") if b.strip()]


def _lane_counts(text: str) -> list[int | None]:
    """``--lanes``: the K values to compare, or ``[None]`` (the topology's own)."""
    try:
        ks = [int(k) for k in text.split(",") if k.strip()]
    except ValueError:
        raise SystemExit(f"dhc-bench e2e: --lanes: expected integers, got {text!r}") from None
    bad = [k for k in ks if k not in SUPPORTED_LANES]
    if bad:
        raise SystemExit(f"dhc-bench e2e: --lanes: {bad} not among the P4 program's lane counts "
                         f"{', '.join(map(str, SUPPORTED_LANES))}")
    return list(ks) or [None]


def _with_lanes(topo: Topology, lanes: int | None) -> Topology:
    """``topo`` with every job at ``lanes`` lanes per packet (unchanged for None)."""
    if lanes is None:
        return topo
    return dataclasses.replace(topo, jobs=tuple(dataclasses.replace(j, lanes=lanes)
                                                for j in topo.jobs))


def _ring_command(manifest: Path, host: str, rank: int, job_id: int, dim: int, args,
                  expect: Path, output: Path | None, codec: str) -> list[str]:
    cmd = [sys.executable, "-m", "bench.baselines.ring", "--manifest", str(manifest), "--host", host,
           "--job", str(job_id), "--dim", str(dim), "--density", str(args.density),
           "--seed", str(args.seed), "--rank", str(rank), "--expect", str(expect), "--json",
           "--codec", codec, "--repeat", str(1 + args.warmup)]
    cmd += ["--clustered"] if args.clustered else []
    cmd += ["--fuse-rounds"] if codec == "hg" and args.rounds == "fused" else []
    return cmd + (["--output", str(output)] if output else [])


def _summarize(mode: str, dim: int, outcomes, launch_seconds: float) -> dict:
    """One row of ``runs`` from the workers' JSON summaries."""
    s = {o.host: o.summary for o in outcomes}
    ok = bool(outcomes) and all(o.exact for o in outcomes)
    row = {
        "mode": mode,
        "seconds": max((float(v["seconds"]) for v in s.values() if "seconds" in v), default=None),
        "wire_bytes": max((int(v.get("bytes_sent", 0)) for v in s.values()), default=0),
        "exact": ok,
        "elements": dim,
        "workers": len(outcomes),
        "packets_sent": max((int(v.get("packets_sent", 0)) for v in s.values()), default=0),
        "retransmissions": sum(int(v.get("retransmissions", 0)) for v in s.values()),
        # network rounds of one AllReduce (the codec's round trips; 1 for the dense ring)
        "rounds": max((int(v.get("rounds", 0)) for v in s.values()), default=0),
        # copies that arrived twice (only the host rings count them; None for the DHC agents):
        # retransmissions that were not for a lost packet but for a late acknowledgement
        "duplicates": (sum(int(v.get("duplicates", 0)) for v in s.values())
                       if any("duplicates" in v for v in s.values()) else None),
        "dense_float32_bytes": 4 * dim,
        "launch_seconds": launch_seconds,
        "wire_bytes_per_worker": {h: int(v.get("bytes_sent", 0)) for h, v in s.items()},
        "seconds_per_worker": {h: v.get("seconds") for h, v in s.items()},
    }
    row["bytes_per_element"] = row["wire_bytes"] / dim
    row["seconds_per_million_elements"] = None if row["seconds"] is None else row["seconds"] / dim * 1e6
    if not ok:
        row["errors"] = {o.host: (o.summary.get("error") or o.stderr.strip()[-300:] or
                                  f"exit {o.returncode}") for o in outcomes if not o.exact}
    return row


def _run_ring(handle, manifest: Path, job, dim: int, args, workdir: Path, expected: Path,
              codec: str) -> tuple:
    out0 = workdir / f"ring-{codec}-rank0.npy"
    procs = {h: handle.host(h).popen(
        _ring_command(manifest, h, r, job.id, dim, args, expected, out0 if r == 0 else None, codec),
        stdout=-1, stderr=-1, cwd=str(ROOT)) for r, h in enumerate(job.workers)}
    return collect(procs, job.id, args.deadline), out0


def _ratio(a: float | None, b: float | None) -> float | None:
    return float(a / b) if a is not None and b else None


def _ratios(rows: dict[str, dict], dim: int) -> dict:
    """Side-by-side factors of every mode over ``dhc`` (>1: DHC sends fewer bytes or packets, or
    takes less time)."""
    out: dict = {}
    dhc = rows.get("dhc")
    if dhc is None:
        return out
    for other in MODES[1:]:
        r = rows.get(other)
        if r is None:
            continue
        scale = dim / r["elements"]       # dense INA may have been measured on a smaller tensor
        out[f"bytes_{other}_over_dhc"] = _ratio(r["wire_bytes"] * scale, dhc["wire_bytes"])
        out[f"packets_{other}_over_dhc"] = _ratio(r["packets_sent"] * scale, dhc["packets_sent"])
        out[f"time_{other}_over_dhc"] = _ratio(None if r["seconds"] is None else r["seconds"] * scale,
                                               dhc["seconds"])
        if scale != 1:
            out[f"{other}_scaled_from_elements"] = r["elements"]
    if "ring" in rows:
        out["goal_4x_fewer_bytes_than_ring"] = bool((out["bytes_ring_over_dhc"] or 0) >= 4)
        out["goal_faster_than_ring"] = bool((out["time_ring_over_dhc"] or 0) > 1)
    return out


def _median_row(rows: list[dict]) -> dict:
    """The run with the median time stands for the mode; every run's time is kept with it."""
    times = [r["seconds"] for r in rows]
    if any(t is None for t in times) or not all(r["exact"] for r in rows):
        bad = next(r for r in rows if r["seconds"] is None or not r["exact"])
        return {**bad, "seconds_runs": times}
    mid = sorted(rows, key=lambda r: r["seconds"])[(len(rows) - 1) // 2]
    return {**mid, "seconds_runs": times}


def _run_mode(mode: str, handle, manifest: Path, job, topo, dim: int, dense_dim: int, args,
              workdir: Path, expected: Path, f32_sum: np.ndarray) -> dict:
    """One mode once on the running network: its summary row."""
    from topologies.story import run_jobs  # needs Mininet (see run)
    t0 = time.perf_counter()
    if mode in ("ring", "sketch_ring"):
        outcomes, out0 = _run_ring(handle, manifest, job, dim, args, workdir, expected,
                                   "dense" if mode == "ring" else "hg")
    else:
        d = dim if mode == "dhc" else dense_dim
        wl = Workload(dim=d, density=args.density, clustered=args.clustered,
                      seed=args.seed, codec="hg" if mode == "dhc" else "dense",
                      repeat=1 + args.warmup, fuse_rounds=args.rounds == "fused")
        outcomes, out0 = run_jobs(handle, manifest, topo, wl, workdir, [job.id], args.deadline), None
    row = _summarize(mode, dim if mode != "dense_ina" else dense_dim, outcomes,
                     time.perf_counter() - t0)
    if out0 is not None and out0.exists():
        row["max_abs_err_vs_float32_sum"] = float(np.abs(np.load(out0) - f32_sum).max())
    if mode == "dense_ina" and dense_dim != dim:
        row["label"] = (f"dense INA measured at d={dense_dim}; per-element figures "
                        f"scaled to d={dim} in ratios")
    return row


def run(args: argparse.Namespace) -> dict:
    """Deploy once per bandwidth, run every mode on the same job, return runs + ratios + config."""
    # Mininet is imported only when the benchmark runs: `dhc-bench --help` must work without it
    from topologies.net import choose_target
    from topologies.story import deployed_net, link_rates

    modes = _modes(args.modes)
    dim, dense_dim = _check_args(args)
    repeat = 1 if args.quick else args.repeat
    topo = load(args.topo)
    candidates = [j for j in topo.jobs if j.needs_aggregation and (args.job is None or j.id == args.job)]
    if not candidates:
        raise SystemExit(f"dhc-bench e2e: {args.topo}: no aggregated job"
                         + (f" with id {args.job}" if args.job is not None else ""))
    job = candidates[0]
    t_start, load_before = time.perf_counter(), list(os.getloadavg())
    runs: list[dict] = []
    ratios: dict[str, dict] = {}
    deploys: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="dhc-e2e-") as tmp:
        workdir = Path(tmp)
        xs = synthetic_job(len(job.workers), dim, args.density, args.seed, args.clustered)
        reference = simulate_allreduce(xs, codec="dense")
        expected = workdir / "expected-ring.npy"
        np.save(expected, reference.sum)
        f32_sum = np.sum(np.stack(xs), axis=0, dtype=np.float32)
        del xs
        for bw, k in [(b, k) for b in _bandwidths(args.bw) or [None]
                      for k in _lane_counts(args.lanes)]:
            net = _with_lanes(topo, k)
            label = (bw or link_rates(topo)) + ("" if k is None else f", K={k}")
            with deployed_net(net, place(net), workdir, args.target, bandwidth=bw) as (
                    handle, manifest, deploy_s):
                deploys[label] = deploy_s
                rows = {m: _median_row([_run_mode(m, handle, manifest, net.job(job.id), net, dim,
                                                  dense_dim, args, workdir, expected, f32_sum)
                                        for _ in range(repeat)]) for m in modes}
            for r in rows.values():
                r["bandwidth"] = label
                r["lanes"] = net.job(job.id).lanes
            runs += [rows[m] for m in modes]
            ratios[label] = _ratios(rows, dim)
    config = {
        "topology": topo.name, "topo_file": str(args.topo), "target": choose_target(args.target),
        "job": job.id, "workers": len(job.workers), "dim": dim, "density": args.density,
        "dense_dim": dense_dim, "clustered": args.clustered, "seed": args.seed,
        "quick": bool(args.quick), "repeat": repeat, "warmup": args.warmup, "rounds": args.rounds,
        "bandwidths": list(ratios),
        "deploy_seconds": deploys, "total_seconds": time.perf_counter() - t_start,
        "host_io": "native" if native_selected() else "python",    # DHC_HOST_IO of the workers
        "host_engine": "native" if native_engine_selected() else "python",  # DHC_HOST_ENGINE
        "load_average_before": load_before,
        "load_average": list(os.getloadavg()),
        "quantization_step": float(np.ldexp(1.0, -reference.scale_exponent)),
        "exactness": "bit-for-bit equal to DHC's dense-codec sum of the int32-quantized inputs "
                     "(one global power-of-two scale); the rings sum the same values",
    }
    return {"runs": runs, "ratios": ratios, "config": config}

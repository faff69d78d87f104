"""``dhc-sim validate``: the simulation checked three ways (``docs/scale.md`` has the numbers).

1. analytic: simulated dense ring and dense INA against their closed forms (``sim/analytic.py``)
   on link-bound fat-trees from 4 to 1,024 workers, within 5 %;
2. emulator: the scenario ``dhc-bench e2e`` runs in Mininet (single.yaml, leafspine.yaml at
   10 Mbit/s, where a 1,442-byte frame takes 1.15 ms on the wire against a few microseconds of
   host CPU), all four modes, simulated with the ``this-machine`` host profile (per-packet cost
   from ``dhc-bench agent-pps``, codec time measured on the workload: nothing taken from the
   validation rows) and compared with the measured seconds (median of ``--emulator-repeat``
   runs), within 15 %.  The emulator runs are recorded in
   ``bench/recorded/sim_emulator_<topology>.json`` with the load and the hosts' delivery engine
   (``--run-emulator`` re-runs both, as root, holding ``/tmp/dhc-net.lock`` once for the two);
3. published: SwitchML's regime (NSDI 2021): 8 workers at 100 Gbit/s, dense INA against a ring
   AllReduce, link-bound; INA sends each value once where the ring sends 2(n-1)/n of it, at
   SwitchML's 64-element packets against the ring's 1,400-byte datagrams, within 10 %.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from sim.analytic import ina_seconds, relative_error, ring_seconds
from sim.parts import SwitchModel, ring_frame_bytes
from sim.runner import Scenario, simulate

ROOT = Path(__file__).resolve().parents[1]
#: recorded emulator runs (committed: the emulator needs root, Mininet and minutes)
RECORDED = ROOT / "bench" / "recorded"
#: (fabric, workers): link-bound analytic cases
ANALYTIC = (("fattree:k=4", 4), ("fattree:k=4", 16), ("fattree:k=8", 64), ("fattree:k=8", 128),
            ("fattree:k=16", 1024))
QUICK_ANALYTIC = (("fattree:k=4", 4), ("fattree:k=4", 16))
EMULATOR = (("single", "topologies/single.yaml"), ("leafspine", "topologies/leafspine.yaml"))
EMULATOR_BW = "10mbit"
#: e2e runs per mode; the median stands for the mode
EMULATOR_REPEAT = 3
#: host profile of the emulator rows: measured apart from them (sim/parts.py)
EMULATOR_HOST = "this-machine"
#: the lock every Mininet user on this machine takes (interface names collide)
NET_LOCK = "/tmp/dhc-net.lock"
TOLERANCE = {"analytic": 0.05, "emulator": 0.15, "published": 0.10}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quick", action="store_true", help="analytic cases up to 16 workers only")
    p.add_argument("--skip-emulator", action="store_true", help="no emulator rows")
    p.add_argument("--run-emulator", action="store_true",
                   help="re-run dhc-bench e2e (root, Mininet) instead of the recorded results")
    p.add_argument("--emulator-bw", default=EMULATOR_BW,
                   help=f"link rate of the emulator runs ({EMULATOR_BW})")
    p.add_argument("--emulator-repeat", type=int, default=EMULATOR_REPEAT,
                   help=f"e2e runs per mode with --run-emulator; the median counts ({EMULATOR_REPEAT})")
    p.add_argument("--recorded", type=Path, default=RECORDED,
                   help="directory of the recorded emulator runs (default bench/recorded)")


def _row(kind: str, check: str, simulated: float, expected: float, **extra) -> dict:
    err = relative_error(simulated, expected)
    return {"kind": kind, "check": check, "simulated": simulated, "expected": expected,
            "relative_error": round(err, 5), "tolerance": TOLERANCE[kind], "ok": err <= TOLERANCE[kind],
            **extra}


def analytic_rows(cases) -> list[dict]:
    rows = []
    for topo, n in cases:
        scn = Scenario(topo=topo, bw_bps=100e9, workers=n, dim=1_000_000, modes=("ring", "dense_ina"),
                       host="line-rate", codec_time=False, switch=SwitchModel(lanes=256))
        res = simulate(scn)
        rate = 100e9 / 8
        ring = res["modes"]["ring"]
        hop = ring["jobs"]["1"]["hop_latency_s"]
        rows.append(_row("analytic", f"ring {topo} N={n}: 2(N-1)/N S/B + 2(N-1) latency", ring["seconds"],
                         ring_seconds(n, ring["round_bytes_per_worker"][0], rate, hop),
                         workers=n, topo=topo, hop_latency_s=hop))
        ina = res["modes"]["dense_ina"]
        depth = ina["jobs"]["1"]["tree_depth_s"]
        rows.append(_row("analytic", f"dense_ina {topo} N={n}: S/B + tree latency per round", ina["seconds"],
                         ina_seconds(ina["round_bytes_per_worker"], rate, depth),
                         workers=n, topo=topo, tree_depth_s=depth, window=ina["jobs"]["1"]["window"]))
    return rows


def published_rows() -> list[dict]:
    """SwitchML's regime: 8 workers, 100 Gbit/s, a 100 MB tensor, 64-element packets."""
    n, dim, lanes = 8, 25_000_000, 64
    scn = Scenario(topo="fattree:k=4", bw_bps=100e9, workers=n, dim=dim, modes=("ring", "dense_ina"),
                   host="line-rate", codec_time=False, switch=SwitchModel(lanes=lanes))
    res = simulate(scn)
    sim_speedup = res["modes"]["ring"]["seconds"] / res["modes"]["dense_ina"]["seconds"]
    ina_frame = SwitchModel(lanes=lanes).frame_bytes()
    ring_eff = 1384 / ring_frame_bytes(346)
    expected = 2 * (n - 1) / n * (4 * lanes / ina_frame) / ring_eff
    return [_row("published", "SwitchML regime: dense INA over ring, 8 workers, 100 Gbit/s, 100 MB, "
                 "64-element packets", sim_speedup, expected, quantity="speed-up (x)",
                 source="Sapio et al., Scaling Distributed Machine Learning with In-Network Aggregation, "
                        "NSDI 2021: traffic per worker |U| (INA) vs 2(n-1)/n |U| (ring)",
                 ring_s=res["modes"]["ring"]["seconds"], dense_ina_s=res["modes"]["dense_ina"]["seconds"])]


def _emulator_file(name: str, recorded: Path = RECORDED) -> Path:
    return recorded / f"sim_emulator_{name}.json"


def run_emulator(name: str, topo: str, bw: str, repeat: int = EMULATOR_REPEAT,
                 recorded: Path = RECORDED) -> dict:
    """``dhc-bench e2e`` (the caller holds the shared network lock); recorded for later runs."""
    if repeat < 1:
        raise ValueError(f"--emulator-repeat must be >= 1 (got {repeat})")
    bench = ROOT / ".venv" / "bin" / "dhc-bench"
    cmd = [str(bench), "e2e", "--json", "--topo", topo, "--bw", bw,
           "--repeat", str(repeat)]
    load = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"dhc-bench e2e on {topo} failed: {proc.stderr.strip()[-1500:]}")
    e2e = json.loads(proc.stdout.strip().splitlines()[-1])
    result = {"e2e": e2e, "started_utc": started,
              "load_avg_1min_before_after": [round(load, 2), round(os.getloadavg()[0], 2)], "bw": bw,
              "host_engine": e2e["config"].get("host_engine", "python"), "repeat": repeat,
              "command": " ".join(cmd)}
    recorded.mkdir(parents=True, exist_ok=True)
    _emulator_file(name, recorded).write_text(json.dumps(result, indent=2) + "\n")
    return result


def _measured_seconds(e2e: dict) -> dict[str, tuple[float, float]]:
    """mode -> (the last-starting worker's seconds, ``e2e``'s max over workers).  The simulation
    starts every worker at once; in the emulator each worker process times its own AllReduce
    from its first packet, so the worker that started last, which waits for no peer, measures
    the AllReduce without the start-up skew the max over workers carries."""
    return {r["mode"]: (min(r["seconds_per_worker"].values()), float(r["seconds"])) for r in e2e["runs"]
            if r.get("seconds") is not None}


@contextlib.contextmanager
def network_lock(path: str = NET_LOCK) -> Iterator[None]:
    """The machine's shared Mininet lock, held across both topologies' runs (as ``flock`` does):
    interface names collide between networks, and both recordings then see the same load."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def emulator_rows(run: bool, bw: str, repeat: int = EMULATOR_REPEAT, recorded: Path = RECORDED) -> list[dict]:
    if run:
        with network_lock():
            records = {name: run_emulator(name, topo, bw, repeat, recorded) for name, topo in EMULATOR}
    else:
        records = {}
    from sim.units import parse_rate_bps
    rows = []
    for name, topo in EMULATOR:
        if run:
            record = records[name]
        elif _emulator_file(name, recorded).exists():
            record = _read_record(_emulator_file(name, recorded))
        else:
            rows.append({"kind": "emulator", "check": f"{name}: no recorded emulator run", "ok": None,
                         "skipped": f"{_emulator_file(name, recorded)} missing; "
                                    "run dhc-sim validate --run-emulator"})
            continue
        measured = _measured_seconds(record["e2e"])
        runs = {r["mode"]: r for r in record["e2e"]["runs"]}
        lanes = _first_job(topo)
        scn = Scenario(topo=topo, bw_bps=parse_rate_bps(record["bw"]), latency_s=50e-6, workers=None,
                       dim=1_000_000, density=0.01, modes=tuple(measured), host=EMULATOR_HOST,
                       switch=SwitchModel(lanes=lanes[1], window=lanes[2]), job=lanes[0])
        res = simulate(scn)
        for mode, (seconds, slowest) in measured.items():
            rows.append(_row("emulator", f"{name} @ {record['bw']}: {mode}", res["modes"][mode]["seconds"],
                             seconds, e2e_seconds_max_over_workers=slowest,
                             measured_at=record["started_utc"], load=record["load_avg_1min_before_after"],
                             host_engine=record.get("host_engine", "python"), host_profile=EMULATOR_HOST,
                             seconds_runs=runs[mode]["seconds_runs"],
                             retransmissions=runs[mode]["retransmissions"],
                             duplicates=runs[mode].get("duplicates"),
                             network_s=res["modes"][mode]["network_s"],
                             codec_s=res["modes"][mode]["codec_s_per_worker"]))
    return rows


def _read_record(path: Path) -> dict:
    """A recorded emulator run; a file that is not one is bad input (ValueError), not a crash."""
    try:
        record = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a recorded emulator run: {err}") from None
    if not (isinstance(record, dict) and isinstance(record.get("e2e"), dict)
            and isinstance(record["e2e"].get("runs"), list) and "bw" in record and "started_utc" in record):
        raise ValueError(f"{path} is not a recorded emulator run (needs e2e.runs, bw, started_utc)")
    return record


def failures(result: dict) -> list[str]:
    """One line per checked row outside its bound (what ``dhc-sim validate`` exits 1 for)."""
    return [f"{r['check']}: simulated {r['simulated']:.6g}, expected {r['expected']:.6g}, error "
            f"{r['relative_error']:.1%} > {r['tolerance']:.0%}"
            for r in result["rows"] if r.get("ok") is False]


def _first_job(topo: str) -> tuple[int, int, int]:
    from sim.fabric import build_topology
    job = next(j for j in build_topology(topo).jobs if len(j.workers) >= 2)
    return job.id, job.lanes, job.window


def run(args: argparse.Namespace) -> dict:
    started = time.perf_counter()
    load = os.getloadavg()[0]
    if not (args.skip_emulator or args.run_emulator):    # a bad recording is reported before any run
        for name, _ in EMULATOR:
            if _emulator_file(name, args.recorded).exists():
                _read_record(_emulator_file(name, args.recorded))
    rows = analytic_rows(QUICK_ANALYTIC if args.quick else ANALYTIC)
    rows += published_rows()
    if not args.skip_emulator:
        rows += emulator_rows(args.run_emulator, args.emulator_bw, args.emulator_repeat, args.recorded)
    checked = [r for r in rows if r.get("ok") is not None]
    return {"rows": rows, "all_ok": all(r["ok"] for r in checked), "checked": len(checked),
            "wall_s": round(time.perf_counter() - started, 2),
            "load_avg_1min_before_after": [round(load, 2), round(os.getloadavg()[0], 2)]}

"""BMv2 per K, and BMv2 against the softswitch on the README's two commands (root, p4c + BMv2).

``dhc-bench bmv2 --json`` measures, for each K (``--lanes``), in one run:

* p4c's BMv2 compile of ``p4src/dhc.p4`` with the defines ``single.yaml`` gives (pool 4096,
  256 job counters), into an empty cache (a fresh compile, never a cached one), stopped after
  ``--compile-limit`` seconds, and the JSON's size;
* BMv2's frames/s on ``p4src/dhc.p4``: ``simple_switch_grpc`` on two veth ports, a two-worker job
  deployed by the controller, the C load generator of ``dhc-bench softswitch-native`` streaming
  DATA frames and checking every RESULT;
* the AllReduce on ``single.yaml`` (``make run``'s workload, d = 200k at 1 %) at that K;

and with ``--stories`` the deploy and AllReduce times of ``make run`` on ``single.yaml`` and
``leafspine.yaml`` on BMv2 (at its K) and on the softswitch (at the topology's K).  The machine's
load average is recorded before and after: the numbers are from a shared 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from controller.bmv2_build import (
    JSON_NAME,
    P4INFO_NAME,
    Bmv2Build,
    build,
    build_key,
    cache_root,
    compiler_version,
)
from controller.pipeline import program_defines
from controller.targets import profile
from dhcwire.p4names import DEFAULT_MAX_JOBS

ROOT = Path(__file__).resolve().parents[2]
TOPOLOGIES = ("single.yaml", "leafspine.yaml")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lanes", type=int, nargs="+", default=[8, 16, 32],
                        help="K values to measure (default 8 16 32; BMv2 runs K <= 64)")
    parser.add_argument("--compile-limit", type=float, default=600.0,
                        help="stop a compile after this many seconds (default 600)")
    parser.add_argument("--chunks", type=int, default=3000, help="DATA chunks per frames/s run")
    parser.add_argument("--runs", type=int, default=3, help="frames/s runs per K (median)")
    parser.add_argument("--dim", type=int, default=200_000, help="gradient size of the AllReduce")
    parser.add_argument("--stories", action="store_true",
                        help="also make run's two topologies on BMv2 and the softswitch")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _compile(k: int, limit: float) -> dict:
    """A fresh p4c compile at K (a temporary cache), timed; stopped after ``limit`` seconds."""
    defines = program_defines(k, 4096, DEFAULT_MAX_JOBS)
    with tempfile.TemporaryDirectory(prefix="dhc-bmv2-bench-") as tmp:
        cmd = ["timeout", str(int(limit)), "p4c", "--target", "bmv2", "--arch", "v1model",
               *(f"-D{n}={v}" for n, v in defines.items()), "-o", tmp,
               "--p4runtime-files", f"{tmp}/p.txtpb", str(ROOT / "p4src" / "dhc.p4")]
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        out = Path(tmp) / "dhc.json"
        if done.returncode == 124:
            return {"compile_s": None, "compile_note": f"stopped after {limit:.0f} s", "json_bytes": None}
        if done.returncode != 0 or not out.is_file():
            return {"compile_s": None, "compile_note": f"p4c failed: {done.stderr[-300:]}",
                    "json_bytes": None}
        _keep(Path(tmp), defines)
        return {"compile_s": round(seconds, 1), "json_bytes": out.stat().st_size}


def _keep(built: Path, defines: dict[str, str]) -> None:
    """Put a fresh compile into the build cache under its key (the runs below then load it)."""
    program = ROOT / "p4src" / "dhc.p4"
    dest = cache_root() / build_key(program, defines, compiler_version())
    if not dest.exists():
        dest.mkdir(parents=True)
        shutil.copy(built / "dhc.json", dest / JSON_NAME)
        shutil.copy(built / "p.txtpb", dest / P4INFO_NAME)


def _frames_per_s(k: int, chunks: int, runs: int) -> dict:
    """BMv2 on two veth ports, the dhc.p4 two-worker job, every RESULT checked (median of runs)."""
    from bench.softswitch.ports_dhc import SWITCH_NAME, dhc_job, dhc_topology
    from bench.softswitch.ports_lab import Lab, free_port, wait_ready
    from bench.softswitch.softswitch_native import _Load, _measure_process, _row
    from controller.deploy.apply import deploy
    from controller.p4rt_client import SwitchAddress
    from controller.placement import place

    topo = dhc_topology(k, 64)
    placement = place(topo)
    job = dhc_job(topo, placement, k, 64)
    with Lab() as lab:
        load = _Load()

        def start() -> subprocess.Popen:
            port = free_port()
            log = Path(f"/tmp/{lab.tag}-bench-bmv2-{k}.log")
            cmd = ["simple_switch_grpc", "--no-p4", "--log-level", "warn", "-i", f"1@{lab.tag}s1",
                   "-i", f"2@{lab.tag}s2", "--thrift-port", str(free_port()), "--",
                   "--grpc-server-addr", f"127.0.0.1:{port}"]
            with open(log, "wb") as out:
                proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
            lab.procs.append(proc)
            wait_ready(port, proc, log)
            deploy(topo, placement, {SWITCH_NAME: SwitchAddress(SWITCH_NAME, f"127.0.0.1:{port}", 0)},
                   source=Bmv2Build(), timeout=120.0)
            return proc

        def work(warm: bool) -> dict:
            return load.dhc(lab, job, job.chunks(128 if warm else chunks))

        samples, cpu = _measure_process(lab, start, work, runs)
    row = _row(samples, cpu, None, "data_sent", "results")
    for key in ("correct", "wrong", "retransmits", "stalled"):
        row[key] = sum(s[key] for s in samples)
    row["results_expected"] = sum(s["data_sent"] for s in samples)
    return row


def _story(topo_file: str, target: str, dim: int, lanes: int | None = None) -> dict:
    """``make run`` on ``topo_file`` (optionally with every job at ``lanes``): deploy, AllReduce."""
    from controller.topology_file import load
    from topologies.story import run_story
    from topologies.workload import Workload

    topo = load(str(ROOT / "topologies" / topo_file))
    if lanes is not None:
        import dataclasses
        topo = topo.with_jobs([dataclasses.replace(j, lanes=lanes) for j in topo.jobs])
    result = run_story(topo, Workload(dim=dim, density=0.01, seed=1), target=target)
    used = {result.lanes_changed.get(j.id, (j.lanes, j.lanes))[1] for j in topo.jobs}
    return {"topology": topo_file, "target": target, "lanes": sorted(used), "exact": result.exact,
            "deploy_s": round(result.deploy_seconds, 2), "allreduce_s": round(result.run_seconds, 2),
            "slowest_worker_s": round(max((o.summary.get("seconds", 0) for o in result.outcomes),
                                          default=0), 2)}


def run(args: argparse.Namespace) -> dict:
    if not (shutil.which("p4c") and shutil.which("simple_switch_grpc")):
        return {"bmv2": "absent (p4c and simple_switch_grpc not on PATH)"}
    if os.geteuid() != 0:
        return {"bmv2": "needs root (veths, Mininet)"}
    out: dict = {"load_before": _load(), "per_k": []}
    for k in args.lanes:
        row: dict = {"lanes": k, **_compile(k, args.compile_limit)}
        if row["compile_s"] is not None and profile("bmv2").supports(k):
            build(program_defines(k, 4096, DEFAULT_MAX_JOBS))   # found in the cache (_keep)
            row["frames"] = _frames_per_s(k, args.chunks, args.runs)
            row["single"] = _story("single.yaml", "bmv2", args.dim, lanes=k)
        out["per_k"].append(row)
    if args.stories:
        out["stories"] = [_story(t, target, args.dim) for t in TOPOLOGIES
                          for target in ("softswitch", "bmv2")]
    out["load_after"] = _load()
    return out

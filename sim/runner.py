"""One scenario end to end: platform, jobs, placement, codec workloads, one SimGrid run per mode.

Each mode runs in its own process (SimGrid keeps one engine per process); up to two at a time.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

from controller.placement import Placement, place
from controller.topology import Topology
from sim.fabric import Fabric, assign_jobs, make_fabric
from sim.parts import HOST_PROFILES, HostProfile, SwitchModel, ring_frame_bytes
from sim.program import EngineResult, JobProgram
from sim.routes import Router
from sim.schedule import (
    MODES,
    PlatformBuilder,
    Traffic,
    ina_program,
    ina_window,
    ps_program,
    ring_program,
    sketch_ring_program,
    tree_timing,
)
from sim.workload import THC_BITS, codec_workload, thc_wire


@dataclass(frozen=True)
class Scenario:
    """Everything ``dhc-sim run`` takes."""

    topo: str = "fattree:k=4"
    bw_bps: float | None = 100e9
    latency_s: float = 1e-6
    workers: int | None = None
    jobs: int = 1
    dim: int = 1_000_000
    density: float = 0.01
    clustered: bool = False
    modes: tuple[str, ...] = MODES
    host: str = "line-rate"
    switch: SwitchModel = field(default_factory=SwitchModel)
    seed: int = 1
    ring_steps: int = 16
    bucket: int = 1_000_000
    codec_time: bool = True
    placement_time_s: float = 30.0
    job: int | None = None


def _placed(topo: Topology, scn: Scenario) -> Placement:
    return place(topo, time_limit=scn.placement_time_s)


def _jobs_per_switch(placement: Placement) -> dict[str, int]:
    count: dict[str, int] = {}
    for jp in placement.jobs:
        for agg in jp.aggregators:
            count[agg.switch] = count.get(agg.switch, 0) + 1
    return count


def _mode_programs(mode: str, fabric: Fabric, topo: Topology, router: Router, placement: Placement | None,
                   runs: dict, scn: Scenario, host: HostProfile):
    """(platform spec, programs, per-job traffic and notes) of one mode."""
    sw = scn.switch
    frame = ring_frame_bytes(346) if mode in ("ring", "sketch_ring", "ps_thc") else sw.frame_bytes()
    hosts_only = mode in ("ring", "sketch_ring", "ps_thc")      # host-to-host flows, many hops
    pb = PlatformBuilder(fabric, router, frame, sw.pipeline_s, host, serialize_per_hop=not hosts_only)
    programs, traffic, notes = [], {}, {}
    sharing = _jobs_per_switch(placement) if placement else {}
    for job in topo.jobs:
        n = len(job.workers)
        if mode == "ring":
            steps, t = ring_program(job.workers, scn.dim, host, pb, scn.ring_steps)
            notes[job.id] = {"ring_steps": 2 * (n - 1),
                             "ring_steps_simulated": min(2 * (n - 1), scn.ring_steps),
                             "hop_latency_s": max(pb.step_latency(a, b, t.round_bytes[0])
                                                  for a, b in _ring_pairs(job.workers))}
        elif mode == "ps_thc":
            ps = _ps_host(topo, job.id)
            wire = thc_wire(scn.dim, n, scn.bucket)
            steps, t = ps_program(job.workers, ps, wire, pb)
            notes[job.id] = {"ps": ps, "ps_on_a_worker": ps in job.workers,
                             "hop_latency_s": max(pb.step_latency(w, ps, t.round_bytes[-1])
                                                  for w in job.workers if w != ps),
                             "thc_bits": THC_BITS,
                             "thc_down_bits": wire.down_bits, "thc_padded_dim": wire.padded_dim,
                             "payload_bytes_up": sum(wire.up), "payload_bytes_down": sum(wire.down),
                             "codec_s_per_worker": 0.0}
        elif mode == "sketch_ring":
            steps, t = sketch_ring_program(job.workers, runs[("hg", n)], host, pb, scn.ring_steps)
            notes[job.id] = {"ring_steps_per_round": 2 * (n - 1),
                             "hop_latency_s": max(pb.step_latency(a, b, t.round_bytes[-1])
                                                  for a, b in _ring_pairs(job.workers)),
                             "ring_steps_simulated": min(2 * (n - 1), scn.ring_steps),
                             "codec_s_per_worker": runs[("hg", n)].codec_s if host.codec_time else 0.0}
        else:
            jp = placement.job(job.id)
            tree = tree_timing(jp, pb)
            shared = max(sharing.get(a.switch, 1) for a in jp.aggregators)
            rate = min(fabric.host_rate_bps(w) for w in job.workers)
            w, wrate, rtt = ina_window(tree, sw, host, rate, shared)
            run = runs[("hg" if mode == "dhc" else "dense", n)]
            steps, t = ina_program(tree, run, sw, host, wrate, pb)
            notes[job.id] = {"window": w, "window_rate_gbps": round(wrate * 8 / 1e9, 3),
                             "tree_rtt_us": round(rtt * 1e6, 3), "tree_depth_s": tree.depth_s,
                             "root": jp.root,
                             "aggregators": len(jp.aggregators), "jobs_sharing_a_switch": shared,
                             "codec_s_per_worker": run.codec_s if host.codec_time else 0.0}
        programs.append(JobProgram(job.id, tuple(steps)))
        traffic[job.id] = t
    return pb.spec(), programs, traffic, notes


def _ps_host(topo: Topology, job_id: int) -> str:
    """Job ``job_id``'s parameter server: the job-th host that works for no job (one PS per job,
    as a dedicated server), else the job's first worker (co-located)."""
    busy = {w for j in topo.jobs for w in j.workers}
    free = [h for h in topo.hosts if h not in busy]
    index = [j.id for j in topo.jobs].index(job_id)
    return free[index] if index < len(free) else next(j for j in topo.jobs if j.id == job_id).workers[0]


def _ring_pairs(workers: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(w, workers[(i + 1) % len(workers)]) for i, w in enumerate(workers)]


def _summary(mode: str, result: EngineResult, traffic: dict[int, Traffic], notes: dict) -> dict:
    t = traffic[min(traffic)]
    return {"seconds": max(result.job_seconds.values()),
            "network_s": max(result.job_seconds.values()) - t.codec_s, "codec_s_per_worker": t.codec_s,
            "round_bytes_per_worker": [round(b) for b in t.round_bytes],
            "seconds_per_job": {str(j): round(s, 9) for j, s in sorted(result.job_seconds.items())},
            "bytes_per_worker": round(t.bytes), "payload_bytes_per_worker": round(t.payload_bytes),
            "packets_per_worker": t.packets, "rounds": t.rounds,
            "jobs": {str(j): n for j, n in sorted(notes.items())},
            "sim_comms": result.comms, "sim_wall_s": round(result.wall_s, 3)}


class EngineError(RuntimeError):
    """The SimGrid process failed (its stderr is attached)."""


def run_engines(jobs: dict[str, tuple], parallel: int = 2) -> dict[str, EngineResult]:
    """Run each (spec, programs) in its own ``python -m sim.engine`` process, ``parallel`` at once."""
    if importlib.util.find_spec("simgrid") is None:
        raise EngineError("SimGrid's Python module is not importable: install Debian's python3-simgrid "
                          "(make setup does, as root) and rerun scripts/setup_python.sh, which exposes it "
                          "to the venv")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    pending, running, results = list(jobs.items()), [], {}
    try:
        while pending or running:
            while pending and len(running) < max(1, parallel):
                name, payload = pending.pop(0)
                proc = subprocess.Popen([sys.executable, "-m", "sim.engine"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
                running.append((name, proc, pickle.dumps(payload)))
            name, proc, data = running.pop(0)
            out, err = proc.communicate(data)
            if proc.returncode != 0:
                raise EngineError(f"SimGrid run for {name} failed ({proc.returncode}): "
                                  f"{err.decode(errors='replace').strip()[-2000:]}")
            results[name] = pickle.loads(out)
    finally:
        for _, proc, _ in running:   # on an error or interrupt: end the engines this call started
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    return results


def simulate(scn: Scenario, *, parallel: int = 2) -> dict:
    """Run ``scn``; the JSON-ready result (see ``docs/scale.md``)."""
    unknown = [m for m in scn.modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}")
    if scn.host not in HOST_PROFILES:
        raise ValueError(f"unknown host profile {scn.host!r}; choose from {', '.join(HOST_PROFILES)}")
    host = HostProfile(**{**asdict(HOST_PROFILES[scn.host]), "codec_time": scn.codec_time})
    wall = time.perf_counter()
    load_before = os.getloadavg()[0]
    fabric = make_fabric(scn.topo, scn.bw_bps, scn.latency_s)
    topo = assign_jobs(fabric.topo, scn.workers, scn.jobs, 4 * scn.dim, scn.switch.lanes, only=scn.job)
    fabric = Fabric(topo, fabric.rate_bps, fabric.latency_s, fabric.spec)
    router = Router(topo)
    placement = _placed(topo, scn) if {"dhc", "dense_ina"} & set(scn.modes) else None
    t_place = time.perf_counter()
    sizes = sorted({len(j.workers) for j in topo.jobs})
    runs = {}
    for codec, needed in (("hg", {"dhc", "sketch_ring"}), ("dense", {"dense_ina"})):
        if needed & set(scn.modes):
            for n in sizes:
                runs[(codec, n)] = codec_workload(scn.dim, scn.density, n, codec, seed=scn.seed,
                                                  clustered=scn.clustered, bucket=scn.bucket)
    t_codec = time.perf_counter()
    built = {m: _mode_programs(m, fabric, topo, router, placement, runs, scn, host) for m in scn.modes}
    results = run_engines({m: (spec, programs) for m, (spec, programs, _, _) in built.items()}, parallel)
    modes = {m: _summary(m, results[m], built[m][2], built[m][3]) for m in scn.modes}
    out = {"scenario": _scenario_dict(scn, fabric, topo, host), "modes": modes,
           "workload": {f"{c}@{n}": r.as_dict() for (c, n), r in runs.items()},
           "speedup_of_dhc": ({m: round(modes[m]["seconds"] / modes["dhc"]["seconds"], 4)
                               for m in modes if m != "dhc"} if "dhc" in modes else {}),
           "placement": _placement_dict(placement),
           "wall_s": {"placement": round(t_place - wall, 3), "codec": round(t_codec - t_place, 3),
                      "total": round(time.perf_counter() - wall, 3)},
           "load_avg_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)], "cpus": os.cpu_count()}
    return out


def _placement_dict(p: Placement | None) -> dict | None:
    if p is None:
        return None
    return {"solver": p.solver, "optimal": p.optimal, "solve_time_s": p.solve_time_s,
            "bottleneck_bytes": p.objective.bottleneck_bytes,
            "roots": {str(j.job_id): j.root for j in p.jobs}}


def _scenario_dict(scn: Scenario, fabric: Fabric, topo: Topology, host: HostProfile) -> dict:
    d = asdict(scn)
    d["switch"]["frame_bytes"] = scn.switch.frame_bytes()
    d["host_profile"] = asdict(host)
    d["hosts"], d["switches"], d["links"] = len(topo.hosts), len(topo.switches), len(topo.links)
    d["jobs_workers"] = {str(j.id): len(j.workers) for j in topo.jobs}
    d["link_rates_gbps"] = sorted({round(r / 1e9, 6) for r in fabric.rate_bps})
    d["modes"] = list(scn.modes)
    return d

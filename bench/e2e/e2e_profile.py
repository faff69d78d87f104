"""``dhc-bench e2e-profile``: where the time of one DHC and one sketch_ring AllReduce goes.

    sudo .venv/bin/dhc-bench e2e-profile --json [--bw 100mbit] [--repeat 6] [--host-io python,native]

One deployed network (as ``dhc-bench e2e``: single.yaml, links shaped with tbf), then for each
mode one ``bench.e2e.e2e_profile_worker`` process per host running ``--warmup + --repeat`` AllReduces
of the same tensors.  Per timed AllReduce (all workers' clocks are the same machine's):

* ``seconds``: first worker starting to last worker holding the sum;
* per round: the slowest worker's network time (from its first packet of the round to its last
  aggregate), the packets one worker sent, the lanes, and the codec time between rounds;
* ``launch_skew_seconds``: last worker's start minus the first's;
* scheduler accounting (``/proc/<pid>/task/*/schedstat``) over the AllReduce: CPU seconds of
  the workers and of the software switch, and the seconds they were runnable but waiting for a
  CPU (``runqueue_wait``); the workers' CPU split into user and system time (``getrusage``) and
  the share spent inside the network rounds (``workers_transport_cpu_seconds``: framing, system
  calls and the kernel's packet work charged to them; the rest is the codec);
* ``cpu_bound_seconds``: (workers' + switch's CPU seconds) / the machine's cores, the least wall
  time these processes need even if nothing else ran and they never waited for each other;
* ``wire_seconds``: the bytes of the busiest link direction at the link rate;
* ``machine``: every core's time over the timed AllReduces from ``/proc/stat`` (summed over the
  runs, each run counted over its longest worker's interval): the share busy, the share in
  interrupts and softirqs, the share stolen by the hypervisor, and the busy CPU seconds per
  AllReduce (``machine_cpu_bound_seconds``: that over the cores).  Schedstat misses the softirq
  work the kernel does on a task's way out of an interrupt (tbf's per-packet timers releasing
  frames, veth delivering them to the receiving socket), so ``cpu_bound_seconds`` can be far
  below what the machine really spent.

A mode whose ``cpu_bound_seconds`` is close to its ``seconds`` and whose processes spend more
time waiting for a CPU than running is limited by the machine, not by the links.

``--host-io python,native`` profiles every mode once per host I/O path (``DHC_HOST_IO`` of the
workers: one ``sendto``/``recvfrom`` per datagram, or ``hostagent.fastio``'s batched
``sendmmsg``/``recvmmsg``), in one network, rows named ``mode:io``; ``--host-engine
python,native`` likewise per delivery engine (``DHC_HOST_ENGINE``: the Python reference or the
exchange loop in C), rows named ``mode[:io]:engine``.
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

from bench.e2e.e2e import ROUNDS
from bench.e2e.e2e_plots import plot_profile
from bench.e2e.e2e_profile_worker import CLOCK_TICKS
from controller.placement import place
from controller.topology_file import load
from topologies.shaping import RateError, parse_rate
from topologies.workload import collect

ROOT = Path(__file__).resolve().parents[2]
MODES = ("dhc", "sketch_ring")
HOST_IO = ("native", "python")
#: Ethernet + IPv4 + UDP headers of one datagram
HEADER_BYTES = 14 + 20 + 8


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topo", type=Path, default=ROOT / "topologies" / "single.yaml")
    parser.add_argument("--bw", default="100mbit", help="link rate of every link (tc rate)")
    parser.add_argument("--dim", type=int, default=1_000_000)
    parser.add_argument("--density", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--warmup", type=int, default=1, help="untimed AllReduces first")
    parser.add_argument("--repeat", type=int, default=6, help="timed AllReduces per mode")
    parser.add_argument("--target", choices=["auto", "softswitch", "bmv2"], default="auto")
    parser.add_argument("--deadline", type=float, default=240.0, help="seconds allowed per mode")
    parser.add_argument("--plot-dir", type=Path, help="write e2e_profile.png here")
    parser.add_argument("--host-io", default="",
                        help="comma-separated DHC_HOST_IO values to compare side by side, each "
                             "mode once per value (native: sendmmsg/recvmmsg, python: one call "
                             "per datagram); rows are then named mode:io.  Default: the "
                             "environment's choice, rows named by mode")
    parser.add_argument("--host-engine", default="",
                        help="comma-separated DHC_HOST_ENGINE values to compare side by side "
                             "(native: the exchange loop in C, python: the reference engine); "
                             "rows are then named mode[:io]:engine")
    parser.add_argument("--rounds", choices=ROUNDS, default="fused",
                        help="HG-Sketch rounds of both modes (as dhc-bench e2e): fused (default) "
                             "or separate")
    parser.add_argument("--switch-nice", type=int, default=0,
                        help="renice every thread of the software switches to this value first "
                             "(negative: the switch gets a CPU before the hosts, as dedicated "
                             "hardware would); default 0, unchanged")


def _check(args: argparse.Namespace) -> list[str]:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes):
        raise SystemExit(f"dhc-bench e2e-profile: --modes: choose from {', '.join(MODES)}")
    try:
        parse_rate(args.bw)
    except RateError as err:
        raise SystemExit(f"dhc-bench e2e-profile: --bw: {err}") from err
    if args.repeat < 1 or args.warmup < 0 or args.dim < 1 or not 0 < args.density <= 1:
        raise SystemExit("dhc-bench e2e-profile: --repeat >= 1, --warmup >= 0, --dim >= 1 and "
                         "--density in (0, 1] please")
    if any(io not in HOST_IO for io in _host_io(args)):
        raise SystemExit(f"dhc-bench e2e-profile: --host-io: choose from {', '.join(HOST_IO)}")
    if any(e not in HOST_IO for e in _host_engine(args)):
        raise SystemExit(f"dhc-bench e2e-profile: --host-engine: choose from {', '.join(HOST_IO)}")
    if os.geteuid() != 0:
        raise SystemExit("dhc-bench e2e-profile: needs root (Mininet creates network namespaces)")
    return modes


def _host_io(args: argparse.Namespace) -> list[str]:
    return [v.strip() for v in args.host_io.split(",") if v.strip()]


def _host_engine(args: argparse.Namespace) -> list[str]:
    return [v.strip() for v in args.host_engine.split(",") if v.strip()]


def summarize(per_host: dict[str, list[dict]], rate_bps: int, frame_bytes: dict[str, int],
              cores: int) -> dict:
    """One AllReduce of every host (same index) -> its profile row."""
    runs = list(per_host.values())
    start, end = min(r["start"] for r in runs), max(r["end"] for r in runs)
    n_rounds = len(runs[0]["rounds"])
    rounds = []
    for i in range(n_rounds):
        rs = [r["rounds"][i] for r in runs]
        net = max(x["end"] - x["start"] for x in rs)
        codec = (max(r["rounds"][i + 1]["start"] - x["end"] for r, x in zip(runs, rs, strict=True))
                 if i + 1 < n_rounds else max(r["end"] - x["end"] for r, x in zip(runs, rs, strict=True)))
        rounds.append({"network_seconds": net, "codec_after_seconds": codec,
                       "packets_per_worker": max(x["packets"] for x in rs),
                       "packets_received_per_worker": max(x["received"] for x in rs),
                       "retransmissions": sum(x["retransmissions"] for x in rs),
                       "lanes": rs[0]["lanes"]})
    cpu = sum(r["cpu_seconds"] for r in runs)
    switch_cpu = statistics.median(r["switch_cpu_seconds"] for r in runs)
    wire = max(frame_bytes.values()) * 8 / rate_bps    # a worker's uplink; its downlink as much
    return {
        "seconds": end - start,
        "launch_skew_seconds": max(r["start"] for r in runs) - start,
        "encode_seconds": max(r["rounds"][0]["start"] - r["start"] for r in runs) if n_rounds else 0,
        "rounds": rounds,
        "workers_cpu_seconds": cpu,
        "workers_runqueue_wait_seconds": sum(r["runqueue_wait_seconds"] for r in runs),
        "workers_user_cpu_seconds": sum(r.get("user_seconds", 0.0) for r in runs),
        "workers_system_cpu_seconds": sum(r.get("system_seconds", 0.0) for r in runs),
        "workers_transport_cpu_seconds": sum(x.get("cpu_seconds", 0.0) for r in runs
                                             for x in r["rounds"]),
        "switch_cpu_seconds": switch_cpu,
        "switch_runqueue_wait_seconds": statistics.median(
            r["switch_runqueue_wait_seconds"] for r in runs),
        "cpu_bound_seconds": (cpu + switch_cpu) / cores,
        "wire_seconds": wire,
        "machine_ticks": max(runs, key=lambda r: r["end"] - r["start"]).get("machine_ticks"),
    }


def machine_share(rows: list[dict], clock_ticks: int = CLOCK_TICKS) -> dict | None:
    """Every core's time over the AllReduces of ``rows`` (``/proc/stat`` ticks summed over them):
    busy, interrupt and stolen shares, and busy CPU seconds per AllReduce.

    >>> runs = [{"machine_ticks": [6, 1, 0, 8]}, {"machine_ticks": [6, 2, 1, 8]}]
    >>> share = machine_share(runs, clock_ticks=100)
    >>> share["busy_share"], share["interrupt_share"], share["steal_share"]
    (0.75, 0.1875, 0.0625)
    >>> share["busy_cpu_seconds_per_allreduce"]    # 12 busy ticks of 1/100 s over two AllReduces
    0.06
    """
    ticks = [r["machine_ticks"] for r in rows if r.get("machine_ticks")]
    if not ticks:
        return None
    busy, irq, steal, total = (sum(t[i] for t in ticks) for i in range(4))
    if total <= 0:
        return None
    return {"busy_share": busy / total, "interrupt_share": irq / total,
            "steal_share": steal / total,
            "busy_cpu_seconds_per_allreduce": busy / clock_ticks / len(ticks)}


def _profile_mode(handle, manifest: Path, workers: list[str], mode: str, args,
                  switch_pid: int | None, host_io: str | None = None,
                  engine: str | None = None) -> list[dict]:
    env = dict(os.environ)
    env.update({"DHC_HOST_IO": host_io} if host_io else {})
    env.update({"DHC_HOST_ENGINE": engine} if engine else {})
    procs = {}
    for rank, name in enumerate(workers):
        cmd = [sys.executable, "-m", "bench.e2e.e2e_profile_worker", "--manifest", str(manifest),
               "--host", name, "--rank", str(rank), "--mode", mode, "--dim", str(args.dim),
               "--density", str(args.density), "--seed", str(args.seed),
               "--repeat", str(args.warmup + args.repeat)]
        cmd += ["--switch-pid", str(switch_pid)] if switch_pid else []
        cmd += ["--fuse-rounds"] if args.rounds == "fused" else []
        procs[name] = handle.host(name).popen(cmd, stdout=-1, stderr=-1, cwd=str(ROOT), env=env)
    outcomes = collect(procs, 0, args.deadline)
    bad = {o.host: o.stderr[-400:] or f"exit {o.returncode}" for o in outcomes
           if o.returncode != 0 or "allreduces" not in o.summary}
    if bad:
        raise SystemExit(f"dhc-bench e2e-profile: {mode} failed on {json.dumps(bad)}")
    return [{o.host: o.summary["allreduces"][i] for o in outcomes}
            for i in range(args.warmup, args.warmup + args.repeat)]


def renice_switches(handle, nice: int) -> None:
    """Set the nice value of every thread of every running software switch process."""
    for sw in handle.net.switches:
        proc = getattr(sw, "proc", None)
        if proc is None or proc.poll() is not None:
            continue
        for task in Path(f"/proc/{proc.pid}/task").iterdir():
            try:
                os.setpriority(os.PRIO_PROCESS, int(task.name), nice)
            except ProcessLookupError:
                continue                      # a thread that just ended
            except PermissionError as err:
                raise SystemExit(f"dhc-bench e2e-profile: renice {sw.name}: {err}") from err


def _switch_pid(handle) -> int | None:
    """The pid of the (first) software switch process, for its scheduler accounting."""
    for sw in handle.net.switches:
        proc = getattr(sw, "proc", None)
        if proc is not None and proc.poll() is None:
            return proc.pid
    return None


def run(args: argparse.Namespace) -> dict:
    from topologies.story import deployed_net  # needs Mininet: `dhc-bench --help` works without

    modes = _check(args)
    topo = load(args.topo)
    job = next((j for j in topo.jobs if j.needs_aggregation), None)
    if job is None:
        raise SystemExit(f"dhc-bench e2e-profile: {args.topo}: no aggregated job")
    rate = parse_rate(args.bw)
    cores = os.cpu_count() or 1
    out: dict[str, dict] = {}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dhc-prof-") as tmp, \
            deployed_net(topo, place(topo), Path(tmp), args.target, bandwidth=args.bw) as (
                handle, manifest, _):
        pid = _switch_pid(handle)
        if args.switch_nice:
            renice_switches(handle, args.switch_nice)
        ios, engines = _host_io(args), _host_engine(args)
        load_before = list(os.getloadavg())
        for mode in modes:
            for io in ios or [None]:
                for engine in engines or [None]:
                    if io == "python" and engine == "native":
                        continue          # the native engine does its own (batched) I/O
                    allreduces = _profile_mode(handle, manifest, list(job.workers), mode, args,
                                               pid, io, engine)
                    name = ":".join([mode] + [v for v in (io, engine) if v])
                    out[name] = {"allreduces": allreduces}
    for mode, rec in out.items():
        rows = [summarize(a, rate, _bytes(a), cores) for a in rec.pop("allreduces")]
        mid = sorted(rows, key=lambda r: r["seconds"])[(len(rows) - 1) // 2]
        machine = machine_share(rows)
        out[mode] = {**mid, "seconds_runs": [r["seconds"] for r in rows], "machine": machine,
                     "machine_cpu_bound_seconds":
                         machine["busy_cpu_seconds_per_allreduce"] / cores if machine else None}
    result = {"modes": out, "config": {
        "topology": topo.name, "bandwidth": args.bw, "workers": len(job.workers),
        "dim": args.dim, "density": args.density, "repeat": args.repeat, "warmup": args.warmup,
        "cores": cores, "load_average_before": load_before, "load_average": list(os.getloadavg()),
        "switch_nice": args.switch_nice, "rounds": args.rounds,
        "host_io": _host_io(args) or os.environ.get("DHC_HOST_IO", "default"),
        "host_engine": _host_engine(args) or os.environ.get("DHC_HOST_ENGINE", "default"),
        "total_seconds": time.perf_counter() - t0,
        "row": "the AllReduce with the median seconds of --repeat; every run's seconds kept"}}
    if args.plot_dir:
        result["figure"] = str(plot_profile(result, args.plot_dir / "e2e_profile.png"))
    return result



def _bytes(per_host: dict[str, dict]) -> dict[str, int]:
    """Bytes on the wire each worker sent in one AllReduce: UDP payload plus the Ethernet, IPv4
    and UDP headers of every datagram."""
    return {h: sum(x["bytes"] + HEADER_BYTES * x["packets"] for x in r["rounds"])
            for h, r in per_host.items()}

"""``dhc-bench agent-pps``: how many packets one DHC worker process moves per second.

The host side must not be what limits DHC on a fast link.  This benchmark measures one agent
(``hostagent.agent.Agent``: codec rounds, framing, the self-clocked window, receive and
reassembly) against a C reflector (``bench/c/dhc_reflector.c``, recvmmsg/sendmmsg) that answers
every DATA datagram with a RESULT at once — the aggregate of a one-worker job — so the agent's
Python path is the only bottleneck.  Both run in a private network namespace (``unshare --net``,
loopback only).  Every run's sum is checked bit for bit against the codec's simulation.

Per row (codec, lanes per packet, window, host I/O path): packets/s sent and received, the
agent's CPU microseconds per packet (sent + received), payload Mbit/s, and the link rate that
many packets would fill (what the agent can keep busy); for the native engine also the part of
that CPU spent inside the C loop (system calls and the kernel's packet work included) and the
system calls per packet.  ``--host-io python,native`` (the
default) measures the per-datagram reference and the batched path (``hostagent.fastio``) side
by side in one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dhc.codec import simulate_allreduce
from dhc.synthetic import synthetic_gradient
from dhcwire import header as wire
from hostagent.agent import Agent
from hostagent.fastio import ENV
from hostagent.native_delivery import COALESCE_ENV
from hostagent.native_delivery import ENV as ENGINE_ENV
from hostagent.transport import JobEndpoint

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "bench" / "c" / "dhc_reflector.c"
#: the C reference client: frames/s a minimal C loop moves through the same reflector
BLASTER = ROOT / "bench" / "c" / "dhc_blaster.c"
REFLECTOR_IP, AGENT_IP = "127.0.0.2", "127.0.0.1"
#: Ethernet + IPv4 + UDP headers around every DHC datagram on a real link
FRAME_OVERHEAD = 14 + 20 + 8


def build_reflector(source: Path | None = None) -> Path:
    """The reflector (or another bench/c program), compiled once per source content."""
    source = source or SOURCE
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dhc-bench"
    exe = cache / f"{source.stem}-{digest}"
    if not exe.exists():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = cache / f".{exe.name}.{os.getpid()}"
        proc = subprocess.run(["cc", "-O2", "-Wall", "-o", str(tmp), str(source)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"dhc-bench agent-pps: cannot build {source}: {proc.stderr.strip()}")
        tmp.replace(exe)       # atomic: concurrent builds never see half a binary
    return exe


def c_reference(lanes: int, window: int, frames: int) -> dict:
    """Frames/s and CPU per frame of the minimal C client (``dhc_blaster.c``) through the
    reflector: the rate the host side would reach if its own work cost nothing."""
    size = wire.DHC_HEADER_BYTES + wire.LANE_BYTES * lanes
    proc = subprocess.run([str(build_reflector(BLASTER)), REFLECTOR_IP, str(wire.DHC_UDP_PORT),
                           str(frames), str(size), str(window)], capture_output=True, text=True,
                          timeout=300)
    r = json.loads(proc.stdout)
    moved = r["frames_sent"] + r["frames_answered"]
    return {"lanes": lanes, "window": window, "frames": r["frames_answered"],
            "lost": r["frames_lost"], "seconds": r["seconds"],
            "pps_sent": r["frames_answered"] / r["seconds"],
            "cpu_us_per_packet": 1e6 * r["cpu_seconds"] / max(1, moved),
            "complete": r["frames_answered"] == frames}


def load_average() -> dict:
    """The machine's load (1, 5, 15 min): the figures mean little on a busy machine."""
    one, five, fifteen = os.getloadavg()
    return {"load_1m": one, "load_5m": five, "load_15m": fifteen}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dim", type=int, default=2_000_000, help="elements (dense codec)")
    parser.add_argument("--lanes", default="32,64,128", help="lanes per packet to measure")
    parser.add_argument("--windows", default="64,256", help="window sizes W to measure")
    parser.add_argument("--codecs", default="dense,hg", help="dense and/or hg (1 %% nonzeros)")
    parser.add_argument("--host-io", default="python,native",
                        help="DHC_HOST_IO values to measure side by side (python: one sendto / "
                             "recvfrom per datagram, the reference; native: sendmmsg/recvmmsg)")
    parser.add_argument("--engines", default="python,native",
                        help="DHC_HOST_ENGINE values to measure (python: the reference delivery "
                             "engine; native: the exchange loop in C, with the batched I/O only)")
    parser.add_argument("--coalesce", default="on",
                        help="DHC_HOST_COALESCE values to measure side by side (native engine: "
                             "on = sleep while many answers are due and drain them at once, off = "
                             "wake for every answer)")
    parser.add_argument("--rate", default="",
                        help="pace the loopback with tbf at this rate (e.g. 200mbit: both "
                             "directions share it), so answers trickle in as on a real link; "
                             "the C reference is then not run")
    parser.add_argument("--union-of", type=int, default=1,
                        help="hg: the tensor is the sum of this many workers' synthetic "
                             "gradients, so the one-worker rounds carry what a job of that many "
                             "workers' rounds carry (4: single.yaml's 5, 89 and 194 packets)")
    parser.add_argument("--repeat", type=int, default=1, help="timed AllReduces per row")
    parser.add_argument("--quick", action="store_true", help="d = 100k, lanes 32, W 64")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)


@dataclass(frozen=True)
class Row:
    """One measured combination."""

    codec: str
    lanes: int
    window: int
    host_io: str = ""
    engine: str = ""
    coalesce: str = ""


def _tensor(codec: str, dim: int, union_of: int) -> np.ndarray:
    """The agent's tensor: dense, or 1 % nonzeros (summed over ``union_of`` synthetic workers)."""
    if codec == "dense":
        return synthetic_gradient(dim, 1.0, seed=5, rank=0)
    return np.sum([synthetic_gradient(dim, 0.01, seed=5, rank=r) for r in range(union_of)],
                  axis=0, dtype=np.float32)


def measure(row: Row, dim: int, union_of: int = 1, repeat: int = 1) -> dict:
    """``repeat`` agent AllReduces through the reflector (already running), after one untimed
    warm-up AllReduce (JIT compilation, the socket's first packets); the row's ``host_io``
    sets DHC_HOST_IO, ``engine`` DHC_HOST_ENGINE, ``coalesce`` DHC_HOST_COALESCE."""
    x = _tensor(row.codec, dim, union_of)
    ep = JobEndpoint(job_id=1, child_id=0, switch_ip=REFLECTOR_IP, window=row.window,
                     lanes=row.lanes, bind_ip=AGENT_IP)
    for env, value in ((ENV, row.host_io), (ENGINE_ENV, row.engine), (COALESCE_ENV, row.coalesce)):
        if value:
            os.environ[env] = value
    with Agent(ep, n_workers=1, codec=row.codec) as agent:
        agent.allreduce(x)
        st = agent.transport.stats
        received0, calls0, loop0 = st.packets_received, st.system_calls, st.engine_cpu_seconds
        expected = simulate_allreduce([x], codec=row.codec).sum.view(np.uint32)
        cpu, s, sent, retx, exact = 0.0, 0.0, 0, 0, True
        for _ in range(repeat):
            cpu0 = time.process_time()       # the agent's CPU only: not the check below
            result, report = agent.allreduce(x)
            cpu += time.process_time() - cpu0
            s, sent = s + report.seconds, sent + report.packets_sent
            retx += report.retransmissions
            exact &= bool(np.array_equal(result.view(np.uint32), expected))
        received = st.packets_received - received0
        calls, loop = st.system_calls - calls0, st.engine_cpu_seconds - loop0
        native = agent.transport.native_engine
    moved = max(1, sent + received)
    wire_bits = 8 * (report.bytes_sent + report.packets_sent * FRAME_OVERHEAD) * repeat
    return {"codec": row.codec, "lanes": row.lanes, "window": row.window, "elements": dim,
            "host_io": "native" if agent.transport.native_io else "python",
            "engine": "native" if native else "python",
            "coalesce": (row.coalesce or "on") if native else "-", "allreduces": repeat,
            "seconds": s, "cpu_seconds": cpu, "cpu_us_per_packet": 1e6 * cpu / moved,
            "cpu_ms_per_allreduce": 1e3 * cpu / repeat, "seconds_per_allreduce": s / repeat,
            "packets_sent": sent, "packets_received": received,
            # the C loop's ppoll + recvmmsg + sendmmsg + nanosleep per packet moved (native only)
            "system_calls_per_packet": calls / moved,
            # of cpu_us_per_packet, the C loop's part (its system calls and the kernel's packet
            # work included); the rest is the codec and framing (native engine only)
            "engine_loop_cpu_us_per_packet": 1e6 * loop / moved,
            "pps_sent": sent / s, "pps_received": received / s,
            "payload_mbit_per_s": 8 * report.bytes_sent * repeat / s / 1e6,
            "fills_link_mbit_per_s": wire_bits / s / 1e6,
            "retransmissions": retx, "exact": exact}


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def inner(args: argparse.Namespace) -> dict:
    """Inside the private namespace: start the reflector, measure every combination."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    refl = subprocess.Popen([str(build_reflector()), REFLECTOR_IP, str(wire.DHC_UDP_PORT)],
                            stdout=subprocess.PIPE, text=True)
    try:
        if refl.stdout.readline().strip() != "ready":
            raise SystemExit("dhc-bench agent-pps: the reflector did not start")
        dim = 100_000 if args.quick else args.dim
        lanes = [32] if args.quick else _ints(args.lanes)
        windows = [64] if args.quick else _ints(args.windows)
        ios = [v for v in args.host_io.split(",") if v.strip()] or [""]
        engines = [v for v in args.engines.split(",") if v.strip()] or [""]
        load = load_average()
        if args.rate:
            subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", args.rate,
                            "burst", "16kb", "latency", "50ms"], check=True)
        coalesce = [v for v in args.coalesce.split(",") if v.strip()] or [""]
        combos = [Row(c, k, w, io, e, co if e != "python" else "")
                  for c in args.codecs.split(",") for k in lanes for w in windows for io in ios
                  for e in engines for co in coalesce
                  if not (io == "python" and e == "native")]   # the C engine does its own I/O
        # the Python engine does not coalesce: one row of it, whatever --coalesce lists
        rows = [measure(r, dim, args.union_of, args.repeat) for r in dict.fromkeys(combos)]
        refs = ([] if args.rate else
                [c_reference(k, w, max(50_000, dim // k)) for k in lanes for w in windows])
    finally:
        refl.terminate()
        echoed, _ = refl.communicate(timeout=10)
    return {"runs": rows, "c_reference": refs, "ratios": ratios(rows, refs),
            "reflector_echoed": int(echoed.strip() or 0),
            "config": {"dim": dim, "quick": bool(args.quick), "machine_cores": os.cpu_count(),
                       "rate": args.rate or None, "union_of": args.union_of,
                       "frame_overhead_bytes": FRAME_OVERHEAD, "load_before": load,
                       "load_after": load_average()}}


def ratios(rows: list[dict], refs: list[dict]) -> list[dict]:
    """Per (codec, lanes, window): the native engine's frames/s as a share of the C reference
    and as a multiple of the Python engine's (both with batched I/O and the reference I/O)."""
    out = []
    for r in rows:
        if r["engine"] != "native":
            continue
        same = [q for q in rows if (q["codec"], q["lanes"], q["window"]) ==
                (r["codec"], r["lanes"], r["window"])]
        ref = next((q for q in refs if (q["lanes"], q["window"]) == (r["lanes"], r["window"])),
                   None)
        row = {"codec": r["codec"], "lanes": r["lanes"], "window": r["window"],
               "coalesce": r["coalesce"]}
        if ref is not None:
            row["native_vs_c_reference"] = r["pps_sent"] / ref["pps_sent"]
            row["native_cpu_vs_c_reference"] = r["cpu_us_per_packet"] / ref["cpu_us_per_packet"]
        for q in same:
            if q["engine"] == "native" and q["coalesce"] == "off" and r["coalesce"] == "on":
                row["coalesce_off_cpu_vs_on"] = q["cpu_ms_per_allreduce"] / r["cpu_ms_per_allreduce"]
                row["coalesce_off_seconds_vs_on"] = (q["seconds_per_allreduce"]
                                                     / r["seconds_per_allreduce"])
            if q["engine"] == "python":
                row[f"native_vs_python_engine_{q['host_io']}_io"] = r["pps_sent"] / q["pps_sent"]
                row[f"python_engine_{q['host_io']}_io_cpu_vs_native"] = (
                    q["cpu_us_per_packet"] / r["cpu_us_per_packet"])
        out.append(row)
    return out


def run(args: argparse.Namespace) -> dict:
    if args.inner:
        return inner(args)
    bad = [c for c in args.codecs.split(",") if c not in ("dense", "hg")]
    if bad:
        raise SystemExit(f"dhc-bench agent-pps: unknown codec(s) {bad}")
    if any(v.strip() not in ("native", "python") for v in args.host_io.split(",") if v.strip()):
        raise SystemExit("dhc-bench agent-pps: --host-io takes native and/or python")
    if any(v.strip() not in ("native", "python") for v in args.engines.split(",") if v.strip()):
        raise SystemExit("dhc-bench agent-pps: --engines takes native and/or python")
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        raise SystemExit("dhc-bench agent-pps: needs root and unshare (a private network namespace)")
    build_reflector()     # compile errors surface here, with the file named
    build_reflector(BLASTER)
    if any(v.strip() not in ("on", "off") for v in args.coalesce.split(",") if v.strip()):
        raise SystemExit("dhc-bench agent-pps: --coalesce takes on and/or off")
    if args.union_of < 1 or args.repeat < 1:
        raise SystemExit("dhc-bench agent-pps: --union-of and --repeat must be >= 1")
    argv = [sys.executable, "-m", "bench.agent_pps", "--inner", "--dim", str(args.dim),
            "--lanes", args.lanes, "--windows", args.windows, "--codecs", args.codecs,
            "--host-io", args.host_io, "--engines", args.engines, "--coalesce", args.coalesce,
            "--union-of", str(args.union_of), "--repeat", str(args.repeat)]
    argv += ["--rate", args.rate] if args.rate else []
    argv += ["--quick"] if args.quick else []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dhc-agent-pps-"):
        proc = subprocess.run(["unshare", "--net", *argv], cwd=ROOT, capture_output=True,
                              text=True, timeout=1200)
    if proc.returncode != 0:
        raise SystemExit(f"dhc-bench agent-pps: {proc.stderr.strip()[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["config"]["total_seconds"] = time.perf_counter() - t0
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.agent_pps")
    add_arguments(p)
    print(json.dumps(run(p.parse_args(argv))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

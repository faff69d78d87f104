"""Native vs python softswitch over real veth ports, with the machine's limit beside them (root).

One run, the same two veth ports and the same C load generator for every row:

* ``basic_ipv4.p4`` (one route over P4Runtime) through the softswitch with ``--backend python``
  and ``--backend native``, and through a minimal C forwarder (recvmmsg/sendmmsg, 32 register
  read-add-writes per frame, MAC/TTL rewrite): the limit of a user-space switch on these ports.
  The generator keeps ``--window`` frames in flight and checks every frame that comes back.
* ``p4src/dhc.p4`` with K lanes: a one-switch, two-worker job deployed by the controller; both
  workers stream chunks (W in flight each), every RESULT is checked (MACs, addresses, IPv4
  checksum, lanes = the sum of both contributions); compared with the C forwarder on frames of
  the DATA size.
* BMv2 ``simple_switch`` is measured only when it is on PATH (it is reported as absent otherwise).

Rates: frames/s into the switch (sent) and out (received), losses, the switch process's CPU
share (CPU seconds per wall second), and each rate as a fraction of the forwarder's.

``pipeline_only`` rows: the pipeline in-process (``run_many``, no ports), in frames/s and
microseconds per frame.  ``--pipeline-only`` prints just those (no veths, no root), e.g.
``dhc-bench softswitch-native --pipeline-only --lanes 256 --chunks 5000 --runs 5``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from cffi import FFI

from bench.softswitch.ports_dhc import DHC_PROGRAM, SWITCH_NAME, dhc_job, dhc_topology
from bench.softswitch.ports_lab import Lab, cpu_seconds, wait_ready
from bench.softswitch.softswitch_ports import DST_MAC, PROGRAM, _frames, _install_route
from softswitch.api import Lpm
from softswitch.native.build import cache_dir, compiler
from softswitch.native.switch import NativeSwitch
from softswitch.target.switch import Switch

HERE = Path(__file__).parent / "native"
#: frame offset of the RESULT's chunk number (as bench/softswitch/softswitch_ports.py checks it)
CHUNK_OFFSET = 50
_CDEF = """
double blast(int tx, int rx, const uint8_t *frames, size_t stride, size_t len, int n, int window,
             const uint8_t *mac, double idle_s, int64_t *out);
double dhc(const int *fds, const uint8_t *data0, const uint8_t *data1, size_t dstride, size_t dlen,
           const uint8_t *res, size_t rlen, const uint8_t *hdr, int n, uint32_t first, int window,
           int chunk_off, double resend_s, double stall_s, int64_t *out);
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--frames", type=int, default=100000, help="basic_ipv4 frames per run (default 100000)"
    )
    parser.add_argument("--frame-size", type=int, default=128, help="basic_ipv4 frame length (default 128)")
    parser.add_argument("--window", type=int, default=256, help="frames in flight at most (default 256)")
    parser.add_argument("--lanes", type=int, default=32, help="DHC lanes per packet (default 32)")
    parser.add_argument("--chunks", type=int, default=20000, help="dhc chunks per run (default 20000)")
    parser.add_argument("--dhc-window", type=int, default=64, help="dhc chunks in flight per worker")
    parser.add_argument("--runs", type=int, default=3, help="runs of each row; medians reported")
    parser.add_argument("--python-share", type=float, default=0.1,
                        help="fraction of frames/chunks for the (slow) python backend rows (default 0.1)")
    parser.add_argument("--pipeline-only", action="store_true",
                        help="only the in-process pipeline rows (dhc.p4 at --lanes, basic_ipv4): no veths, "
                             "no root; each native figure the median of --runs first passes")


def _build(src: Path, shared: bool) -> Path:
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler (cc): the load generator and the forwarder are built with it")
    text = src.read_bytes()
    key = hashlib.sha256(text + bytes([shared])).hexdigest()[:24]
    out = cache_dir() / f"bench_{src.stem}_{key}{'.so' if shared else ''}"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
        flags = ["-O2", "-shared", "-fPIC"] if shared else ["-O2"]
        subprocess.run([cc, *flags, "-o", str(tmp), str(src)], check=True)
        os.replace(tmp, out)
    return out


class _Load:
    """The C load generator (loaded with cffi; its calls release the GIL)."""

    def __init__(self) -> None:
        self.ffi = FFI()
        self.ffi.cdef(_CDEF)
        self.lib = self.ffi.dlopen(str(_build(HERE / "load.c", True)))

    def blast(self, lab: Lab, frames: list[bytes], window: int) -> dict:
        ffi = self.ffi
        size = max(len(f) for f in frames)
        buf = ffi.new("uint8_t[]", b"".join(f.ljust(size, b"\0") for f in frames))
        out = ffi.new("int64_t[2]")
        el = self.lib.blast(
            lab.socks[0].fileno(),
            lab.socks[1].fileno(),
            buf,
            size,
            size,
            len(frames),
            window,
            DST_MAC.to_bytes(6, "big"),
            2.0,
            out,
        )
        return {"sent": len(frames), "received": int(out[0]), "bad": int(out[1]), "elapsed": el}

    def dhc(self, lab: Lab, job, chunks) -> dict:
        ffi = self.ffi
        dlen = len(chunks.data[0][0])
        rlen = len(chunks.results[0])
        hdr = b"".join(w.result_macs + w.result_addrs for w in job.workers)
        fds = ffi.new("int[2]", [s.fileno() for s in lab.socks])
        out = ffi.new("int64_t[6]")
        el = self.lib.dhc(fds, b"".join(chunks.data[0]), b"".join(chunks.data[1]), dlen, dlen,
                          b"".join(chunks.results), rlen, hdr, chunks.n, chunks.first, job.window,
                          CHUNK_OFFSET, 0.2, 10.0, out)
        keys = ("results", "correct", "wrong", "duplicates", "retransmits", "stalled")
        return {**{k: int(out[i]) for i, k in enumerate(keys)}, "elapsed": el, "data_sent": 2 * chunks.n}


def _row(samples: list[dict], cpu: float, limit: float | None, sent_key: str, got_key: str) -> dict:
    rate_in = [s[sent_key] / s["elapsed"] for s in samples if s["elapsed"] > 0]
    rate_out = [s[got_key] / s["elapsed"] for s in samples if s["elapsed"] > 0]
    wall = sum(s["elapsed"] for s in samples)
    row = {
        "frames_in_per_s": round(statistics.median(rate_in), 1) if rate_in else 0.0,
        "frames_out_per_s": round(statistics.median(rate_out), 1) if rate_out else 0.0,
        "lost": sum(s[sent_key] - s[got_key] for s in samples),
        "switch_cpu_share": round(cpu / wall, 2) if wall else None,
        "runs_in_per_s": [round(x, 1) for x in rate_in],
    }
    if limit:
        row["fraction_of_limit"] = round(row["frames_in_per_s"] / limit, 3)
    return row


def _measure_process(lab: Lab, start, work, runs: int) -> tuple[list[dict], float]:
    proc = start()
    cpu = 0.0
    samples = []
    try:
        work(warm=True)
        for _ in range(runs):
            before = cpu_seconds(proc.pid)
            samples.append(work(warm=False))
            cpu += cpu_seconds(proc.pid) - before
    finally:
        lab.stop(proc)
        lab.drain()
    return samples, cpu


def _forwarder(lab: Lab) -> subprocess.Popen:
    exe = _build(HERE / "fwd.c", False)
    proc = subprocess.Popen([str(exe), f"{lab.tag}s1", f"{lab.tag}s2", f"{DST_MAC:012x}"])
    lab.procs.append(proc)
    time.sleep(0.3)
    return proc


def _basic(lab: Lab, load: _Load, args, limit_frames: list[bytes]) -> dict:
    frames = _frames(args.frames, args.frame_size)
    rows: dict = {}

    def fwd_work(warm: bool) -> dict:
        return load.blast(lab, frames[:2000] if warm else frames, args.window)

    s, cpu = _measure_process(lab, lambda: _forwarder(lab), fwd_work, args.runs)
    rows["c_forwarder"] = _row(s, cpu, None, "sent", "received")
    rows["c_forwarder"]["bad"] = sum(x["bad"] for x in s)
    limit = rows["c_forwarder"]["frames_in_per_s"]
    for backend in ("native", "python"):
        n = len(frames) if backend == "native" else max(1000, int(len(frames) * args.python_share))

        def start(backend=backend):
            proc, grpc_port, log = lab.start_switch(["--backend", backend, str(PROGRAM)], f"basic-{backend}")
            wait_ready(grpc_port, proc, log)
            _install_route(grpc_port)
            return proc

        def work(warm: bool, n=n) -> dict:
            return load.blast(lab, frames[:500] if warm else frames[:n], args.window)

        s, cpu = _measure_process(lab, start, work, args.runs)
        rows[backend] = _row(s, cpu, limit, "sent", "received")
        rows[backend]["bad"] = sum(x["bad"] for x in s)
    if shutil.which("simple_switch"):
        rows["bmv2"] = "simple_switch on PATH but not driven by this benchmark yet"
    else:
        rows["bmv2"] = "absent (simple_switch not on PATH)"
    return {"program": PROGRAM.name, "frame_bytes": args.frame_size, "window": args.window, **rows}


def _dhc(lab: Lab, load: _Load, args) -> dict:
    from controller.deploy.apply import deploy
    from controller.p4rt_client import SwitchAddress
    from controller.placement import place

    topo = dhc_topology(args.lanes, args.dhc_window)
    placement = place(topo)
    job = dhc_job(topo, placement, args.lanes, args.dhc_window)
    dsize = len(job.chunks(1).data[0][0])
    rows: dict = {}

    same_size = _frames(args.frames, dsize)

    def fwd_work(warm: bool) -> dict:
        return load.blast(lab, same_size[:2000] if warm else same_size, args.window)

    s, cpu = _measure_process(lab, lambda: _forwarder(lab), fwd_work, args.runs)
    rows["c_forwarder_same_size"] = _row(s, cpu, None, "sent", "received")
    limit = rows["c_forwarder_same_size"]["frames_in_per_s"]
    for backend in ("native", "python"):
        n = args.chunks if backend == "native" else max(500, int(args.chunks * args.python_share))

        def start(backend=backend):
            proc, grpc_port, log = lab.start_switch(["--backend", backend, "--no-p4"], f"dhc-{backend}")
            wait_ready(grpc_port, proc, log)
            deploy(topo, placement, {SWITCH_NAME: SwitchAddress(SWITCH_NAME, f"127.0.0.1:{grpc_port}", 0)},
                   program=DHC_PROGRAM)
            return proc

        def work(warm: bool, n=n) -> dict:
            return load.dhc(lab, job, job.chunks(2 * args.dhc_window if warm else n))

        s, cpu = _measure_process(lab, start, work, args.runs)
        row = _row(s, cpu, limit, "data_sent", "results")
        for k in ("correct", "wrong", "duplicates", "retransmits", "stalled"):
            row[k] = sum(x[k] for x in s)
        row["results_expected"] = sum(x["data_sent"] for x in s)
        rows[backend] = row
    nat, py = rows["native"]["frames_in_per_s"], rows["python"]["frames_in_per_s"]
    rows["native_over_python"] = round(nat / py, 2) if py else None
    rows["pipeline_only"] = _dhc_in_process(topo, placement, job, args)
    return {"program": DHC_PROGRAM.name, "lanes": args.lanes, "window_chunks": args.dhc_window,
            "data_frame_bytes": dsize, **rows}


def _pipeline_rates(make, frames: list[tuple[int, bytes]], py_share: float, runs: int = 1) -> dict:
    """Frames/s of the pipeline alone (no ports, no process boundary), native and python, each
    on a fresh switch given the same state by ``make(cls)``; native: the median of ``runs``
    runs, each on a fresh switch (so each is a first pass: dhc.p4 aggregates every chunk)."""
    times = []
    for _ in range(max(runs, 1)):
        el, out = make(NativeSwitch).run_many(frames)
        times.append(el)
    el = statistics.median(times)
    py = make(Switch)
    n = max(200, int(len(frames) * py_share))
    t0 = time.perf_counter()
    py_out = sum(len(py.process(p, f)) for p, f in frames[:n])
    py_el = time.perf_counter() - t0
    return {"native_frames_per_s": round(len(frames) / el, 1), "native_frames_out": out,
            "native_us_per_frame": round(1e6 * el / len(frames), 3),
            "native_us_per_frame_min": round(1e6 * min(times) / len(frames), 3), "native_runs": len(times),
            "python_frames_per_s": round(n / py_el, 1), "python_frames_out": py_out, "python_frames_in": n,
            "native_over_python": round((len(frames) / el) / (n / py_el), 1)}


def _dhc_in_process(topo, placement, job, args) -> dict:
    from bench.softswitch.inprocess import apply_in_process
    from controller.pipeline import program_defines
    from controller.plan import intended_state

    defines = program_defines(args.lanes, topo.switches[SWITCH_NAME].register_slots)
    state = intended_state(topo, placement)[SWITCH_NAME]

    def make(cls):
        sw = cls.load(str(DHC_PROGRAM), defines=defines)
        apply_in_process(sw, state)
        return sw

    chunks = job.chunks(args.chunks)
    frames = [(w + 1, chunks.data[w][i]) for i in range(chunks.n) for w in (0, 1)]
    r = _pipeline_rates(make, frames, args.python_share, args.runs)
    r["results_expected"] = 2 * chunks.n
    r["lanes"] = args.lanes
    return r


def _basic_in_process(args) -> dict:
    frames = [(1, f) for f in _frames(args.frames, args.frame_size)]

    def make(cls):
        sw = cls.load(str(PROGRAM))
        sw.table_add(
            "MyIngress.ipv4_lpm",
            "MyIngress.ipv4_forward",
            {"hdr.ipv4.dstAddr": Lpm(0x0A000202, 32)},
            {"dstAddr": DST_MAC, "port": 2},
        )
        return sw

    return _pipeline_rates(make, frames, args.python_share, args.runs)


def run_pipeline_only(args: argparse.Namespace) -> dict:
    """The in-process rows alone (no veths, no root): dhc.p4 at ``--lanes`` and basic_ipv4."""
    from controller.placement import place

    topo = dhc_topology(args.lanes, args.dhc_window)
    placement = place(topo)
    job = dhc_job(topo, placement, args.lanes, args.dhc_window)
    load_before = os.getloadavg()
    dhc = _dhc_in_process(topo, placement, job, args)
    basic = _basic_in_process(args)
    return {"dhc_pipeline_only": dhc, "basic_ipv4_pipeline_only": basic,
            "load_before": load_before, "load_after": os.getloadavg(), "cpus": os.cpu_count()}


def run(args: argparse.Namespace) -> dict:
    if getattr(args, "pipeline_only", False):
        return run_pipeline_only(args)
    if os.geteuid() != 0:
        raise PermissionError("softswitch-native needs root (network namespaces and veth pairs)")
    load = _Load()
    with Lab() as lab:
        basic = _basic(lab, load, args, [])
        dhc = _dhc(lab, load, args)
    nb, pb = basic["native"]["frames_in_per_s"], basic["python"]["frames_in_per_s"]
    basic["native_over_python"] = round(nb / pb, 2) if pb else None
    basic["pipeline_only"] = _basic_in_process(args)
    return {"basic_ipv4": basic, "dhc": dhc, "load": os.getloadavg()}


def main(argv: list[str] | None = None) -> int:
    import json

    p = argparse.ArgumentParser(prog="bench.softswitch.softswitch_native", description=__doc__.split("\n")[0])
    add_arguments(p)
    print(json.dumps(run(p.parse_args(argv)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

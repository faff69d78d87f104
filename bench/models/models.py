"""``dhc-bench models``: real models' gradients through the codec (``bench/models/models_zoo.py``).

Per model, in a fresh process each (memory is returned between models): parameters, one
training step's gradient on ``--ranks`` ranks (each its own generated batch), the density of the
raw gradient and after top-k (``--density`` of each 25 MB bucket, as DDP buckets; a gradient
already sparser keeps its nonzeros), HG-Sketch's lanes per round per bucket from the codec run
on the ranks' real top-k gradients with every decoded sum checked exact, and the bytes one
worker sends per AllReduce in each mode.  Codec time: each worker's own encode + decode calls
over all buckets of the full model, against the step's forward + backward time on this CPU,
and the codec's peak traced memory (numpy allocations, ``tracemalloc``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np

from bench.models.model_names import MODELS
from sim.parts import ETHERNET_BYTES, RING_VALUES_PER_PACKET, SwitchModel, ring_frame_bytes
from sim.workload import run_codec, warm_up

#: DDP's default bucket: 25 MB of float32
BUCKET = 25 * 1024 * 1024 // 4


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--models", default=",".join(MODELS), help=f"subset of {','.join(MODELS)}")
    parser.add_argument("--ranks", type=int, default=2, help="workers whose real gradients are encoded")
    parser.add_argument("--density", type=float, default=0.01, help="top-k share per bucket")
    parser.add_argument("--lanes", type=int, default=32, help="K lanes per packet for the INA byte counts")
    parser.add_argument("--quick", action="store_true", help="ncf and lstm only (a smoke run)")


def top_k(x: np.ndarray, density: float) -> np.ndarray:
    """Keep the ``density`` share of largest magnitudes (all nonzeros if there are fewer)."""
    k = max(1, int(density * x.size))
    if np.count_nonzero(x) <= k:
        return x
    out = np.zeros_like(x)
    idx = np.argpartition(np.abs(x), x.size - k)[x.size - k:]
    out[idx] = x[idx]
    return out


def _bytes_per_worker(params: int, hg_lanes: list[int], n: int, lanes: int) -> dict[str, int]:
    """Bytes on the link one worker sends per AllReduce (framing included)."""
    frame = SwitchModel(lanes=lanes).frame_bytes()
    ina = lambda total: total * 4 + -(-total // lanes) * (frame - 4 * lanes)  # noqa: E731

    def ring(values: int) -> int:
        chunk = -(-values // n)
        return 2 * (n - 1) * (4 * chunk + -(-chunk // RING_VALUES_PER_PACKET) * ring_frame_bytes(0))
    return {"ring": ring(params), "dense_ina": ina(params), "dhc": sum(ina(x) for x in hg_lanes),
            "sketch_ring": sum(ring(x) for x in hg_lanes), "ethernet_header_bytes": ETHERNET_BYTES}


def measure(name: str, ranks: int, density: float, lanes: int) -> dict:
    """One model, end to end (runs in its own process)."""
    from bench.models.models_zoo import build, gradient  # torch and transformers load here only
    t0 = time.perf_counter()
    model = build(name)
    grads, steps = [], []
    for r in range(ranks):
        g, step_s, params = gradient(name, r, model)
        grads.append(g.copy())
        steps.append(step_s)
    del model
    raw_density = float(np.count_nonzero(grads[0]) / grads[0].size)
    buckets = [(s, min(s + BUCKET, params)) for s in range(0, params, BUCKET)]
    rounds: list[int] = []
    codec_s, exact, kept = 0.0, True, 0
    warm_up("hg")
    tracemalloc.start()
    for lo, hi in buckets:
        sparse = [top_k(g[lo:hi], density) for g in grads]
        kept += int(np.count_nonzero(sparse[0]))
        run = run_codec(sparse, ranks, "hg", density, False)
        exact &= run.exact
        codec_s += run.codec_s
        for i, rnd in enumerate(run.rounds):
            rounds += [0] * (i + 1 - len(rounds))
            rounds[i] += rnd.lanes
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"model": name, "parameters": params, "buckets": len(buckets), "bucket_elements": BUCKET,
            "ranks": ranks, "step_s": round(float(np.median(steps)), 3),
            "raw_density": round(raw_density, 5), "density_after_top_k": round(kept / params, 5),
            "hg_lanes_per_round": rounds, "hg_rounds": len(rounds), "exact": bool(exact),
            "codec_s_per_worker": round(codec_s, 3), "codec_within_step": codec_s <= float(np.median(steps)),
            "codec_peak_traced_mb": round(peak / 2**20, 1),
            "bytes_per_worker": _bytes_per_worker(params, rounds, ranks, lanes),
            "dense_float32_bytes": 4 * params, "wall_s": round(time.perf_counter() - t0, 2)}


def run(args: argparse.Namespace) -> dict:
    names = ["ncf", "lstm"] if args.quick else [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in names if m not in MODELS]
    if bad:
        raise SystemExit(f"dhc-bench models: unknown model(s) {', '.join(bad)}; "
                         f"choose from {', '.join(MODELS)}")
    if args.ranks < 2 or not 0 < args.density <= 1:
        raise SystemExit("dhc-bench models: --ranks must be >= 2 and --density in (0, 1]")
    load = os.getloadavg()[0]
    rows = []
    for name in names:
        cmd = [sys.executable, "-m", "bench.models.models", name, str(args.ranks), str(args.density),
               str(args.lanes)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            raise RuntimeError(f"model {name} failed: {proc.stderr.strip()[-1500:]}")
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(row)
    return {"benchmark": "models", "density": args.density, "lanes": args.lanes, "models": rows,
            "load_avg_1min_before_after": [round(load, 2), round(os.getloadavg()[0], 2)],
            "cpus": os.cpu_count(), "torch_threads": 2}


if __name__ == "__main__":
    import torch
    torch.set_num_threads(2)
    name, ranks, density, lanes = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    result = measure(name, ranks, density, lanes)
    import resource
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result))

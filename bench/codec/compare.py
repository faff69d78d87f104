"""``dhc-bench compare``: every codec on the same tensors, side by side in one run.

Codecs (bench/baselines): dense fp32, SwitchML-style int32 INA, top-k (all-gathered), LHC
layout (bitmap + peeled count sketch, silent median fallback), S2 Reducer-style (bitmap + count
sketch, median estimate), THC-style (randomized Hadamard + 4-bit table), and HG-Sketch.
Data: gradients of a numpy MLP trained a few steps (dense, and top-k sparsified as DHC would
send them), plus synthetic sparse tensors (random and block-clustered supports) at each density.
Reported per (dataset, codec): bytes per worker, encode/decode time of worker 0, and the max
abs error against the exact float64 sum of the inputs and against the exact sum of the values
the codec actually encoded (its quantized inputs).  Also: bytes per worker vs N (top-k grows),
peeling success vs m/k (r = 3 threshold 1.222), and LHC vs HG-Sketch when m is too small.
"""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.baselines import CODECS, CodecRun, hgsketch, lhc
from bench.baselines.common import exact_sum
from dhc import HGParams
from dhc.hashing import SketchHash
from dhc.peeling import peel
from dhc.synthetic import synthetic_job

from .gradients import mlp_gradients, sparsify_topk

#: peeling threshold of a random 3-uniform hypergraph (orientability / 2-core appearance):
#: peeling succeeds w.h.p. iff m/k > 1.2218 as k grows.
PEEL_THRESHOLD_R3 = 1.2218
#: relative tolerance (of the largest |sum|) above which an element counts as wrong
WRONG_RTOL = 1e-6


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--dim", type=int, default=1_000_000, help="d of the synthetic tensors")
    parser.add_argument("--densities", default="0.001,0.01,0.1", help="synthetic per-worker densities")
    parser.add_argument("--mlp-hidden", default="512,256", help="MLP hidden sizes (784 inputs)")
    parser.add_argument("--mlp-steps", type=int, default=20)
    parser.add_argument("--real-topk", type=float, default=0.01,
                        help="top-k density for the sparsified MLP gradients and for top-k on dense")
    parser.add_argument("--lhc-m-factor", type=float, default=lhc.M_FACTOR,
                        help="LHC buckets per union element (its paper's 1.23)")
    parser.add_argument("--s2-m-factor", type=float, default=lhc.M_FACTOR,
                        help="S2 Reducer buckets per union element (default: LHC's, equal bytes)")
    parser.add_argument("--codecs", default=",".join(CODECS), help="subset of codecs to run")
    parser.add_argument("--repeats", type=int, default=2, help="timing: best of N runs")
    parser.add_argument("--scaling-workers", default="2,4,8,16,32")
    parser.add_argument("--scaling-dim", type=int, default=200_000)
    parser.add_argument("--scaling-density", type=float, default=0.01)
    parser.add_argument("--peel-ks", default="1000,10000,100000")
    parser.add_argument("--peel-ratios", default="1.0,1.1,1.15,1.18,1.2,1.22,1.24,1.26,1.3,1.4,1.5")
    parser.add_argument("--peel-trials", type=int, default=20)
    parser.add_argument("--lhc-dim", type=int, default=200_000)
    parser.add_argument("--lhc-ratios", default="0.9,1.0,1.1,1.15,1.2,1.25,1.3,1.5,2.0")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plots", action="store_true", help="also write PNGs (bench/codec/plots.py)")


def _ints(s: str) -> list[int]:
    return [int(float(v)) for v in s.split(",") if v.strip()]


def _floats(s: str) -> list[float]:
    return [float(v) for v in s.split(",") if v.strip()]


# --- data ------------------------------------------------------------------------------------

def datasets(args: argparse.Namespace) -> list[tuple[str, dict, list[np.ndarray]]]:
    """(name, description, worker tensors) for every dataset of the comparison."""
    out = []
    hidden = tuple(_ints(args.mlp_hidden))
    mlp = mlp_gradients(args.workers, hidden=hidden, steps=args.mlp_steps, seed=args.seed)
    info = {"source": "mlp", "layers": [784, *hidden, 10], "loss_first_last":
            [round(mlp.losses[0], 4), round(mlp.losses[-1], 4)]}
    out.append(("mlp_dense", {**info, "sparsified": None}, mlp.grads))
    out.append((f"mlp_top{args.real_topk:g}", {**info, "sparsified": args.real_topk},
                [sparsify_topk(g, args.real_topk) for g in mlp.grads]))
    for p in _floats(args.densities):
        for clustered in (False, True):
            kind = "clustered" if clustered else "random"
            xs = synthetic_job(args.workers, args.dim, p, seed=args.seed, clustered=clustered)
            out.append((f"synthetic_{kind}_{p:g}", {"source": "synthetic", "support": kind,
                                                     "density": p}, xs))
    return out


def union_nnz(xs: list[np.ndarray]) -> int:
    mask = np.zeros(xs[0].size, dtype=bool)
    for x in xs:
        mask |= x != 0
    return int(mask.sum())


def codec_params(name: str, xs: list[np.ndarray], args: argparse.Namespace) -> dict:
    """Per-dataset parameters: LHC and S2 get their sketch sized from the true union (their
    best case); top-k keeps every nonzero of sparse inputs and ``real_topk`` of dense ones."""
    if name == "lhc":
        return {"size_hint": union_nnz(xs), "m_factor": args.lhc_m_factor}
    if name == "s2reducer":
        return {"size_hint": union_nnz(xs), "m_factor": args.s2_m_factor}
    if name == "topk":
        dense = max(np.count_nonzero(x) for x in xs) > 0.5 * xs[0].size
        return {"density": args.real_topk if dense else None}
    return {}


# --- measurements ----------------------------------------------------------------------------

def measure(fn: Callable[..., CodecRun], xs: list[np.ndarray], params: dict,
            repeats: int) -> CodecRun:
    """Best-of-``repeats`` encode/decode times; bytes and sums from the first run (the codecs
    are deterministic, so every run decodes the same sum)."""
    first = fn(xs, **params)
    for _ in range(max(0, repeats - 1)):
        again = fn(xs, **params)
        first.encode_seconds = min(first.encode_seconds, again.encode_seconds)
        first.decode_seconds = min(first.decode_seconds, again.decode_seconds)
    return first


def error_row(dataset: str, r: CodecRun, ref: np.ndarray) -> dict:
    d = ref.size
    err64 = np.abs(r.sum - ref)
    errq = np.abs(r.sum - r.quantized_sum)
    norm = float(np.linalg.norm(ref)) or 1.0
    # an element is *wrong* if it is off by more than float rounding of the codec's arithmetic
    tol = WRONG_RTOL * float(np.abs(r.quantized_sum).max())
    return {"dataset": dataset, "codec": r.codec, "d": d,
            "bytes_up": r.bytes_up, "bytes_down": r.bytes_down,
            "bytes_per_worker": r.bytes_per_worker,
            "bytes_over_dense_fp32": round(r.bytes_per_worker / (4 * d), 5),
            "encode_ms": round(r.encode_seconds * 1e3, 3), "decode_ms": round(r.decode_seconds * 1e3, 3),
            "lossless_claim": r.lossless_claim,
            "exact_vs_quantized": bool(errq.max() == 0),
            "max_abs_err_vs_float64": float(err64.max()),
            "max_abs_err_vs_quantized": float(errq.max()),
            "rel_l2_err_vs_float64": float(np.linalg.norm(r.sum - ref) / norm),
            "wrong_elements_vs_quantized": int(np.count_nonzero(errq > tol)),
            "notes": r.notes}


def compare_codecs(args: argparse.Namespace, names: list[str]) -> tuple[list[dict], list[dict]]:
    infos, rows = [], []
    for name, desc, xs in datasets(args):
        ref = exact_sum(xs)
        infos.append({"name": name, "d": int(xs[0].size), "workers": len(xs),
                      "nnz_per_worker": int(np.mean([np.count_nonzero(x) for x in xs])),
                      "union_nnz": union_nnz(xs), **desc})
        for codec in names:
            r = measure(CODECS[codec], xs, codec_params(codec, xs, args), args.repeats)
            rows.append(error_row(name, r, ref))
    return infos, rows


def scaling(args: argparse.Namespace, names: list[str]) -> list[dict]:
    """Bytes per worker vs worker count on the same kind of tensor (random support)."""
    rows = []
    for n in _ints(args.scaling_workers):
        xs = synthetic_job(n, args.scaling_dim, args.scaling_density, seed=args.seed)
        for codec in names:
            r = CODECS[codec](xs, **codec_params(codec, xs, args))
            rows.append({"workers": n, "codec": codec, "d": args.scaling_dim,
                         "density": args.scaling_density, "union_nnz": union_nnz(xs),
                         "bytes_up": r.bytes_up, "bytes_down": r.bytes_down,
                         "bytes_per_worker": r.bytes_per_worker})
    return rows


def peeling_curve(ks: list[int], ratios: list[float], trials: int, seed: int) -> list[dict]:
    """P(peeling completes) and mean stuck fraction vs m/k for r = 3 (HG-Sketch's hashes)."""
    rows = []
    for k in ks:
        t = trials if k <= 10_000 else max(3, trials // 4)
        for ratio in ratios:
            m = 3 * max(1, round(ratio * k / 3))
            ok, stuck = 0, 0.0
            for trial in range(t):
                h = SketchHash(seed * 7919 + trial, 3, m // 3, checks=0)
                cand = np.sort(np.random.default_rng([seed, trial]).choice(20 * k, k, replace=False))
                keys = h.keys(cand.astype(np.uint64))
                parts = [h.row(keys, j) for j in range(3)]
                res = peel(np.stack([b for b, _ in parts], axis=1),
                           np.stack([s for _, s in parts], axis=1), np.zeros(m, dtype=np.uint32))
                ok += res.stuck.size == 0
                stuck += res.stuck.size / k
            rows.append({"k": k, "m_over_k": round(m / k, 4), "trials": t,
                         "success_rate": round(ok / t, 4), "mean_stuck_fraction": round(stuck / t, 5)})
    return rows


def lhc_failure(args: argparse.Namespace) -> list[dict]:
    """LHC and HG-Sketch with the same number of buckets m, swept across m/union: LHC returns a
    wrong sum without a word below the threshold; HG-Sketch sends the stuck set and stays exact."""
    xs = synthetic_job(args.workers, args.lhc_dim, 0.01, seed=args.seed)
    ref = exact_sum(xs)
    u = union_nnz(xs)
    rows = []
    for ratio in _floats(args.lhc_ratios):
        m = 3 * max(1, round(ratio * u / 3))
        a = lhc.run(xs, buckets=m)
        b = hgsketch.run(xs, HGParams(buckets=m))
        ea, eb = np.abs(a.sum - a.quantized_sum), np.abs(b.sum - b.quantized_sum)
        rows.append({"m_over_union": round(m / u, 4), "buckets": m, "union_nnz": u,
                     "lhc_silent_fallback_elements": a.notes["silent_fallback_elements"],
                     "lhc_wrong_elements": int(np.count_nonzero(ea)),
                     "lhc_max_abs_err_vs_quantized": float(ea.max()),
                     "lhc_max_abs_err_vs_float64": float(np.abs(a.sum - ref).max()),
                     "lhc_bytes_per_worker": a.bytes_per_worker,
                     "hg_exact": bool(eb.max() == 0), "hg_stuck": b.notes["stuck"],
                     "hg_max_abs_err_vs_float64": float(np.abs(b.sum - ref).max()),
                     "hg_bytes_per_worker": b.bytes_per_worker,
                     "hg_stuck_bytes": b.notes["bytes_by_level"].get("STUCK", 0)})
    return rows


def run(args: argparse.Namespace) -> dict:
    names = [c.strip() for c in args.codecs.split(",") if c.strip()]
    unknown = [c for c in names if c not in CODECS]
    if unknown:
        raise SystemExit(f"dhc-bench compare: unknown codec(s) {unknown}; choose from {list(CODECS)}")
    if args.workers < 1:
        raise SystemExit(f"dhc-bench compare: --workers must be >= 1, got {args.workers}")
    load_before = os.getloadavg()[0]
    infos, rows = compare_codecs(args, names)
    result = {
        "benchmark": "compare",
        "machine": {"python": platform.python_version(), "numpy": np.__version__,
                    "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "loadavg_1m_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)]},
        "params": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                   if k not in ("json", "name")},
        "transport_model": "one aggregation hop (switch or parameter server), payload bytes only; "
                           "bytes_per_worker = max(bytes_up, bytes_down)",
        "codecs": names,
        "datasets": infos,
        "results": rows,
        "scaling": scaling(args, names),
        "peeling": {"rows": 3, "threshold_m_over_k": PEEL_THRESHOLD_R3,
                    "curve": peeling_curve(_ints(args.peel_ks), _floats(args.peel_ratios),
                                           args.peel_trials, args.seed)},
        "lhc_failure": lhc_failure(args),
    }
    if getattr(args, "plots", False):
        from . import plots  # matplotlib only when asked
        out = Path(args.out) if getattr(args, "out", None) else Path("bench/out")
        messages: list[str] = []
        result["plots"] = [str(p) for p in plots.write_all(out, compare=result, log=messages.append)]
        result["plot_messages"] = messages
    return result

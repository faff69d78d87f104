"""``dhc-bench``: one entry point for every benchmark in ``bench/``.

Each benchmark is a module ``bench/<topic>/<name>.py`` (or ``bench/<name>.py``) exposing
``add_arguments(parser)`` and ``run(args) -> dict``; this dispatcher prints the dict as JSON
(``--json``) or as an indented summary, and can write it to ``--out DIR/<name>.json``.

``dhc-bench all`` (what ``make bench`` runs) gives the benchmarks whose full run takes many
minutes the shorter arguments of ``ALL_SHORT``, so that ``make bench`` stays under 30 minutes on
this 2-core machine; ``--long`` (``make bench LONG=1``) runs every one with its own defaults and
its long arms.  It writes each benchmark's wall time to ``<out>/all_timing.json``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from pathlib import Path

from controller.errors import ControllerError
from softswitch.api import P4CompileError

#: Errors that mean "a bad input file or argument": reported in one line, exit code 2.
USER_ERRORS = (ControllerError, P4CompileError)

#: benchmark name -> module (kept explicit so `dhc-bench --help` lists what exists).
BENCHMARKS: dict[str, str] = {
    "codec": "bench.codec.codec",
    "softswitch": "bench.softswitch.softswitch",
    "softswitch-ports": "bench.softswitch.softswitch_ports",
    "softswitch-native": "bench.softswitch.softswitch_native",
    "placement": "bench.placement",
    "e2e": "bench.e2e.e2e",
    "e2e-profile": "bench.e2e.e2e_profile",
    "compare": "bench.codec.compare",
    "ddp": "bench.train.ddp",
    "train": "bench.train.train",
    "train-sim": "bench.train.train_sim",
    "agent-pps": "bench.agent_pps",
    "models": "bench.models.models",
    "scale": "bench.scale.scale",
    "bmv2": "bench.softswitch.bmv2",
}


#: ``dhc-bench all`` without ``--long``: shorter runs of the benchmarks that take many minutes at
#: their defaults (``make train`` and ``dhc-bench models`` are the full runs; the long arms of
#: placement and scale are behind ``--long`` already)
ALL_SHORT: dict[str, list[str]] = {
    "train": ["--quick"],                 # Mininet DDP training: small model, 6 steps per mode
    "ddp": ["--quick"],                   # gloo on loopback: a few steps, a narrow large model
    "train-sim": ["--steps", "60"],       # accuracy without a network: 60 steps, not 200
    "models": ["--quick"],                # NCF and the LSTM only (BERT-base and VGG19: --long)
    "agent-pps": ["--quick"],             # d = 100k, K = 32, W = 64
    "codec": ["--dims", "1000000"],       # 1 M elements (10 M: --long)
    "e2e-profile": ["--repeat", "3"],     # 3 timed AllReduces per mode, not 6
    "e2e": ["--bw", "100mbit"],           # one network (make bench adds leafspine.yaml at 100 Mbit/s)
    "bmv2": ["--lanes", "8", "16"],       # the story's K = 16 and below (K = 32 compiles for 30 s)
}


def _available() -> dict[str, str]:
    """Benchmarks whose module exists in this checkout."""
    here = Path(__file__).resolve().parent
    return {name: mod for name, mod in BENCHMARKS.items()
            if (here / (mod.removeprefix("bench.").replace(".", "/") + ".py")).exists()}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dhc-bench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="name", required=True)
    for name, mod in _available().items():
        p = sub.add_parser(name, help=f"run {mod}")
        p.add_argument("--json", action="store_true", help="print one JSON object")
        p.add_argument("--out", type=Path, help="also write <out>/<name>.json")
        importlib.import_module(mod).add_arguments(p)
    p = sub.add_parser("all", help="run every benchmark with its defaults")
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", type=Path)
    p.add_argument("--long", action="store_true", help="with the long arms of benchmarks that have them")
    return parser


def _emit(name: str, result: dict, as_json: bool, out: Path | None) -> None:
    text = json.dumps(result, indent=None if as_json else 2, sort_keys=False)
    print(text if as_json else f"== {name}\n{text}")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    names = list(_available()) if args.name == "all" else [args.name]
    timing: dict[str, float] = {}
    for name in names:
        mod = importlib.import_module(_available()[name])
        bench_args = _all_args(name, mod, args.long, args.out) if args.name == "all" else args
        started = time.perf_counter()
        try:
            result = mod.run(bench_args)
        except USER_ERRORS as err:
            print(f"dhc-bench {name}: {err}", file=sys.stderr)
            return 2
        timing[name] = round(time.perf_counter() - started, 1)
        _emit(name, result, args.json, args.out)
        if args.name == "all":
            print(f"dhc-bench all: {name} took {timing[name]:.0f} s (load {os.getloadavg()[0]:.1f})",
                  file=sys.stderr)
    if args.name == "all" and args.out is not None:
        (args.out / "all_timing.json").write_text(json.dumps(
            {"long": bool(args.long), "wall_s": timing, "total_s": round(sum(timing.values()), 1),
             "args": {n: ([] if args.long else ALL_SHORT.get(n, [])) for n in names},
             "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "load_avg": [round(x, 2) for x in os.getloadavg()]}, indent=2) + "\n")
    return 0


def _all_args(name: str, mod, long: bool, out: Path | None) -> argparse.Namespace:
    """A benchmark's arguments under ``dhc-bench all``: ``ALL_SHORT``'s, or with ``long`` its own
    defaults plus ``--long`` where it has long arms."""
    sub = argparse.ArgumentParser(prog=f"dhc-bench all: {name}")
    mod.add_arguments(sub)
    has_long = any("--long" in a.option_strings for a in sub._actions)
    argv = (["--long"] if has_long else []) if long else ALL_SHORT.get(name, [])
    bench_args = sub.parse_args(argv)
    bench_args.out = out
    return bench_args


if __name__ == "__main__":
    sys.exit(main())

"""``dhc-bench``: one entry point for every benchmark in ``bench/``.

Each benchmark is a module ``bench/<name>.py`` exposing ``add_arguments(parser)`` and
``run(args) -> dict``; this dispatcher prints the dict as JSON (``--json``) or as an
indented summary, and can write it to ``--out DIR/<name>.json``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from controller.errors import ControllerError
from softswitch.api import P4CompileError

#: Errors that mean "a bad input file or argument": reported in one line, exit code 2.
USER_ERRORS = (ControllerError, P4CompileError)

#: benchmark name -> module (kept explicit so `dhc-bench --help` lists what exists).
BENCHMARKS: dict[str, str] = {
    "codec": "bench.codec",
    "softswitch": "bench.softswitch",
    "softswitch-ports": "bench.softswitch_ports",
    "softswitch-native": "bench.softswitch_native",
    "placement": "bench.placement",
    "e2e": "bench.e2e",
    "e2e-profile": "bench.e2e_profile",
    "compare": "bench.compare",
    "ddp": "bench.ddp",
    "train": "bench.train",
    "train-sim": "bench.train_sim",
    "agent-pps": "bench.agent_pps",
    "models": "bench.models",
    "scale": "bench.scale",
    "bmv2": "bench.bmv2",
}


def _available() -> dict[str, str]:
    """Benchmarks whose module exists in this checkout."""
    here = Path(__file__).resolve().parent
    return {name: mod for name, mod in BENCHMARKS.items()
            if (here / (mod.split(".")[1] + ".py")).exists()}


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
    for name in names:
        mod = importlib.import_module(_available()[name])
        if args.name == "all":
            sub = argparse.ArgumentParser()
            mod.add_arguments(sub)
            has_long = any("--long" in a.option_strings for a in sub._actions)
            bench_args = sub.parse_args(["--long"] if args.long and has_long else [])
            bench_args.out = args.out
        else:
            bench_args = args
        try:
            result = mod.run(bench_args)
        except USER_ERRORS as err:
            print(f"dhc-bench {name}: {err}", file=sys.stderr)
            return 2
        _emit(name, result, args.json, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

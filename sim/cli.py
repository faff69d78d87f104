"""``dhc-sim``: DHC and its baselines at datacenter scale on SimGrid (``docs/scale.md``).

    dhc-sim run --topo fattree:k=16 --workers 1024 --bw 100gbit --dim 25000000 --density 0.01 \\
        --modes ring,sketch_ring,dense_ina,dhc --json
    dhc-sim run --topo topologies/single.yaml --bw 100mbit --json
    dhc-sim validate --json [--skip-emulator] [--quick]

Exit codes: 0 ok (validate: every checked row within its bound), 1 a validation row outside its
bound (named on stderr) or a simulation that failed, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from controller.errors import ControllerError
from dhc.errors import CodecError
from sim.fabric import FabricError
from sim.parts import HOST_PROFILES, SwitchModel
from sim.runner import EngineError, Scenario, simulate
from sim.schedule import MODES
from sim.units import UnitError, parse_rate_bps, parse_seconds

USER_ERRORS = (FabricError, UnitError, ControllerError, CodecError, ValueError)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 1")
    return value


def _add_run(sub) -> None:
    p = sub.add_parser("run", help="simulate one scenario, every mode")
    p.add_argument("--topo", default="fattree:k=4",
                   help="fattree:k=K | leafspine:leaves=L,spines=S,hosts=H | a topology file")
    p.add_argument("--workers", type=_positive_int, help="workers (default: a file's jobs, else every host)")
    p.add_argument("--jobs", type=_positive_int, default=1, help="split the workers into this many jobs")
    p.add_argument("--job", type=int, help="of a topology file's jobs, run only this one")
    p.add_argument("--bw", default=None, help="every link's rate, e.g. 100gbit (default: the file's "
                   "rates; 100gbit for generated fabrics)")
    p.add_argument("--latency", default="1us", help="propagation latency per link (default 1us)")
    p.add_argument("--dim", type=_positive_int, default=1_000_000, help="elements per worker")
    p.add_argument("--density", type=float, default=0.01, help="nonzero share after top-k")
    p.add_argument("--clustered", action="store_true", help="supports clustered in shared hot blocks")
    p.add_argument("--modes", default=",".join(MODES), help=f"comma-separated subset of {','.join(MODES)}")
    p.add_argument("--host", choices=sorted(HOST_PROFILES), default="line-rate", help="host profile")
    p.add_argument("--no-codec-time", action="store_true", help="charge no codec time (network only)")
    p.add_argument("--lanes", type=_positive_int, default=None,
                   help="K lanes per packet (default: a file job's lanes, else 256)")
    p.add_argument("--window", type=_positive_int, default=None,
                   help="W slots in flight per job (default: fill the bandwidth-delay product)")
    p.add_argument("--pipeline", default="500ns", help="switch pipeline latency (default 500ns)")
    p.add_argument("--register-slots", type=_positive_int, default=4096, help="register pool per switch")
    p.add_argument("--ring-steps", type=_positive_int, default=16,
                   help="ring steps simulated per ring AllReduce (the rest charged at their mean)")
    p.add_argument("--bucket", type=_positive_int, default=1_000_000, help="codec bucket (elements)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _file_lanes(topo: str) -> int | None:
    from sim.fabric import build_topology
    t = build_topology(topo)
    return t.jobs[0].lanes if t.jobs else None


def scenario_from_args(args: argparse.Namespace) -> Scenario:
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise ValueError(f"--modes: unknown {', '.join(bad) or '(none given)'}; "
                         f"choose from {', '.join(MODES)}")
    if not 0 < args.density <= 1:
        raise ValueError(f"--density must be in (0, 1], got {args.density}")
    generated = args.topo.startswith(("fattree", "leafspine"))
    bw = parse_rate_bps(args.bw) if args.bw else (100e9 if generated else None)
    lanes = args.lanes or (None if generated else _file_lanes(args.topo)) or 256
    switch = SwitchModel(lanes, args.window, parse_seconds(args.pipeline), args.register_slots)
    switch.frame_bytes()
    from dhcwire.header import check_lanes
    check_lanes(lanes)
    return Scenario(args.topo, bw, parse_seconds(args.latency), args.workers, args.jobs, args.dim,
                    args.density, args.clustered, modes, args.host, switch, args.seed, args.ring_steps,
                    args.bucket, not args.no_codec_time, job=args.job)


def _print(result: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result))
        return
    for mode, row in result.get("modes", {}).items():
        print(f"{mode:12s} {row['seconds']:.6g} s ({row['network_s']:.6g} s network + "
              f"{row['codec_s_per_worker']:.6g} s codec)  {row['bytes_per_worker']:,} B/worker  "
              f"{row['packets_per_worker']:,} packets/worker")
    if result.get("speedup_of_dhc"):
        print("DHC speed-up over: " + ", ".join(f"{m} {v}x" for m, v in result["speedup_of_dhc"].items()))
    for row in result.get("rows", []):
        if row.get("ok") is None:
            print(f"{row['check']:60s} skipped: {row.get('skipped', '')}")
            continue
        print(f"{row['check']:60s} simulated {row['simulated']:.6g}  expected {row['expected']:.6g}  "
              f"error {row['relative_error']:.3%}  {'ok' if row['ok'] else 'FAIL'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dhc-sim", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _add_run(sub)
    from sim.validate import add_arguments as add_validate
    add_validate(sub.add_parser("validate", help="the three validations (analytic, emulator, published)"))
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            result = simulate(scenario_from_args(args))
        else:
            from sim.validate import run as run_validate
            result = run_validate(args)
    except USER_ERRORS as err:
        print(f"dhc-sim {args.command}: {err}", file=sys.stderr)
        return 2
    except EngineError as err:
        print(f"dhc-sim {args.command}: {err}", file=sys.stderr)
        return 1
    _print(result, args.json)
    if args.command == "validate":
        from sim.validate import failures
        failed = failures(result)
        for line in failed:
            print(f"dhc-sim validate: FAIL {line}", file=sys.stderr)
        if failed:
            print(f"dhc-sim validate: {len(failed)} of {result['checked']} rows outside their bound",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

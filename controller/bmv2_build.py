"""p4src/dhc.p4 compiled by p4c for BMv2, with exactly the softswitch's ``-D`` defines.

A build is cached under a key made of every file under the program's folder (``p4src/``), the
defines and ``p4c --version``, so a changed source, another K or pool size, or another compiler
never reuses an old JSON (the bug of the former ``build/dhc.json``, compiled once without the
topology's defines).  Concurrent builders of the same key wait for one another (a file lock).

    python -m controller.bmv2_build --topo topologies/single.yaml   # what `make p4` runs
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from controller.deploy.errors import PlanError
from controller.errors import ControllerError
from controller.pipeline import PROGRAM, PipelineConfig, program_defines, read_pipeline_files
from controller.targets import check_lanes, lanes_for_target, profile
from controller.topology import Topology
from dhcwire.p4names import DEFAULT_MAX_JOBS

REPO = Path(__file__).resolve().parents[1]
P4INFO_NAME, JSON_NAME = "dhc.p4info.txtpb", "dhc.json"


def cache_root() -> Path:
    """``$DHC_BMV2_CACHE``, else ``<repo>/build/bmv2``."""
    return Path(os.environ.get("DHC_BMV2_CACHE") or REPO / "build" / "bmv2")


@dataclass(frozen=True)
class Bmv2Files:
    """One cached build: p4c's P4Info and BMv2 JSON, and how long p4c took (0 when cached)."""

    p4info: Path
    json: Path
    compile_seconds: float = 0.0


@lru_cache(maxsize=4)
def compiler_version(p4c: str = "p4c") -> str:
    exe = shutil.which(p4c)
    if exe is None:
        raise PlanError(f"target bmv2: {p4c} is not on PATH (BMv2 needs p4c to build its JSON; "
                        "with the project's toolchain: eval \"$(../shared/toolchain/p4c-env)\")")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    return (out.stdout + out.stderr).strip()


def build_key(program: Path, defines: dict[str, str], version: str) -> str:
    """sha256 over every file under the program's folder, the defines and the compiler version."""
    h = hashlib.sha256()
    root = program.parent
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(str(program.relative_to(root)).encode() + b"\0")
    h.update(repr(sorted(defines.items())).encode() + b"\0" + version.encode())
    return h.hexdigest()[:24]


def build(defines: dict[str, str], program: Path = PROGRAM, p4c: str = "p4c",
          cache: Path | None = None) -> Bmv2Files:
    """The cached build of ``program`` with ``defines``; compiles it (once) if missing."""
    key = build_key(program, defines, compiler_version(p4c))
    out = (cache or cache_root()) / key
    files = Bmv2Files(out / P4INFO_NAME, out / JSON_NAME)
    if files.p4info.is_file() and files.json.is_file():
        return files
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # another process may be compiling this key
        if files.p4info.is_file() and files.json.is_file():
            return files
        seconds = _compile(program, defines, p4c, out)
    return Bmv2Files(files.p4info, files.json, seconds)


def _compile(program: Path, defines: dict[str, str], p4c: str, out: Path) -> float:
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    cmd = [shutil.which(p4c) or p4c, "--target", "bmv2", "--arch", "v1model",
           *(f"-D{k}={v}" for k, v in sorted(defines.items())),
           "--p4runtime-files", str(tmp / P4INFO_NAME), "-o", str(tmp), str(program)]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
        produced = tmp / (program.stem + ".json")   # p4c names the JSON after the program
        if done.returncode == 0 and produced.is_file() and produced.name != JSON_NAME:
            produced.rename(tmp / JSON_NAME)
        if done.returncode != 0 or not (tmp / JSON_NAME).is_file():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise PlanError(f"p4c could not compile {program} for BMv2 with "
                            f"{' '.join(cmd[5:-5])} (exit {done.returncode}):\n{tail}")
        shutil.rmtree(out, ignore_errors=True)   # an incomplete earlier build of this key
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return time.perf_counter() - t0


@dataclass(frozen=True)
class Bmv2Build:
    """A :class:`controller.pipeline.PipelineSource` for BMv2: refuses a K BMv2 cannot run
    (``controller.targets``), else compiles ``program`` with p4c per distinct size (cached)."""

    program: Path = PROGRAM
    p4c: str = "p4c"
    cache: Path | None = None

    def config(self, lanes: int, pool_size: int, max_jobs: int) -> PipelineConfig:
        prof = profile("bmv2")
        if not prof.supports(lanes):
            raise PlanError(f"target bmv2 runs only K in {{{', '.join(map(str, prof.lanes))}}} lanes "
                            f"per packet, the jobs use {lanes} ({prof.why})")
        files = build(program_defines(lanes, pool_size, max_jobs), Path(self.program), self.p4c,
                      self.cache)
        return read_pipeline_files(files.p4info, files.json)


def build_for_topology(topo: Topology, max_jobs: int = DEFAULT_MAX_JOBS, p4c: str = "p4c",
                       choose_lanes: bool = True) -> dict[str, Bmv2Files]:
    """Every pipeline ``topo``'s programmable switches need on BMv2, switch -> files.
    ``choose_lanes``: jobs at a K BMv2 cannot run take BMv2's K (as ``make run`` does);
    otherwise they are refused."""
    if choose_lanes:
        topo, _ = lanes_for_target(topo, "bmv2")
    check_lanes(topo, "bmv2")
    lanes = {j.lanes for j in topo.jobs if j.needs_aggregation}
    if len(lanes) > 1:
        raise PlanError(f"jobs use different lane counts {sorted(lanes)}; one P4 program has one "
                        "DHC_LANES")
    k = lanes.pop() if lanes else profile("bmv2").preferred
    return {name: build(program_defines(k, sw.register_slots, max_jobs), PROGRAM, p4c)
            for name, sw in topo.switches.items() if sw.programmable}


def main(argv: list[str] | None = None) -> int:
    """Build (or find cached) the BMv2 pipelines of a topology and print where they are."""
    from controller.topology_file import load

    ap = argparse.ArgumentParser(prog="python -m controller.bmv2_build", description=main.__doc__)
    ap.add_argument("--topo", required=True, help="topology file")
    ap.add_argument("--p4c", default="p4c", help="the p4c driver (default: p4c on PATH)")
    args = ap.parse_args(argv)
    try:
        built = build_for_topology(load(args.topo), p4c=args.p4c)
    except ControllerError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in sorted({f.json.parent for f in built.values()}):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

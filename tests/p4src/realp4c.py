"""The reference p4c (BMv2 and Tofino back ends) from the shared toolchain, for tests.

The toolchain is not part of the repository: it lives beside the clone (``<repo>/../shared/toolchain``,
as in CI), or where ``DHC_TOOLCHAIN`` points, or at ``/work/shared/toolchain``.  Tests that need it
skip with the reason from :func:`missing_reason`.  A compile's outcome is read from what the
compiler writes: its exit code and messages, ``manifest.json`` (``compilation_succeeded``) and, for
Tofino, ``pipe/context.json``, whose ``stage_tables`` give the stage of every table it placed.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.toolchain import bmv2_environ

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "p4src" / "dhc.p4"
TOFINO_STAGES = {"tofino": 12, "tofino2": 20}


def p4c_environment() -> dict[str, str] | None:
    """The process environment with the toolchain's p4c on PATH (``tests.toolchain`` finds and
    unpacks it), or None when it is absent or its p4c does not start."""
    env, _why = bmv2_environ()
    if env is None:
        return None
    # p4c-env only warns when a runtime library is missing; a compiler that cannot start is absent
    probe = subprocess.run(["p4c", "--version"], env=env, capture_output=True, timeout=120, check=False)
    return env if probe.returncode == 0 else None


def missing_reason() -> str:
    return ("the reference p4c toolchain is not here or does not start (looked in $DHC_TOOLCHAIN, "
            "<repo>/../shared/toolchain and /work/shared/toolchain for p4c-env; `p4c --version` must run, "
            "see the toolchain's README for libboost-iostreams1.74.0); CI has it beside the clone")


@dataclass
class Compile:
    """One p4c run: what it printed and, for Tofino, where it placed each table."""

    target: str
    defines: dict[str, str]
    out: Path
    returncode: int = -1
    output: str = ""
    succeeded: bool = False
    stages: dict[str, list[int]] = field(default_factory=dict)   # table name -> stages (ingress)
    registers: dict[str, int] = field(default_factory=dict)      # register -> stage of its stateful ALU

    @property
    def stage_count(self) -> int:
        return 1 + max((s for ss in self.stages.values() for s in ss), default=-1)

    def stage_of(self, table: str) -> int:
        """The one stage of a table placed in a single stage (fails the test otherwise)."""
        found = self.stages[table]
        assert len(found) == 1, f"{table} is split over stages {found}"
        return found[0]

    def stateful_alus(self, stage: int) -> int:
        """Stateful ALUs (registers) the ingress uses in ``stage``."""
        return sum(1 for s in self.registers.values() if s == stage)


def start(target: str, out: Path, env: dict[str, str], defines: dict[str, str] | None = None
          ) -> tuple[Compile, subprocess.Popen]:
    """Start p4c for ``target`` ('bmv2', 'tofino', 'tofino2') on p4src/dhc.p4, output in ``out``."""
    defines = dict(defines or {})
    cmd = ["p4c", "--target", target, "--arch", "v1model", "-o", str(out)]
    cmd += [f"-D{k}={v}" for k, v in defines.items()]
    if target == "bmv2":
        cmd += ["--p4runtime-files", str(out / "dhc.p4info.txtpb")]
    cmd.append(str(PROGRAM))
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    return Compile(target, defines, out), proc


def finish(result: Compile, proc: subprocess.Popen, timeout: float = 900) -> Compile:
    """Wait for the compile and read its outcome."""
    result.output, _ = proc.communicate(timeout=timeout)
    result.returncode = proc.returncode
    manifest = result.out / "manifest.json"
    if result.target == "bmv2":
        result.succeeded = result.returncode == 0
    elif manifest.is_file():
        result.succeeded = bool(json.loads(manifest.read_text()).get("compilation_succeeded"))
    context = result.out / "pipe" / "context.json"
    if context.is_file():
        ctx = json.loads(context.read_text())
        result.stages = ingress_stages(ctx)
        result.registers = register_stages(ctx)
    return result


def ingress_stages(context: dict) -> dict[str, list[int]]:
    """Ingress match tables of a Tofino context.json -> the stages they occupy."""
    out: dict[str, list[int]] = {}
    for t in context.get("tables", []):
        if t.get("table_type") != "match" or t.get("direction") != "ingress":
            continue
        stage_tables = t.get("match_attributes", {}).get("stage_tables", [])
        out[t["name"]] = sorted({s["stage_number"] for s in stage_tables})
    return out


def register_stages(context: dict) -> dict[str, int]:
    """Ingress registers of a Tofino context.json -> the stage of the table that runs each."""
    out: dict[str, int] = {}
    for t in context.get("tables", []):
        if t.get("table_type") != "match" or t.get("direction") != "ingress":
            continue
        stage_tables = t.get("match_attributes", {}).get("stage_tables", [])
        for ref in t.get("stateful_table_refs", []):
            for s in stage_tables:
                out[ref["name"]] = s["stage_number"]
    return out

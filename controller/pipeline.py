"""The program a switch runs, as the controller sees it: a P4Info and an opaque device config.

The controller is target neutral: it needs the P4Info (names -> ids) and bytes to push with
SetForwardingPipelineConfig.  Where they come from depends on the target, and this module is the
one place that knows it:

* :class:`SoftswitchBuild` compiles ``p4src/dhc.p4`` with the project's softswitch front end (the
  device config is the preprocessed P4 source, ``softswitch/server/README.md``);
* :class:`PipelineFiles` reads files another compiler wrote (BMv2: p4c's P4Info and JSON) and
  refuses them if they were compiled for another K than the jobs use;
* :class:`controller.bmv2_build.Bmv2Build` compiles it with p4c for BMv2, with the same
  :func:`program_defines` as the softswitch build, cached by content.

Both build a :class:`PipelineConfig` for given sizes (lanes, register pool, job counters), so a
deployment asks one :class:`PipelineSource` per switch size and never names a target.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2

from controller.deploy.errors import PlanError
from controller.targets import lanes_in_p4info
from dhcwire.p4names import DEFAULT_MAX_JOBS
from softswitch.compiler import P4CompileError
from softswitch.compiler import compile as compile_p4

#: The DHC data plane.
PROGRAM = Path(__file__).resolve().parents[1] / "p4src" / "dhc.p4"


def program_defines(lanes: int, pool_size: int, max_jobs: int = DEFAULT_MAX_JOBS) -> dict[str, str]:
    """``-D`` values for p4src/dhc.p4 (lanes per packet, register cells, per-job counter cells)."""
    return {"DHC_LANES": str(lanes), "DHC_POOL_SIZE": str(pool_size), "DHC_MAX_JOBS": str(max_jobs)}


@dataclass(frozen=True)
class PipelineConfig:
    """What SetForwardingPipelineConfig pushes: the P4Info and the target's device config."""

    p4info: p4info_pb2.P4Info
    device_config: bytes


class PipelineSource(Protocol):
    """Anything that yields the pipeline of a switch of the given sizes."""

    def config(self, lanes: int, pool_size: int, max_jobs: int) -> PipelineConfig: ...


@dataclass(frozen=True)
class SoftswitchBuild:
    """``program`` compiled by the softswitch front end, once per distinct size."""

    program: Path = PROGRAM

    def config(self, lanes: int, pool_size: int, max_jobs: int) -> PipelineConfig:
        return _softswitch_build(str(self.program), lanes, pool_size, max_jobs)


@lru_cache(maxsize=8)
def _softswitch_build(program: str, lanes: int, pool_size: int, max_jobs: int) -> PipelineConfig:
    try:
        compiled = compile_p4(Path(program), program_defines(lanes, pool_size, max_jobs))
        return PipelineConfig(compiled.p4info, compiled.source.encode("utf-8"))
    except P4CompileError as err:
        raise PlanError(f"P4 program {program} does not compile: {err}") from None


@dataclass(frozen=True)
class PipelineFiles:
    """A P4Info file (``.txt``/``.txtpb``/``.pbtxt`` text, ``.json`` or binary) and a device
    config file written by another compiler; the same for every size (they were built for one)."""

    p4info_path: Path
    device_config_path: Path

    def config(self, lanes: int, pool_size: int, max_jobs: int) -> PipelineConfig:
        config = read_pipeline_files(Path(self.p4info_path), Path(self.device_config_path))
        built = lanes_in_p4info(config.p4info)
        if built and built != lanes:   # 0: not dhc.p4 (no lane registers), nothing to compare
            raise PlanError(f"{self.p4info_path} was compiled with DHC_LANES={built}, the jobs use "
                            f"{lanes} lanes per packet: every DATA packet would be dropped; compile "
                            f"with -DDHC_LANES={lanes} (or use --target bmv2, which does)")
        return config


def read_pipeline_files(path: Path, config_path: Path) -> PipelineConfig:
    p4info = p4info_pb2.P4Info()
    try:
        raw = path.read_bytes()
        config = config_path.read_bytes()
    except OSError as err:
        raise PlanError(f"pipeline file {err.filename}: cannot read: {err.strerror}") from None
    try:
        if path.suffix in (".txt", ".txtpb", ".pbtxt"):
            text_format.Parse(raw.decode("utf-8"), p4info)
        elif path.suffix == ".json":
            json_format.Parse(raw.decode("utf-8"), p4info)
        else:
            p4info.ParseFromString(raw)
    except Exception as err:  # noqa: BLE001 - any parse failure is a bad input file
        raise PlanError(f"{path}: not a P4Info ({type(err).__name__}: {err})") from None
    return PipelineConfig(p4info, config)

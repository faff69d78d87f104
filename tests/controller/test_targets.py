"""Per-target lane counts, the refusal of a K a target cannot run, and the BMv2 build's cache key
(no toolchain needed: the key takes the compiler version as text)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from google.protobuf import text_format

from controller.bmv2_build import Bmv2Build, build_key
from controller.cli import main as dhc_ctl
from controller.deploy.errors import PlanError
from controller.pipeline import PROGRAM, PipelineFiles, SoftswitchBuild, program_defines
from controller.targets import check_lanes, lanes_for_target, lanes_in_p4info, profile
from controller.topology_file import load
from tests.toolchain import bmv2_toolchain  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[2]
SINGLE = str(ROOT / "topologies" / "single.yaml")


def test_bmv2_refuses_the_readme_topologies_and_the_story_moves_them_to_its_k() -> None:
    topo = load(SINGLE)
    with pytest.raises(PlanError, match=r"job 1 \(256 lanes\): target bmv2 runs only K in"):
        check_lanes(topo, "bmv2")
    check_lanes(topo, "softswitch")
    moved, changed = lanes_for_target(topo, "bmv2")
    k = profile("bmv2").preferred
    assert changed == {1: (256, k)} and moved.job(1).lanes == k
    check_lanes(moved, "bmv2")
    assert lanes_for_target(topo, "softswitch") == (topo, {})


def test_dhc_ctl_place_refuses_a_k_the_target_cannot_run(capsys) -> None:
    assert dhc_ctl(["place", "--topo", SINGLE, "--target", "bmv2"]) == 2
    assert "target bmv2 runs only K in" in capsys.readouterr().err


def test_dhc_ctl_deploy_refuses_it_before_contacting_a_switch(tmp_path, capsys) -> None:
    placement = tmp_path / "p.json"
    assert dhc_ctl(["place", "--topo", SINGLE, "--out", str(placement), "--json"]) == 0
    capsys.readouterr()
    rc = dhc_ctl(["deploy", "--topo", SINGLE, "--placement", str(placement), "--target", "bmv2",
                  "--switch-addr-map", "s1=127.0.0.1:1"])   # nothing listens there
    assert rc == 2 and "job 1 (256 lanes): target bmv2 runs only K in" in capsys.readouterr().err


def test_bmv2_build_refuses_before_compiling() -> None:
    with pytest.raises(PlanError, match="target bmv2 runs only K"):
        Bmv2Build(p4c="no-such-p4c").config(256, 4096, 256)


def test_pipeline_files_of_another_k_are_refused(tmp_path: Path) -> None:
    config = SoftswitchBuild().config(4, 64, 16)
    assert lanes_in_p4info(config.p4info) == 4
    p4info = tmp_path / "dhc.p4info.txtpb"
    p4info.write_text(text_format.MessageToString(config.p4info))
    (tmp_path / "dhc.json").write_bytes(b"{}")
    files = PipelineFiles(p4info, tmp_path / "dhc.json")
    assert files.config(4, 64, 16).p4info == config.p4info
    with pytest.raises(PlanError, match="compiled with DHC_LANES=4, the jobs use 32"):
        files.config(32, 64, 16)


def test_build_key_covers_every_source_file_the_defines_and_the_compiler(tmp_path: Path) -> None:
    src = tmp_path / "p4src"
    shutil.copytree(PROGRAM.parent, src)
    program = src / PROGRAM.name
    defines = program_defines(32, 4096)
    key = build_key(program, defines, "p4c 1.2.5.8")
    assert key == build_key(program, dict(reversed(defines.items())), "p4c 1.2.5.8")
    assert key != build_key(program, program_defines(16, 4096), "p4c 1.2.5.8")
    assert key != build_key(program, defines, "p4c 1.2.5.9")
    include = next(src.rglob("*.p4"))
    include.write_text(include.read_text() + "\n")
    assert key != build_key(program, defines, "p4c 1.2.5.8")


def test_every_target_prefers_a_k_it_runs() -> None:
    for name in ("softswitch", "bmv2"):
        prof = profile(name)
        assert prof.preferred is None or prof.supports(prof.preferred)
    with pytest.raises(PlanError, match="unknown target"):
        profile("tofino-model")


def test_bmv2_build_compiles_with_the_defines_and_caches(tmp_path: Path, bmv2_toolchain) -> None:  # noqa: F811
    """Real p4c: the JSON has the K asked for (the old build/dhc.json had 32 whatever the jobs
    used), a second build is the cached one, a broken source is a clear error."""
    from controller.bmv2_build import build
    from controller.pipeline import read_pipeline_files

    first = build(program_defines(8, 64, 16), cache=tmp_path / "cache")
    assert first.compile_seconds > 0
    assert lanes_in_p4info(read_pipeline_files(first.p4info, first.json).p4info) == 8
    again = build(program_defines(8, 64, 16), cache=tmp_path / "cache")
    assert again.json == first.json and again.compile_seconds == 0
    src = tmp_path / "p4src"
    shutil.copytree(PROGRAM.parent, src)
    (src / PROGRAM.name).write_text((src / PROGRAM.name).read_text() + "\nthis is not P4;\n")
    with pytest.raises(PlanError, match=r"p4c could not compile .* -DDHC_LANES=8"):
        build(program_defines(8, 64, 16), program=src / PROGRAM.name, cache=tmp_path / "cache")

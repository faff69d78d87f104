"""``dhc-agent --fuse-rounds``: the HG-Sketch codec's two-round form from the command line and
the Mininet workloads (the run itself is checked in tests/e2e/test_bench_e2e.py: 2 rounds, exact)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostagent.cli import main as agent_main
from topologies.workload import Workload, agent_command


def test_fuse_rounds_is_refused_for_the_dense_codec(capsys) -> None:
    code = agent_main(["--job", "1", "--child", "0", "--switch", "127.0.0.1", "--workers", "2",
                       "--codec", "dense", "--fuse-rounds"])
    assert code == 2
    assert "--fuse-rounds applies to --codec hg only" in capsys.readouterr().err


@pytest.mark.parametrize("codec,fused,flag", [("hg", True, True), ("hg", False, False),
                                              ("dense", True, False)])
def test_workload_passes_fuse_rounds_to_hg_agents_only(codec: str, fused: bool, flag: bool) -> None:
    cmd = agent_command(Path("m.json"), "h1", 0, Workload(codec=codec, fuse_rounds=fused),
                        Path("e.npy"), 1)
    assert ("--fuse-rounds" in cmd) is flag

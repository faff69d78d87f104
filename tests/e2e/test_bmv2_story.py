"""``make run --target bmv2`` on the README's two topologies, on real BMv2 (simple_switch_grpc) and
p4c: placed, deployed (the pipeline built by ``controller.bmv2_build`` with the topology's defines
at BMv2's K), every worker exact.  Skipped, saying why, without root/Mininet or the toolchain.
A smaller gradient than ``make run``'s (d = 50k instead of 200k) keeps the test time small."""

from __future__ import annotations

import json

import pytest

from controller.targets import profile
from controller.topology_file import load
from tests.e2e.conftest import ROOT, _needs_root
from tests.toolchain import bmv2_toolchain  # noqa: F401 - a fixture
from topologies.workload import Workload

pytestmark = [pytest.mark.root, pytest.mark.slow]


@pytest.mark.parametrize("topo_file", ["single.yaml", "leafspine.yaml"])
def test_story_on_bmv2_is_exact(topo_file: str, tmp_path, bmv2_toolchain) -> None:  # noqa: F811
    _needs_root()
    from topologies.story import run_story

    topo = load(str(ROOT / "topologies" / topo_file))
    result = run_story(topo, Workload(dim=50_000, density=0.01, seed=7), target="bmv2",
                       workdir=tmp_path)
    k = profile("bmv2").preferred
    assert result.target == "bmv2"
    # the topologies ask for more lanes than BMv2 runs: the story moved them to BMv2's K
    assert result.lanes_changed == {j.id: (j.lanes, k) for j in topo.jobs}
    failed = {(o.job_id, o.host): o.summary.get("error") or o.stderr[-300:]
              for o in result.outcomes if not o.exact}
    assert result.exact, failed
    manifest = json.loads((tmp_path / "manifest.json").read_text())   # what the agents read
    assert {j["lanes"] for j in manifest["jobs"]} == {k}
    assert len(result.outcomes) == sum(len(j.workers) for j in topo.jobs)

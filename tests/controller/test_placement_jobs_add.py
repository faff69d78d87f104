"""``dhc-ctl jobs add`` for a job the placement lacks: incremental placement, the placement file
updated, the new job installed on real softswitch processes (P4Runtime on loopback)."""

from __future__ import annotations

import json

from controller.cli import main
from controller.deploy.apply import deploy, read_state
from controller.p4rt_client import MultiSwitchClient
from controller.placement import Placement, place
from controller.plan import intended_state
from controller.topology_file import load
from tests.controller.deploy.switches import SoftswitchProcs

TOPO = "topologies/leafspine.yaml"


def test_jobs_add_places_incrementally_and_installs(tmp_path, capsys) -> None:
    topo = load(TOPO)
    only_one = place(topo.with_jobs([topo.job(1)]))
    (tmp_path / "logs").mkdir()
    procs = SoftswitchProcs(list(topo.switches), tmp_path / "logs")
    try:
        deploy(topo, only_one, procs.addresses)
        ppath = tmp_path / "placement.json"
        ppath.write_text(only_one.to_json())
        addr_map = ",".join(f"{n}={a.addr}@{a.device_id}" for n, a in procs.addresses.items())
        rc = main(["jobs", "add", "--topo", TOPO, "--placement", str(ppath), "--job", "2",
                   "--switch-addr-map", addr_map, "--time-limit", "10", "--json"])
        doc = json.loads(capsys.readouterr().out)
        assert rc == 0 and doc["writes"] > 0
        grown = Placement.from_json(ppath.read_text())
        assert {jp.job_id for jp in grown.jobs} == {1, 2}
        assert grown.job(1).root == only_one.job(1).root  # nothing to gain by moving job 1
        assert grown.objective == place(topo).objective  # and the result is still optimal
        with MultiSwitchClient(procs.addresses) as c:
            actual = c.run(read_state)
        intended = intended_state(topo, grown)
        for name in topo.switches:
            mine = {k: e.value for k, e in intended[name].entries.items() if e.owner == 2}
            assert {k: e.value for k, e in actual[name].entries.items() if e.owner == 2} == mine
    finally:
        procs.stop()

"""The pure half of deploying (``controller.deploy.state_diff``) on hand-built plain data: owners of
read-back state, the per-switch changes and conflicts, their counts, the addressed switches and
the epochs a deployment keeps -- no switch, no P4Runtime session."""

from __future__ import annotations

import pytest
from p4.v1.p4runtime_pb2 import Update

from controller.deploy.errors import PlanError
from controller.deploy.state_diff import (
    SwitchReport,
    addressed_switches,
    assign_owners,
    epochs_to_deploy,
    switch_changes,
)
from controller.intent import McGroup, SwitchState, entry
from controller.placement import place
from controller.topology_file import load
from dhcwire.p4names import T_JOB, T_LPM, T_REWRITE


def _state(name: str, *entries, groups=()) -> SwitchState:
    st = SwitchState(name)
    for e in entries:
        st.entries[e.key] = e
    for g in groups:
        st.groups[g.group_id] = g
    return st


JOB3 = entry(T_JOB, {"job_id": 3}, "set_job", {"base": 0, "window": 4, "stats_idx": 1})
REWRITE7 = entry(T_REWRITE, {"egress_rid": 7}, "rewrite", {"port": 1})
ROUTE = entry(T_LPM, {"dst": (0x0A000001, 32)}, "forward", {"port": 2})


def test_read_back_state_gets_its_owners() -> None:
    held = assign_owners(_state("s1", JOB3, REWRITE7, ROUTE, groups=[McGroup(3, ((1, 7),))]))
    assert held.entries[JOB3.key].owner == 3          # job tables: the job_id in the key
    assert held.entries[REWRITE7.key].owner == 3      # a rewrite: the group replicating its rid
    assert held.entries[ROUTE.key].owner is None      # forwarding: the base
    assert held.groups[3].owner == 3


def test_switch_changes_count_and_conflicts() -> None:
    want = _state("s1", entry(T_JOB, {"job_id": 4}, "set_job", {"base": 2, "window": 4, "stats_idx": 2},
                              owner=4), ROUTE)
    have = assign_owners(_state("s1", JOB3))
    changes, found = switch_changes(want, have, jobs={4}, base=True, prune=False)
    rep = SwitchReport.of_changes("s1", changes)
    assert (rep.inserted, rep.modified, rep.deleted, rep.writes) == (2, 0, 0, 2)
    assert [c.kind for c in changes] == [Update.INSERT, Update.INSERT]
    assert found == ["s1: register region 2..9 of job 4 overlaps 0..7 of job 3"]
    # prune replaces other jobs' state: job 3's entry goes and no conflict is reported
    changes, found = switch_changes(want, have, jobs={4}, base=True, prune=True)
    assert found == [] and SwitchReport.of_changes("s1", changes).deleted == 1


def test_addressed_switches_and_epochs() -> None:
    topo = load("topologies/single.yaml")
    placement = place(topo)
    agg = placement.jobs[0].aggregators[0].switch
    assert addressed_switches(topo, placement, {agg: object()}) == ([agg], [])
    with pytest.raises(PlanError, match="not in topology"):
        addressed_switches(topo, placement, {agg: object(), "nope": object()})
    with pytest.raises(PlanError, match="no P4Runtime address for aggregating switch"):
        addressed_switches(topo, placement, {})
    jid = placement.jobs[0].job_id
    assert epochs_to_deploy({agg: SwitchState(agg)}, placement, {jid: 5}) == {jid: 5}
    assert epochs_to_deploy({agg: SwitchState(agg)}, placement, None) == {jid: 0}

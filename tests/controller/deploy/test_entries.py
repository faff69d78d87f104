"""Intended entries from topology + placement (pure): the values the data-plane contract asks for,
allocation rules, bad placements named, and the diff that makes deployment idempotent."""

from __future__ import annotations

import dataclasses
import json

import pytest
from p4.v1.p4runtime_pb2 import Update

from controller.deploy.errors import PlanError
from controller.deploy.state_diff import conflicts, diff
from controller.entries import switch_plans
from controller.intent import SwitchState
from controller.placement import Placement, place
from controller.plan import intended_state, manifest_jobs
from controller.topology_file import load
from dhcwire import header as wire
from dhcwire.addresses import ip2int, mac2int
from dhcwire.p4names import T_ARP, T_CHILD, T_JOB, T_LEVEL, T_LPM, T_REWRITE
from hostagent.manifest import load_endpoint, write_manifest


@pytest.fixture(scope="module")
def single():
    topo = load("topologies/single.yaml")
    return topo, place(topo)


@pytest.fixture(scope="module")
def leafspine():
    topo = load("topologies/leafspine.yaml")
    return topo, place(topo)


def test_single_switch_job_entries(single) -> None:
    topo, placement = single
    st = intended_state(topo, placement)["s1"]
    (job,) = st.table(T_JOB)
    assert job.match_value("job_id") == 1
    assert dict(job.params) == {"base": 0, "window": 64, "fan_in": 4, "mcast_grp": 1, "is_root": 1,
                                "uplink_port": 0, "parent_child_id": 0, "own_addr": ip2int("10.0.0.254"),
                                "parent_addr": 0, "stats_idx": 0}
    children = {(e.match_value("ingress_port"), e.match_value("src_addr"), e.match_value("child_id")):
                e.param("child_mask") for e in st.table(T_CHILD)}
    assert children == {(i, ip2int(f"10.0.0.{i}"), i - 1): 1 << (i - 1) for i in range(1, 5)}
    levels = {e.match_value("level"): e.param("op") for e in st.table(T_LEVEL)}
    assert levels == {int(lv): int(op) for lv, op in wire.LEVEL_OPS.items()}
    assert st.groups[1].replicas == ((1, 1), (2, 2), (3, 3), (4, 4))
    rewrites = {e.match_value("egress_rid"): dict(e.params) for e in st.table(T_REWRITE)}
    for i in range(1, 5):
        assert rewrites[i] == {"dmac": mac2int(f"02:00:00:00:00:0{i}"), "dip": ip2int(f"10.0.0.{i}"),
                               "smac": mac2int("02:00:00:00:01:01"), "sip": ip2int("10.0.0.254"),
                               "dport": wire.worker_port(1)}
    assert len(st.table(T_ARP)) == 5
    routes = {
        e.match[0].value: (e.match[0].prefix_len, e.param("port"), e.param("dmac")) for e in st.table(T_LPM)
    }
    assert routes == {ip2int(f"10.0.0.{i}"): (32, i, mac2int(f"02:00:00:00:00:0{i}")) for i in range(1, 5)}
    assert st.defaults["DhcIngress.forwarding.switch_config"].params == (
        ("mac", mac2int("02:00:00:00:01:01")),
    )


def test_leafspine_tree_links(leafspine) -> None:
    topo, placement = leafspine
    plans = switch_plans(topo, placement)
    root = placement.job(1).root
    for jp in placement.jobs:
        for agg in jp.aggregators:
            (j,) = [j for j in plans[agg.switch].jobs if j.job_id == jp.job_id]
            if agg.parent is None:
                assert j.is_root and j.uplink_port == 0 and j.parent_addr is None
                continue
            assert not j.is_root
            assert j.uplink_port == topo.next_hop_port(agg.switch, agg.parent)
            assert j.parent_addr == topo.switches[agg.parent].ip
            (me,) = [c for c in plans[agg.parent].jobs if c.job_id == jp.job_id][0].children[
                j.parent_child_id : j.parent_child_id + 1
            ]
            assert me.name == agg.switch and me.addr == topo.switches[agg.switch].ip
    # a switch that aggregates nothing only forwards
    idle = [s for s in topo.switches if not plans[s].jobs]
    assert idle, "expected a non-aggregating spine"
    for s in idle:
        st = intended_state(topo, placement)[s]
        assert not st.groups and not st.table(T_JOB) and not st.table(T_REWRITE)
        assert len(st.table(T_LPM)) == len(topo.hosts) + len(topo.switches) - 1
    assert root in topo.switches


def test_allocations_unique_and_in_range(leafspine) -> None:
    topo, placement = leafspine
    for name, plan in switch_plans(topo, placement).items():
        rids = [c.rid for j in plan.jobs for c in j.children]
        assert sorted(rids) == list(range(1, len(rids) + 1)), name
        assert sorted(j.stats_idx for j in plan.jobs) == list(range(len(plan.jobs)))
        assert all(j.mcast_grp == j.job_id for j in plan.jobs)


def _with(placement: Placement, job_id: int, switch: str, **changes) -> Placement:
    jobs = []
    for jp in placement.jobs:
        if jp.job_id == job_id:
            aggs = tuple(
                dataclasses.replace(a, **changes) if a.switch == switch else a for a in jp.aggregators
            )
            jp = dataclasses.replace(jp, aggregators=aggs)
        jobs.append(jp)
    return dataclasses.replace(placement, jobs=tuple(jobs))


def test_bad_placements_are_named(leafspine) -> None:
    topo, placement = leafspine
    root = placement.job(2).root
    with pytest.raises(PlanError, match=rf"{root}: register regions of jobs 1 and 2 overlap"):
        intended_state(topo, _with(placement, 2, root, region_base=0))
    with pytest.raises(PlanError, match=rf"job 2 on {root}: region base 3 is odd"):
        intended_state(topo, _with(placement, 2, root, region_base=3))
    with pytest.raises(PlanError, match="outside the pool"):
        intended_state(topo, _with(placement, 2, root, region_base=4094))
    with pytest.raises(PlanError, match="placement is for topology 'other'"):
        intended_state(topo, dataclasses.replace(placement, topology="other"))
    doc = json.loads(placement.to_json())
    doc["jobs"][0]["job_id"] = 0
    t0 = topo.with_jobs([dataclasses.replace(topo.job(1), id=0), topo.job(2)])
    with pytest.raises(PlanError, match="job 0: job ids must be 1..65535"):
        intended_state(t0, Placement.from_dict(doc))


def test_manifest_is_what_workers_load(leafspine, tmp_path) -> None:
    topo, placement = leafspine
    path = tmp_path / "jobs.json"
    write_manifest(path, manifest_jobs(topo, placement))
    ep, n = load_endpoint(path, "h8", job_id=1)
    jp = placement.job(1)
    first = jp.aggregator(jp.first_aggregator["h8"])
    assert n == 8 and ep.switch_ip == topo.switches[first.switch].ip
    assert ep.child_id == next(c.index for c in first.children if c.name == "h8")
    assert (ep.window, ep.lanes, ep.job_id) == (64, topo.job(1).lanes, 1)


def test_diff_is_empty_when_state_matches(leafspine) -> None:
    topo, placement = leafspine
    for st in intended_state(topo, placement).values():
        assert diff(st, st) == []


def test_diff_scoped_to_jobs(leafspine) -> None:
    topo, placement = leafspine
    root = placement.job(2).root
    st = intended_state(topo, placement)[root]
    empty = SwitchState(root)
    # installing only job 2 on an empty switch: job 2's state, job_table entry last, nothing else
    changes = diff(st, empty, jobs={2}, base=False)
    assert changes and all(c.kind == Update.INSERT and c.item.owner == 2 for c in changes)
    assert changes[-1].item.table == T_JOB
    # a switch holding everything: removing job 2 deletes exactly its entries, job_table first
    changes = diff(SwitchState(root), st, jobs={2}, base=False)
    want = {k for k, e in st.entries.items() if e.owner == 2}
    got = {c.item.key for c in changes if hasattr(c.item, "key")}
    assert got == want and changes[0].item.table == T_JOB
    assert {c.item.group_id for c in changes if not hasattr(c.item, "key")} == {2}
    # an extra entry of a job outside the scope survives unless pruned
    extra = SwitchState(root, dict(st.entries), dict(st.defaults), dict(st.groups))
    stray = dataclasses.replace(
        next(e for e in st.table(T_LEVEL)),
        match=tuple(
            dataclasses.replace(m, value=77) if m.name == "job_id" else m
            for m in next(e for e in st.table(T_LEVEL)).match
        ),
        owner=77,
    )
    extra.entries[stray.key] = stray
    assert diff(st, extra, jobs={1, 2}) == []
    assert [c.item for c in diff(st, extra, jobs={1, 2}, prune=True)] == [stray]
    assert [c.item for c in diff(st, extra, jobs=None)] == [stray]  # None: every job is in scope


def test_conflicts_with_jobs_outside_the_scope(leafspine) -> None:
    topo, placement = leafspine
    root = placement.job(2).root
    st = intended_state(topo, placement)[root]
    # the switch holds job 1 only, but job 1 uses the rids and stats_idx the file gives job 2
    live = SwitchState(root)
    for e in st.table(T_JOB):
        if e.owner == 1:
            p = dict(e.params) | {
                "stats_idx": next(x.param("stats_idx") for x in st.table(T_JOB) if x.owner == 2)
            }
            e = dataclasses.replace(e, params=tuple(sorted(p.items())))
            live.entries[e.key] = e
    rid2 = [e for e in st.table(T_REWRITE) if e.owner == 2][0]
    live.entries[rid2.key] = dataclasses.replace(rid2, owner=1)
    found = conflicts(st, live, diff(st, live, jobs={2}, base=False), jobs={2})
    assert f"{root}: rid {rid2.match_value('egress_rid')} of job 2 is used by job 1" in found
    assert any(f.startswith(f"{root}: stats_idx") and "used by job 1" in f for f in found)
    assert conflicts(st, st, [], jobs={2}) == []

"""Placement: ILP (both models) against brute force, memory and budget limits, infeasibility
messages, structural invariants of the result and the k=8 solve-time goal."""

from __future__ import annotations

import dataclasses
import random
import time
from pathlib import Path

import pytest

from controller.errors import InfeasiblePlacement
from controller.placement import Placement, evaluate, place
from controller.placement import model as placement_model
from controller.placement.greedy import greedy_choice
from controller.topology import Host, Job, Link, Switch, Topology
from controller.topology_file import load
from tests.controller.bruteforce import brute_force
from topologies.fattree import build_fattree, random_jobs

TOPO_DIR = Path(__file__).resolve().parents[2] / "topologies"


def check_invariants(topo: Topology, p: Placement) -> None:
    """What the deployment relies on, checked from the result alone."""
    used: dict[str, list[tuple[int, int]]] = {}
    for jp in p.jobs:
        job = topo.job(jp.job_id)
        if not job.needs_aggregation:
            assert jp.root is None and not jp.aggregators
            continue
        assert sorted(jp.first_aggregator) == sorted(job.workers)
        as_child = [c.name for a in jp.aggregators for c in a.children if c.kind == "host"]
        assert sorted(as_child) == sorted(job.workers), "every worker covered exactly once"
        names = {a.switch for a in jp.aggregators}
        roots = [a for a in jp.aggregators if a.parent is None]
        assert [a.switch for a in roots] == [jp.root]
        for agg in jp.aggregators:
            assert topo.switches[agg.switch].programmable
            assert [c.index for c in agg.children] == list(range(len(agg.children))) and len(
                agg.children
            ) <= 32
            seen, node = set(), agg.switch
            while node is not None:  # parent chain reaches the root without cycles
                assert node not in seen and node in names
                seen.add(node)
                node = jp.aggregator(node).parent
            for child in agg.children:
                if child.kind == "switch":
                    assert jp.aggregator(child.name).parent == agg.switch
                else:
                    assert jp.first_aggregator[child.name] == agg.switch
            used.setdefault(agg.switch, []).append((agg.region_base, agg.region_slots))
    for sw, regions in used.items():
        regions.sort()
        for (b1, s1), (b2, _) in zip(regions, regions[1:], strict=False):
            assert b1 + s1 <= b2, f"overlapping regions on {sw}"
        assert regions[-1][0] + regions[-1][1] <= topo.switches[sw].register_slots


def _random_leafspine(rng: random.Random, base: Topology) -> tuple[Topology, int | None]:
    switches = {n: dataclasses.replace(s, programmable=rng.random() < 0.8,
                                       register_slots=rng.choice([0, 128, 256, 384, 4096]),
                                       deploy_cost=rng.choice([1, 1, 2]))
                for n, s in base.switches.items()}
    hosts = sorted(base.hosts)
    jobs = tuple(Job(i + 1, tuple(rng.sample(hosts, rng.randint(1, 6))), rng.choice([1, 2, 3]) * 1000, 64)
                 for i in range(rng.randint(1, 3)))
    return Topology("rand", base.hosts, switches, base.links, jobs), rng.choice([None, None, 0, 1, 2, 3, 4])


@pytest.mark.parametrize("seed", range(4))
def test_ilp_matches_brute_force_on_random_small_instances(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = load(TOPO_DIR / "leafspine.yaml")
    rng = random.Random(seed)
    feasible = 0
    for _ in range(10):
        topo, budget = _random_leafspine(rng, base)
        want = brute_force(topo, budget)
        for general, per_root in ((False, False), (True, False), (True, True)):
            monkeypatch.setattr(placement_model, "PER_ROOT", per_root)
            if want is None:
                with pytest.raises(InfeasiblePlacement):
                    place(topo, budget, force_general=general)
                continue
            got = place(topo, budget, force_general=general)
            assert got.optimal
            assert got.objective == want.objective, (budget, general)
            check_invariants(topo, got)
        feasible += want is not None
    assert feasible >= 3


@pytest.mark.parametrize("budget", [None, 2, 4])
def test_ilp_matches_brute_force_on_fattree_k4(budget: int | None) -> None:
    topo = build_fattree(4).with_jobs([Job(1, ("h0_0_0", "h1_0_0", "h2_1_1", "h3_0_1"), 3000)])
    want = brute_force(topo, budget)
    for general in (False, True):
        got = place(topo, budget, force_general=general)
        assert got.optimal and got.objective == want.objective
        check_invariants(topo, got)


@pytest.mark.slow
def test_ilp_matches_brute_force_on_fattree_k4_two_jobs_tight_memory() -> None:
    topo = build_fattree(4, register_slots=128)  # one region per switch: the jobs compete
    topo = topo.with_jobs([Job(1, ("h0_0_0", "h1_0_0", "h2_1_1"), 3000), Job(2, ("h0_0_1", "h0_1_0"), 1000)])
    want = brute_force(topo)
    got = place(topo)
    assert got.optimal and got.objective == want.objective
    check_invariants(topo, got)


def test_single_switch_job_aggregates_at_that_switch() -> None:
    topo = load(TOPO_DIR / "single.yaml")
    p = place(topo)
    jp = p.job(1)
    assert jp.root == "s1" and [a.switch for a in jp.aggregators] == ["s1"]
    assert {c.name for c in jp.aggregators[0].children} == {"h1", "h2", "h3", "h4"}
    assert p.objective.bottleneck_bytes == topo.job(1).bytes_per_iteration
    check_invariants(topo, p)


def test_single_worker_job_is_legal() -> None:
    topo = load(TOPO_DIR / "single.yaml")
    topo = topo.with_jobs([Job(5, ("h2",), 1000)])
    p = place(topo, budget=0)
    assert p.job(5).root is None and p.objective.total_bytes == 0 and p.deployed == ()


def _leafspine_two_jobs(leaf_slots: int) -> Topology:
    base = load(TOPO_DIR / "leafspine.yaml")
    switches = {n: dataclasses.replace(s, register_slots=leaf_slots) if n.startswith("l") else s
                for n, s in base.switches.items()}
    jobs = (Job(1, tuple(f"h{i}" for i in range(1, 9)), 4000), Job(2, ("h1", "h2", "h3", "h4"), 4000))
    return Topology("ls", base.hosts, switches, base.links, jobs)


def test_memory_limited_placement_picks_fewer_aggregators() -> None:
    ample, tight = _leafspine_two_jobs(4096), _leafspine_two_jobs(128)
    p_ample, p_tight = place(ample), place(tight)
    assert p_tight.objective.aggregator_count < p_ample.objective.aggregator_count
    assert p_tight.objective.key() > p_ample.objective.key()
    for leaf in ("l1", "l2"):
        assert sum(1 for jp in p_tight.jobs for a in jp.aggregators if a.switch == leaf) <= 1
    assert p_tight.objective == brute_force(tight).objective
    check_invariants(tight, p_tight)


def test_budgeted_deployment() -> None:
    topo = load(TOPO_DIR / "leafspine.yaml")
    previous = None
    for budget in range(1, 7):
        p = place(topo, budget)
        assert len(p.deployed) <= budget and p.objective.deploy_cost <= budget
        assert {a.switch for jp in p.jobs for a in jp.aggregators} <= set(p.deployed)
        assert p.objective == brute_force(topo, budget).objective
        if previous is not None:
            assert p.objective.key()[:2] <= previous.objective.key()[:2]
        previous = p
        check_invariants(topo, p)
    one = place(topo, 1)
    assert len(one.deployed) == 1 and one.deployed[0].startswith("sp")  # a spine serves every leaf
    unlimited = place(topo)
    assert one.objective.bottleneck_bytes > unlimited.objective.bottleneck_bytes


def test_budget_zero_names_budget() -> None:
    with pytest.raises(InfeasiblePlacement) as info:
        place(load(TOPO_DIR / "single.yaml"), budget=0)
    assert [b.kind for b in info.value.binding] == ["budget"]
    assert "budget 0" in str(info.value) and "job 1" in str(info.value)


def test_memory_shortage_names_switch() -> None:
    topo = load(TOPO_DIR / "single.yaml")
    topo = Topology(
        topo.name,
        topo.hosts,
        {"s1": dataclasses.replace(topo.switches["s1"], register_slots=200)},
        topo.links,
        (Job(1, ("h1", "h2"), 1000), Job(2, ("h3", "h4"), 1000)),
    )
    with pytest.raises(InfeasiblePlacement) as info:
        place(topo)
    assert [(b.kind, b.where) for b in info.value.binding] == [("memory", "s1")]
    assert "200 register slots" in str(info.value)
    too_big = topo.with_jobs([Job(1, ("h1", "h2"), 1000, window=101)])
    with pytest.raises(
        InfeasiblePlacement, match=r"needs 202 register slots .* largest programmable switch has 200"
    ):
        place(too_big)


def test_fan_in_limit_names_switch() -> None:
    hosts = {
        f"h{i}": Host(
            f"h{i}", f"10.0.{i // 200}.{i % 200 + 1}", f"02:00:00:00:{i // 200:02x}:{i % 200 + 1:02x}"
        )
        for i in range(40)
    }
    switches = {"s1": Switch("s1", "10.1.0.1", "02:00:00:01:00:01"),
                "s2": Switch("s2", "10.1.0.2", "02:00:00:01:00:02", programmable=False)}
    links = [Link(h, 0, "s1" if i < 34 else "s2", i + 1) for i, h in enumerate(hosts)]
    links.append(Link("s1", 100, "s2", 100))
    topo = Topology("fan", hosts, switches, tuple(links), (Job(1, tuple(hosts)[:34], 1000),))
    with pytest.raises(InfeasiblePlacement) as info:
        place(topo)
    assert [(b.kind, b.where) for b in info.value.binding] == [("fan-in", "s1")]
    ok = topo.with_jobs([Job(1, tuple(hosts)[:32], 1000)])
    assert place(ok).job(1).root == "s1"


def test_placement_json_round_trip() -> None:
    topo = load(TOPO_DIR / "leafspine.yaml")
    p = place(topo)
    again = Placement.from_json(p.to_json())
    assert again == p
    assert p.regions()[("sp2" if p.job(1).root == "sp2" else p.job(1).root, 1)][1] == 128


def test_fattree_k8_sixteen_jobs_proven_optimal_fast() -> None:
    topo = build_fattree(8)
    topo = topo.with_jobs(random_jobs(topo, 16, 8, seed=1))
    start = time.perf_counter()
    p = place(topo)
    elapsed = time.perf_counter() - start
    assert p.optimal and elapsed < 10.0, (p.optimal, elapsed, p.notes)
    check_invariants(topo, p)
    # no job's tree can use fewer links than its smallest shortest-path tree
    floor = 0
    for job in topo.jobs:
        floor += job.bytes_per_iteration * min(
            len({link for w in job.workers for link in topo.path_links(w, r)}) for r in topo.switches)
    assert p.objective.total_bytes >= floor


def test_time_limit_returns_valid_unproven_placement() -> None:
    topo = build_fattree(8)
    topo = topo.with_jobs(random_jobs(topo, 16, 8, seed=1))
    p = place(topo, budget=40, time_limit=1.0)
    assert not p.optimal and p.objective.deploy_cost <= 40
    check_invariants(topo, p)


def test_greedy_start_is_feasible() -> None:
    base = load(TOPO_DIR / "leafspine.yaml")
    rng = random.Random(11)
    for _ in range(20):
        topo, budget = _random_leafspine(rng, base)
        choice = greedy_choice(topo, budget)
        if choice is None:
            continue
        p = evaluate(topo, choice, budget)  # raises if memory, budget, fan-in or tree is violated
        check_invariants(topo, p)
        want = brute_force(topo, budget)
        assert want is not None and p.objective.key() >= want.objective.key()


@pytest.mark.parametrize("name", ["single.yaml", "single8.yaml"])
def test_single_switch_topologies_aggregate_every_worker_at_the_switch(name: str) -> None:
    topo = load(TOPO_DIR / name)
    p = place(topo)
    check_invariants(topo, p)
    (jp,) = p.jobs
    assert jp.root == "s1" and len(topo.job(jp.job_id).workers) == {"single.yaml": 4,
                                                                     "single8.yaml": 8}[name]

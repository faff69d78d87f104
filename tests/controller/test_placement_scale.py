"""The scalable placement (root classes, pigeonhole bound, lifting) against the exact models and
brute force, and its array routes against ``Topology``'s Dijkstra."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np
import pytest

from controller.placement import evaluate, place, place_incremental
from controller.placement.routes import RouteTable
from controller.topology import Host, Job, Link, Switch, Topology
from controller.topology_file import load
from tests.controller.bruteforce import brute_force
from tests.controller.test_placement import check_invariants
from topologies.fattree import build_fattree, random_jobs

TOPO_DIR = Path(__file__).resolve().parents[2] / "topologies"


def _random_graph(seed: int) -> Topology:
    """A connected random switch graph with parallel routes and one host per switch."""
    rng = random.Random(seed)
    n = 9
    switches = {f"s{i}": Switch(f"s{i}", f"10.1.0.{i + 1}", f"02:00:00:01:00:{i + 1:02x}") for i in range(n)}
    hosts = {f"h{i}": Host(f"h{i}", f"10.0.0.{i + 1}", f"02:00:00:00:00:{i + 1:02x}") for i in range(n)}
    pairs = {(i, i + 1) for i in range(n - 1)} | {tuple(sorted(rng.sample(range(n), 2))) for _ in range(10)}
    links = [Link(f"h{i}", 0, f"s{i}", 1) for i in range(n)]
    ports = dict.fromkeys(range(n), 2)
    for a, b in sorted(pairs):
        links.append(Link(f"s{a}", ports[a], f"s{b}", ports[b]))
        ports[a] += 1
        ports[b] += 1
    rng.shuffle(links)  # link order decides ties: vary it
    return Topology(f"rand{seed}", hosts, switches, tuple(links))


@pytest.mark.parametrize("name", ["leafspine", "fattree4", "fattree8", "rand0", "rand1", "rand2"])
def test_route_table_equals_topology_routes(name: str) -> None:
    if name == "leafspine":
        topo = load(TOPO_DIR / "leafspine.yaml")
    elif name.startswith("fattree"):
        topo = build_fattree(int(name[7:]))
    else:
        topo = _random_graph(int(name[4:]))
    routes = RouteTable.build(topo)
    for dst in topo.switches:
        for node in (*topo.switches, *topo.hosts):
            if node != dst:
                assert routes.next_hop_link(node, dst) == topo.next_hop_link(node, dst), (node, dst)


def _random_leafspine(rng: random.Random, base: Topology) -> Topology:
    switches = {n: dataclasses.replace(s, programmable=rng.random() < 0.85,
                                       register_slots=rng.choice([128, 256, 384, 4096, 4096]))
                for n, s in base.switches.items()}
    hosts = sorted(base.hosts)
    jobs = tuple(Job(i + 1, tuple(rng.sample(hosts, rng.randint(1, 6))), rng.choice([1, 2, 3]) * 1000, 64)
                 for i in range(rng.randint(1, 3)))
    return Topology("rand", base.hosts, switches, base.links, jobs)


@pytest.mark.parametrize("seed", range(3))
def test_scale_matches_brute_force_and_bounds_it(seed: int) -> None:
    """Proven answers equal brute force; every bound is below the true optimum."""
    base = load(TOPO_DIR / "leafspine.yaml")
    rng = random.Random(100 + seed)
    proven = 0
    for _ in range(8):
        topo = _random_leafspine(rng, base)
        want = brute_force(topo)
        if want is None:
            continue
        got = place(topo, method="scale")
        check_invariants(topo, got)
        wb, wt = want.objective.bottleneck_bytes, want.objective.total_bytes
        assert got.bound.bottleneck_bytes <= wb <= got.objective.bottleneck_bytes
        if got.bound.total_bytes is not None:
            assert got.bound.total_bytes <= wt
        if got.optimal:
            proven += 1
            assert (got.objective.bottleneck_bytes, got.objective.total_bytes) == (wb, wt)
        auto = place(topo)  # unproven small answers are finished by an exact model
        assert auto.optimal and auto.objective.key()[:2] == want.objective.key()[:2]
    assert proven >= 3


@pytest.mark.parametrize(
    ("k", "n_jobs", "workers", "seed"),
    [(4, 3, 4, 1), (4, 4, 6, 2), (4, 6, 3, 3), (8, 16, 8, 1), (8, 24, 12, 2), (8, 30, 5, 3)],
)
def test_scale_equals_exact_model_on_fattrees(k: int, n_jobs: int, workers: int, seed: int) -> None:
    base = build_fattree(k)
    topo = base.with_jobs(random_jobs(base, n_jobs, workers, seed=seed))
    got = place(topo, method="scale", time_limit=20)
    exact = place(topo, method="general" if k == 4 and n_jobs <= 3 else "assign", time_limit=30)
    check_invariants(topo, got)
    if exact.optimal:
        assert got.bound.bottleneck_bytes <= exact.objective.bottleneck_bytes
        assert got.objective.bottleneck_bytes == exact.objective.bottleneck_bytes
        if got.optimal:
            assert got.objective.total_bytes == exact.objective.total_bytes
    assert got.optimal


def test_pigeonhole_bound_is_tight_and_valid() -> None:
    """k = 4 has two core groups: three heavy jobs that pairwise share edge switches cannot all
    take distinct groups, so some edge uplink carries two of them.  The bound must say so (it is
    above the host bound) and never exceed the exact optimum."""
    topo = build_fattree(4).with_jobs([
        Job(1, ("h0_0_0", "h1_0_0", "h2_0_0"), 4000),
        Job(2, ("h0_0_1", "h1_1_0", "h3_0_0"), 4000),
        Job(3, ("h1_0_1", "h1_1_1", "h3_0_1", "h0_1_0"), 4000),
        Job(4, ("h2_1_0", "h3_1_1"), 1000)])
    got = place(topo, method="scale")
    exact = place(topo, method="assign")
    assert exact.optimal
    assert got.bound.bottleneck_bytes <= exact.objective.bottleneck_bytes == got.objective.bottleneck_bytes
    assert got.optimal and got.bound.bottleneck_bytes > 4000
    assert any("pigeonhole" in n and "8000" in n for n in got.notes), got.notes


def test_scale_reports_build_time_and_bounds_in_json() -> None:
    base = build_fattree(8)
    topo = base.with_jobs(random_jobs(base, 8, 8, seed=4))
    p = place(topo)
    doc = p.to_dict()
    assert p.solver == "cp-sat/root-classes" and p.optimal
    assert 0 < doc["build_time_s"] <= doc["solve_time_s"]
    assert doc["bound"]["bottleneck_bytes"] == doc["objective"]["bottleneck_bytes"]
    assert doc["gap"] == {"bottleneck": 0.0, "total": 0.0}
    assert np.isfinite(p.solve_time_s)


def _two_jobs_on_one_uplink() -> tuple[Topology, object]:
    """k = 4, jobs 1 and 2 share edge switches e0_0 and e1_0 and both root at core c0_0, so the
    uplinks e0_0-a0_0 and e1_0-a1_0 carry both: a poor earlier placement."""
    topo = build_fattree(4).with_jobs(
        [Job(1, ("h0_0_0", "h1_0_0"), 4000), Job(2, ("h0_0_1", "h1_0_1"), 4000)]
    )
    before = evaluate(topo, {1: ("c0_0", {"c0_0"}), 2: ("c0_0", {"c0_0"})})
    assert before.objective.bottleneck_bytes == 8000
    return topo, before


def test_incremental_moves_a_job_only_when_that_lowers_the_bottleneck() -> None:
    topo, before = _two_jobs_on_one_uplink()
    grown = topo.with_jobs([*topo.jobs, Job(3, ("h2_0_0", "h3_0_0"), 1000)])
    after = place_incremental(grown, before, time_limit=10)
    check_invariants(grown, after)
    assert after.objective.bottleneck_bytes == 4000 == after.bound.bottleneck_bytes
    assert sum(after.job(j).root != before.job(j).root for j in (1, 2)) == 1  # one move is enough
    assert "1 earlier job(s) moved" in after.notes[-1]


def test_incremental_keeps_other_trees_when_moving_gains_nothing() -> None:
    base = build_fattree(8)
    jobs = random_jobs(base, 13, 8, seed=3)
    before = place(base.with_jobs(jobs[:-1]))
    after = place_incremental(base.with_jobs(jobs), before, time_limit=10)
    check_invariants(base.with_jobs(jobs), after)
    full = place(base.with_jobs(jobs))
    assert after.objective.bottleneck_bytes == full.objective.bottleneck_bytes
    for jp in before.jobs:
        assert after.job(jp.job_id).root == jp.root
    removed = place_incremental(base.with_jobs(jobs[1:]), after, time_limit=10)
    assert all(removed.job(j.id).root == after.job(j.id).root for j in jobs[1:])


def test_budget_answers_carry_the_unbudgeted_optimum_as_bound() -> None:
    """Dropping the budget is a relaxation: its proven optimum bounds the budgeted answer."""
    base = build_fattree(8)
    topo = base.with_jobs(random_jobs(base, 16, 8, seed=1))
    free = place(topo)
    budgeted = place(topo, budget=20, time_limit=2.0)
    assert free.optimal and not budgeted.optimal
    assert budgeted.bound.bottleneck_bytes == free.objective.bottleneck_bytes
    assert budgeted.objective.bottleneck_bytes >= budgeted.bound.bottleneck_bytes
    small = load(TOPO_DIR / "leafspine.yaml")
    for budget in (1, 2):
        want = brute_force(small, budget)
        got = place(small, budget)
        assert got.bound.bottleneck_bytes <= want.objective.bottleneck_bytes == got.objective.bottleneck_bytes


def test_scale_repairs_when_register_memory_binds() -> None:
    """Two regions per switch: full aggregation does not fit; the answer aggregates partially,
    stays valid (memory, fan-in, tree) and is not claimed optimal beyond its bound."""
    base = build_fattree(8, register_slots=256)
    topo = base.with_jobs(random_jobs(base, 24, 8, seed=2))
    p = place(topo, method="scale", time_limit=10)
    check_invariants(topo, p)
    assert p.bound.bottleneck_bytes <= p.objective.bottleneck_bytes
    assert max(sum(1 for jp in p.jobs for a in jp.aggregators if a.switch == s) for s in topo.switches) <= 2

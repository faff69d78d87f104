"""Units, fabrics, routes and the parts' numbers (no simulation)."""

from __future__ import annotations

import pytest

from controller.topology_file import load
from sim.fabric import FabricError, assign_jobs, build_topology, fattree, leafspine, make_fabric
from sim.parts import HOST_PROFILES, SwitchModel, auto_window, ring_frame_bytes, window_rate
from sim.routes import Router
from sim.units import UnitError, format_rate, parse_rate_bps, parse_seconds


@pytest.mark.parametrize(("text", "bps"), [("100gbit", 100e9), ("10Mbit", 10e6), ("400g", 400e9),
                                           ("1.5kbit", 1500.0), ("1e9", 1e9)])
def test_rates_parse(text: str, bps: float) -> None:
    assert parse_rate_bps(text) == pytest.approx(bps)


@pytest.mark.parametrize(("text", "s"), [("1us", 1e-6), ("500ns", 5e-7), ("2ms", 2e-3), ("0.25", 0.25)])
def test_durations_parse(text: str, s: float) -> None:
    assert parse_seconds(text) == pytest.approx(s)


@pytest.mark.parametrize("bad", ["fast", "10qbit", "-5gbit", "0gbit", ""])
def test_bad_rates_are_named(bad: str) -> None:
    with pytest.raises(UnitError, match="rate"):
        parse_rate_bps(bad)


def test_rate_labels_round_trip() -> None:
    assert format_rate(100e9) == "100gbit" and format_rate(20e6) == "20mbit"


@pytest.mark.parametrize(("k", "hosts", "switches", "links"), [(4, 16, 20, 48), (8, 128, 80, 384),
                                                               (16, 1024, 320, 3072)])
def test_fattree_sizes(k: int, hosts: int, switches: int, links: int) -> None:
    topo = fattree(k)
    assert (len(topo.hosts), len(topo.switches), len(topo.links)) == (hosts, switches, links)


def test_leafspine_and_spec_errors() -> None:
    topo = build_topology("leafspine:leaves=3,spines=2,hosts=4")
    assert (len(topo.hosts), len(topo.switches), len(topo.links)) == (12, 5, 18)
    assert leafspine(2, 1, 2).name == "leafspine2x1x2"
    for bad in ("fattree:k=5", "fattree:q=4", "leafspine:leaves=x", "no/such/file.yaml"):
        with pytest.raises(FabricError):
            build_topology(bad)


def test_jobs_split_workers_and_keep_file_jobs() -> None:
    topo = assign_jobs(fattree(4), 16, 2, 4000, 32)
    assert [len(j.workers) for j in topo.jobs] == [8, 8]
    assert set(topo.jobs[0].workers).isdisjoint(topo.jobs[1].workers)
    ls = load("topologies/leafspine.yaml")
    assert [j.id for j in assign_jobs(ls, None, 1, 4000, 128).jobs] == [1, 2]
    assert [j.id for j in assign_jobs(ls, None, 1, 4000, 128, only=2).jobs] == [2]
    with pytest.raises(FabricError):
        assign_jobs(fattree(4), 17, 1, 4000, 32)
    with pytest.raises(FabricError):
        assign_jobs(fattree(4), 4, 3, 4000, 32)


def test_fabric_rates_from_file_or_override() -> None:
    f = make_fabric("topologies/leafspine.yaml", None, 1e-6)
    assert sorted(set(f.rate_bps)) == [10e9, 40e9]
    assert set(make_fabric("topologies/leafspine.yaml", 20e6, 1e-6).rate_bps) == {20e6}


def test_router_follows_the_controllers_routes() -> None:
    """Same links, hop for hop, as controller.topology's own unique shortest paths."""
    topo = fattree(4)
    router = Router(topo)
    names = list(topo.hosts) + ["c0_0", "a1_1"]
    for src in names[::3]:
        for dst in names[1::4]:
            if src != dst:
                hops, entered = router.path(src, dst)
                assert [i for i, _ in hops] == topo.path_links(src, dst)
                assert entered == [n for n in topo.path(src, dst)[1:] if n in topo.switches]


def test_window_and_host_rates() -> None:
    sw = SwitchModel(lanes=32)
    assert sw.frame_bytes() == 14 + 20 + 8 + 14 + 128
    assert window_rate(64, 184, 10e-6) == pytest.approx(64 * 184 / 10e-6)
    assert auto_window(100e9, 184, 10e-6, 2048) == 1024          # 679 packets in flight needed
    assert auto_window(100e9, 184, 10e-6, 256) == 256            # the register pool caps it
    assert sw.max_window(jobs_on_switch=4) == 4096 // 8
    host = HOST_PROFILES["this-machine"]
    assert host.direction_rate(1000) == pytest.approx(1000 / 8.2e-6)
    assert ring_frame_bytes(346) == 14 + 28 + 1400


def test_recorded_emulator_runs_give_the_last_starters_time() -> None:
    """validate compares with the worker that started last (min over workers) and keeps e2e's max."""
    import json
    from pathlib import Path

    from sim.validate import EMULATOR_BW, RECORDED, _measured_seconds

    for name in ("single", "leafspine"):
        record = json.loads((RECORDED / f"sim_emulator_{name}.json").read_text())
        measured = _measured_seconds(record["e2e"])
        assert set(measured) == {"ring", "sketch_ring", "dense_ina", "dhc"}
        for run in record["e2e"]["runs"]:
            last, slowest = measured[run["mode"]]
            assert last == min(run["seconds_per_worker"].values()) and slowest == run["seconds"]
        assert record["bw"] == EMULATOR_BW and Path(RECORDED).is_dir()
        # the recording says which delivery engine the hosts ran and how many runs the median has
        assert record["host_engine"] in ("python", "native") and record["repeat"] >= 1
        assert all(len(run["seconds_runs"]) == record["repeat"] for run in record["e2e"]["runs"])

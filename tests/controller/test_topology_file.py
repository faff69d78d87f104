"""Topology files: shipped files load, round-trip, and every schema error names file, path, problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from controller.errors import TopologyError
from controller.topology_file import dump_yaml, from_dict, load, to_dict
from topologies.fattree import build_fattree

TOPO_DIR = Path(__file__).resolve().parents[2] / "topologies"


@pytest.mark.parametrize("name,switches,hosts", [("single", 1, 4), ("leafspine", 6, 8), ("fattree4", 20, 16)])
def test_shipped_files_load(name: str, switches: int, hosts: int) -> None:
    topo = load(TOPO_DIR / f"{name}.yaml")
    assert (len(topo.switches), len(topo.hosts)) == (switches, hosts)
    assert topo.jobs, "every shipped topology carries at least one job"


def test_fattree4_file_matches_generator() -> None:
    shipped = load(TOPO_DIR / "fattree4.yaml")
    generated = build_fattree(4)
    assert shipped.switches == generated.switches
    assert shipped.hosts == generated.hosts
    assert shipped.links == generated.links


def test_dump_load_round_trip(tmp_path: Path) -> None:
    topo = load(TOPO_DIR / "leafspine.yaml")
    path = tmp_path / "copy.yaml"
    path.write_text(dump_yaml(topo, header="copy"))
    again = load(path)
    assert to_dict(again) == to_dict(topo)
    jpath = tmp_path / "copy.json"
    jpath.write_text(json.dumps(to_dict(topo)))
    assert to_dict(load(jpath)) == to_dict(topo)


def _base() -> dict:
    return {
        "name": "t",
        "switches": [{"name": "s1", "ip": "10.0.0.254", "mac": "02:00:00:00:00:fe"}],
        "hosts": [{"name": "h1", "ip": "10.0.0.1", "mac": "02:00:00:00:00:01"},
                  {"name": "h2", "ip": "10.0.0.2", "mac": "02:00:00:00:00:02"}],
        "links": [{"a": "h1", "a_port": 0, "b": "s1", "b_port": 1},
                  {"a": "h2", "a_port": 0, "b": "s1", "b_port": 2}],
        "jobs": [{"id": 1, "workers": ["h1", "h2"], "bytes_per_iteration": 1000}],
    }


def _problems(doc: dict, tmp_path: Path) -> tuple[str, list[tuple[str, str]]]:
    path = tmp_path / "topo.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(TopologyError) as info:
        load(path)
    assert str(path) in str(info.value)
    return str(info.value), [(p.path, p.message) for p in info.value.problems]


def test_defaults_and_valid_base(tmp_path: Path) -> None:
    topo = from_dict(_base())
    s1 = topo.switches["s1"]
    assert (s1.programmable, s1.register_slots, s1.deploy_cost, s1.grpc_port) == (True, 4096, 1, None)
    assert topo.jobs[0].window == 64 and topo.jobs[0].lanes == 32
    assert topo.attachment("h2").switch_port == 2


@pytest.mark.parametrize("mutate,path,fragment", [
    (lambda d: d["switches"][0].pop("ip"), "switches[0]", "missing required key 'ip'"),
    (lambda d: d["hosts"][1].update(ip="10.0.0.300"), "hosts[1].ip", "not an IPv4 address"),
    (lambda d: d["hosts"][1].update(ip="10.0.0.1"), "hosts[1].ip", "already used by h1"),
    (lambda d: d["hosts"][0].update(mac="02:00:00:00:00"), "hosts[0].mac", "not a MAC address"),
    (lambda d: d["hosts"][1].update(name="h1"), "hosts[1].name", "duplicate node name"),
    (lambda d: d["switches"][0].update(register_slots=-5), "switches[0].register_slots", "out of range"),
    (lambda d: d["switches"][0].update(programmable="yes"), "switches[0].programmable", "true or false"),
    (lambda d: d["switches"][0].update(colour="red"), "switches[0].colour", "unknown key"),
    (lambda d: d["links"][1].update(b="s9"), "links[1].b", "unknown node 's9'"),
    (lambda d: d["links"][1].update(b_port=1), "links[1].b_port", "already used"),
    (lambda d: d["links"][0].update(b_port=0), "links[0].b_port", "out of range 1..511"),
    (lambda d: d["links"][0].update(bandwidth_gbps=0), "links[0].bandwidth_gbps", "positive number"),
    (lambda d: d["links"].append({"a": "h1", "a_port": 1, "b": "s1", "b_port": 3}),
     "hosts[0]", "exactly one"),
    (lambda d: d["jobs"][0].update(workers=["h1", "s1"]), "jobs[0].workers[1]", "is a switch"),
    (lambda d: d["jobs"][0].update(workers=["h1", "h1"]), "jobs[0].workers[1]", "listed twice"),
    (lambda d: d["jobs"][0].update(id=70000), "jobs[0].id", "out of range"),
    (lambda d: d["jobs"][0].update(window=0), "jobs[0].window", "out of range"),
    (lambda d: d["jobs"].append(dict(d["jobs"][0])), "jobs[1].id", "duplicate job id"),
    (lambda d: d.update(routers=[]), "routers", "unknown top-level key"),
    (lambda d: d.update(links={}), "links", "expected a list"),
])
def test_schema_errors_name_path_and_problem(tmp_path: Path, mutate, path: str, fragment: str) -> None:
    doc = _base()
    mutate(doc)
    text, problems = _problems(doc, tmp_path)
    assert any(p == path and fragment in msg for p, msg in problems), text
    assert f"{path}: " in text


def test_disconnected_network_is_named(tmp_path: Path) -> None:
    doc = _base()
    doc["switches"].append({"name": "s2", "ip": "10.0.1.254", "mac": "02:00:00:00:01:fe"})
    doc["hosts"].append({"name": "h3", "ip": "10.0.1.1", "mac": "02:00:00:00:01:01"})
    doc["links"].append({"a": "h3", "a_port": 0, "b": "s2", "b_port": 1})
    text, problems = _problems(doc, tmp_path)
    assert problems[0][0] == "links" and "not connected" in problems[0][1] and "s2" in problems[0][1]


def test_yaml_syntax_and_duplicate_keys_report_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("switches:\n  - {name: s1, name: s2}\n")
    with pytest.raises(TopologyError) as info:
        load(bad)
    assert "duplicate key 'name'" in str(info.value) and "line 2" in str(info.value)
    bad.write_text("switches: [\n")
    with pytest.raises(TopologyError) as info:
        load(bad)
    assert "YAML syntax" in str(info.value) and str(bad) in str(info.value)


def test_json_syntax_error_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"switches": [}')
    with pytest.raises(TopologyError, match="JSON syntax"):
        load(bad)
    with pytest.raises(TopologyError, match="cannot read file"):
        load(tmp_path / "absent.yaml")

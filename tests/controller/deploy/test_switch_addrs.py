"""``--switch-addr-map``: inline and file forms, topology defaults, errors naming the problem."""

from __future__ import annotations

import json

import pytest

from controller.deploy.errors import PlanError
from controller.p4rt_client import SwitchAddress
from controller.switch_addrs import parse_addr_map, switch_addresses
from controller.topology_file import load


def test_inline_and_file_forms(tmp_path) -> None:
    assert parse_addr_map("s1=127.0.0.1:50051, s2=10.0.0.9:9559@2") == {
        "s1": SwitchAddress("s1", "127.0.0.1:50051", 0), "s2": SwitchAddress("s2", "10.0.0.9:9559", 2)}
    f = tmp_path / "map.json"
    f.write_text(json.dumps({"s1": "localhost:1@3", "s2": {"addr": "h:2", "device_id": 4}}))
    assert parse_addr_map(str(f)) == {
        "s1": SwitchAddress("s1", "localhost:1", 3),
        "s2": SwitchAddress("s2", "h:2", 4),
    }
    y = tmp_path / "map.yaml"
    y.write_text("s1: 'a:5'\n")
    assert parse_addr_map(str(y)) == {"s1": SwitchAddress("s1", "a:5", 0)}


@pytest.mark.parametrize("text, message", [
    ("s1", "'s1' is not NAME=HOST:PORT"),
    ("s1=localhost", "'localhost' is not HOST:PORT"),
    ("s1=h:70000", "'h:70000' is not HOST:PORT"),
    ("s1=h:1@x", "device id 'x' is not a number"),
    ("missing.json", "missing.json: cannot read"),
])
def test_bad_maps_are_named(text, message) -> None:
    with pytest.raises(PlanError, match=message):
        parse_addr_map(text)


def test_topology_defaults_and_unknown_switch() -> None:
    topo = load("topologies/single.yaml")
    assert switch_addresses(topo) == {}  # single.yaml gives no grpc_port
    assert switch_addresses(topo, "s1=127.0.0.1:9559@7")["s1"].device_id == 7
    with pytest.raises(PlanError, match="names switches not in topology single: s9"):
        switch_addresses(topo, "s9=127.0.0.1:1")

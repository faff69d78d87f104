"""The smaller problems of issue 11, each with the input that used to get through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from controller.cli import main as ctl
from controller.errors import TopologyError
from controller.topology_file import from_dict, load
from tests.robustness.p4rt_fixture import running_switch

ROOT = Path(__file__).resolve().parents[2]
SINGLE = ROOT / "topologies" / "single.yaml"


def _doc() -> dict:
    return yaml.safe_load(SINGLE.read_text())


def _problems(doc: dict) -> str:
    with pytest.raises(TopologyError) as info:
        from_dict(doc, "t.yaml")
    return str(info.value)


@pytest.mark.parametrize("lanes", [3, 5, 7, 96, 255, 300])
def test_unsupported_lanes_rejected_naming_the_supported(lanes: int) -> None:
    doc = _doc()
    doc["jobs"][0]["lanes"] = lanes
    msg = _problems(doc)
    assert f"jobs[0].lanes: {lanes} lanes per packet" in msg and "1, 2, 4, 8, 16, 32, 64, 128, 256" in msg


@pytest.mark.parametrize("lanes", [384, 512, 4096])
def test_lanes_over_the_mtu_rejected_naming_the_mtu(lanes: int) -> None:
    doc = _doc()
    doc["jobs"][0]["lanes"] = lanes
    msg = _problems(doc)
    assert f"jobs[0].lanes: {lanes} lanes per packet make" in msg and "1500-byte Ethernet MTU" in msg


@pytest.mark.parametrize("lanes", [1, 2, 4, 8, 16, 32, 64, 128, 256])
def test_supported_lanes_accepted(lanes: int) -> None:
    doc = _doc()
    doc["jobs"][0]["lanes"] = lanes
    assert from_dict(doc).jobs[0].lanes == lanes


@pytest.mark.parametrize("port", [255, 511])
def test_reserved_switch_ports_rejected(port: int) -> None:
    doc = _doc()
    doc["links"][0]["b_port"] = port
    assert f"links[0].b_port: port {port} is reserved" in _problems(doc)


@pytest.mark.parametrize("ip", ["0.0.0.0", "255.255.255.255", "224.0.0.1", "127.0.0.1", "240.0.0.9"])
@pytest.mark.parametrize("kind", ["hosts", "switches"])
def test_unusable_addresses_rejected(kind: str, ip: str) -> None:
    doc = _doc()
    doc[kind][0]["ip"] = ip
    assert f"{kind}[0].ip: {ip} is" in _problems(doc)


def test_non_utf8_topology_names_the_file(tmp_path: Path) -> None:
    f = tmp_path / "t.yaml"
    f.write_bytes(SINGLE.read_bytes().replace(b"single", b"caf\xe9"))
    with pytest.raises(TopologyError, match="not UTF-8"):
        load(f)
    assert ctl(["place", "--topo", str(f)]) == 2


def test_binary_placement_is_a_clear_error(tmp_path: Path, capsys) -> None:
    f = tmp_path / "p.json"
    f.write_bytes(b"\x00\xff\xfe" * 100)
    rc = ctl(["deploy", "--topo", str(SINGLE), "--placement", str(f), "--switch-addr-map", "s1=127.0.0.1:9"])
    assert rc == 2 and f"placement {f}: not a placement" in capsys.readouterr().err


def test_non_p4_program_is_a_clear_error(tmp_path: Path, capsys) -> None:
    placement = tmp_path / "p.json"
    assert ctl(["place", "--topo", str(SINGLE), "--out", str(placement), "--json"]) == 0
    prog = tmp_path / "x.p4"
    prog.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(200)))
    capsys.readouterr()
    rc = ctl(["deploy", "--topo", str(SINGLE), "--placement", str(placement), "--program", str(prog),
              "--switch-addr-map", "s1=127.0.0.1:9", "--timeout", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and f"P4 program {prog} does not compile" in err and "not a P4 source file" in err


def test_infeasible_placement_names_the_file(capsys) -> None:
    assert ctl(["place", "--topo", str(SINGLE), "--budget", "0", "--json"]) == 3
    out, err = capsys.readouterr()
    assert f"topology {SINGLE}" in err and json.loads(out)["file"] == str(SINGLE)


def test_removing_an_unknown_job_fails(capsys) -> None:
    with running_switch() as sw:
        sw.conn.close()   # the CLI becomes primary with the same election id
        rc = ctl(["jobs", "remove", "--topo", str(SINGLE), "--job", "99",
                  "--switch-addr-map", f"s1={sw.addr}", "--timeout", "5"])
    err = capsys.readouterr().err
    assert rc != 0 and "job 99 does not exist" in err and "removed" not in err.replace("nothing removed", "")

"""Deployment against real softswitch processes over P4Runtime (gRPC on loopback, no data ports):
read-back equals the intended state, a second deploy writes nothing, ``jobs remove`` deletes
exactly one job, errors name the switch and the entry, and the dhc-ctl subcommands work."""

from __future__ import annotations

import dataclasses
import json

import pytest

from controller.cli import main
from controller.deploy.apply import deploy, read_state, remove_job, to_updates
from controller.deploy.errors import ConflictError, SwitchError, WriteError
from controller.deploy.state_diff import diff
from controller.intent import SwitchState
from controller.p4rt_client import MultiSwitchClient, SwitchAddress
from controller.placement import place
from controller.plan import intended_state
from controller.topology_file import load
from dhcwire.p4names import T_LPM
from hostagent.manifest import load_endpoint
from tests.controller.deploy.switches import SoftswitchProcs

TOPO = "topologies/leafspine.yaml"


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    topo = load(TOPO)
    placement = place(topo)
    procs = SoftswitchProcs(list(topo.switches), tmp_path_factory.mktemp("softswitch-logs"))
    try:
        deploy(topo, placement, procs.addresses)
        yield topo, placement, procs
    finally:
        procs.stop()


def read_all(addrs: dict[str, SwitchAddress]) -> dict[str, SwitchState]:
    with MultiSwitchClient(addrs) as c:
        return c.run(read_state)


def assert_equal(actual: SwitchState, intended: SwitchState) -> None:
    assert {k: e.value for k, e in actual.entries.items()} == {
        k: e.value for k, e in intended.entries.items()
    }
    assert {k: e.owner for k, e in actual.entries.items()} == {
        k: e.owner for k, e in intended.entries.items()
    }
    assert actual.groups == intended.groups
    assert actual.defaults == intended.defaults


def test_read_back_equals_intended(net) -> None:
    topo, placement, procs = net
    intended = intended_state(topo, placement)
    actual = read_all(procs.addresses)
    assert set(actual) == set(topo.switches)
    for name in topo.switches:
        assert_equal(actual[name], intended[name])


def test_second_deploy_writes_nothing(net) -> None:
    topo, placement, procs = net
    with MultiSwitchClient(procs.addresses) as client:
        report = deploy(topo, placement, procs.addresses, client=client)
        assert report.writes == 0
        assert client.updates_sent == 0 and client.pipelines_pushed == 0
        assert sum(c.write_rpcs for c in client.connections.values()) == 0


def test_remove_job_deletes_exactly_that_job(net) -> None:
    topo, placement, procs = net
    intended = intended_state(topo, placement)
    report = remove_job(topo, procs.addresses, 2)
    expected = {n: st.restricted({1}, base=True) for n, st in intended.items()}
    assert report.writes == sum(len(st.entries) + len(st.groups) for st in intended.values()) - sum(
        len(st.entries) + len(st.groups) for st in expected.values())
    actual = read_all(procs.addresses)
    for name in topo.switches:
        assert_equal(actual[name], expected[name])
    # and adding it back restores the full state, touching only job 2
    with MultiSwitchClient(procs.addresses) as client:
        report = deploy(topo, placement, procs.addresses, jobs={2}, pipeline=False, client=client)
    assert report.writes == client.updates_sent > 0
    actual = read_all(procs.addresses)
    for name in topo.switches:
        assert_equal(actual[name], intended[name])


def test_rejected_updates_name_switch_and_entry(net) -> None:
    topo, placement, procs = net
    intended = intended_state(topo, placement)["l1"]
    # pretend l1 were empty: every INSERT of an existing key is refused by the switch
    changes = [c for c in diff(intended, SwitchState("l1")) if getattr(c.item, "table", "") == T_LPM][:3]
    with MultiSwitchClient({"l1": procs.addresses["l1"]}) as client:
        conn = client.connections["l1"]
        conn.load_p4info()
        with pytest.raises(WriteError) as exc:
            conn.write(to_updates(conn.names, changes))
    failures = exc.value.failures
    assert len(failures) == 3
    for f, c in zip(failures, changes, strict=True):
        assert f.switch == "l1" and f.update == "INSERT" and f.code == "ALREADY_EXISTS"
        assert f.entity == c.item.describe() and T_LPM in f.entity and "dst_addr=" in f.entity
    assert "l1: INSERT DhcIngress.forwarding.ipv4_lpm [dst_addr=" in str(exc.value)


def test_conflicting_region_is_refused_before_writing(net) -> None:
    topo, placement, procs = net
    root = placement.job(2).root
    # a placement file in which job 2 took job 1's cells on the root (and job 1 moved away on
    # paper only): deploying job 2 alone would overwrite job 1's live region, so it is refused
    jobs = []
    for jp in placement.jobs:
        aggs = tuple(dataclasses.replace(a, region_base={1: 1024, 2: 0}[jp.job_id]) if a.switch == root else a
                     for a in jp.aggregators)
        jobs.append(dataclasses.replace(jp, aggregators=aggs))
    moved = dataclasses.replace(placement, jobs=tuple(jobs))
    remove_job(topo, procs.addresses, 2)
    try:
        with MultiSwitchClient(procs.addresses) as client:
            with pytest.raises(
                ConflictError, match=rf"{root}: register region 0..127 of job 2 overlaps 0..127 of job 1"
            ):
                deploy(topo, moved, procs.addresses, jobs={2}, pipeline=False, client=client)
            assert client.updates_sent == 0
    finally:
        deploy(topo, placement, procs.addresses, jobs={2}, pipeline=False)
    assert_equal(read_all(procs.addresses)[root], intended_state(topo, placement)[root])


def test_unreachable_switch_is_named() -> None:
    from tests.controller.deploy.switches import free_port

    addr = SwitchAddress("sp9", f"127.0.0.1:{free_port()}", 0)
    with pytest.raises(SwitchError, match=r"switch sp9: no P4Runtime server answered"):
        with MultiSwitchClient({"sp9": addr}, timeout=0.5):
            pass


def _addr_map(procs) -> str:
    return ",".join(f"{n}={a.addr}@{a.device_id}" for n, a in procs.addresses.items())


def test_cli_deploy_status_and_manifest(net, tmp_path, capsys) -> None:
    topo, placement, procs = net
    ppath = tmp_path / "placement.json"
    ppath.write_text(placement.to_json())
    manifest = tmp_path / "jobs.json"
    rc = main(["deploy", "--topo", TOPO, "--placement", str(ppath), "--switch-addr-map", _addr_map(procs),
               "--manifest", str(manifest), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["writes"] == 0 and not any(s["pipeline_pushed"] for s in doc["switches"].values())
    ep, n = load_endpoint(manifest, "h3", job_id=2)
    assert n == 3 and ep.switch_ip == topo.switches[placement.job(2).root].ip

    rc = main(["status", "--topo", TOPO, "--switch-addr-map", _addr_map(procs), "--json"])
    st = json.loads(capsys.readouterr().out)
    assert rc == 0
    by_switch = {s["switch"]: s for s in st["switches"]}
    assert set(by_switch) == set(topo.switches)
    for jp in placement.jobs:
        for a in jp.aggregators:
            (js,) = [j for j in by_switch[a.switch]["jobs"] if j["job_id"] == jp.job_id]
            assert js["role"] == ("root" if a.parent is None else "aggregator")
            assert js["fan_in"] == len(a.children) and js["contributions"] == 0
    assert all(not s["drops"] and s["error"] is None for s in st["switches"])

    rc = main(["status", "--topo", TOPO, "--switch-addr-map", _addr_map(procs)])
    out = capsys.readouterr().out
    assert rc == 0 and "per-job counters" in out and "drops" in out


def test_cli_errors_have_exit_codes(net, tmp_path, capsys) -> None:
    topo, placement, procs = net
    ppath = tmp_path / "placement.json"
    ppath.write_text(placement.to_json())
    from tests.controller.deploy.switches import free_port

    dead = f"l1=127.0.0.1:{free_port()}"
    rc = main(["deploy", "--topo", TOPO, "--placement", str(ppath), "--switch-addr-map",
               _addr_map(procs) + "," + dead, "--timeout", "0.5", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 5 and doc["error"] == "SwitchError" and "switch l1" in doc["message"]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    rc = main(["deploy", "--topo", TOPO, "--placement", str(bad), "--switch-addr-map", _addr_map(procs)])
    err = capsys.readouterr().err
    assert rc == 2 and f"placement {bad}:1:2: not JSON" in err
    rc = main(["status", "--topo", TOPO, "--switch-addr-map", dead, "--timeout", "0.5", "--json"])
    st = json.loads(capsys.readouterr().out)
    assert rc == 8 and "switch l1" in st["switches"][0]["error"]
    rc = main(["shell", "l2", "--topo", TOPO, "--switch-addr-map", _addr_map(procs), "--print-command"])
    out = capsys.readouterr().out
    assert rc == 0 and f"-m p4runtime_sh --grpc-addr {procs.addresses['l2'].addr}" in out


def test_pipeline_from_files_is_the_same_pipeline(net, tmp_path, capsys) -> None:
    """--p4info/--device-config (how a BMv2 deployment passes p4c's output): the same P4Info and
    device config as the built-in compile give the same cookie, so nothing is pushed."""
    from google.protobuf import text_format

    from controller.pipeline import PROGRAM, SoftswitchBuild

    topo, placement, procs = net
    built = SoftswitchBuild(PROGRAM).config(topo.jobs[0].lanes, 4096, 256)
    p4info, config = built.p4info, built.device_config
    (tmp_path / "dhc.p4info.txtpb").write_text(text_format.MessageToString(p4info))
    (tmp_path / "dhc.p4").write_bytes(config)
    ppath = tmp_path / "placement.json"
    ppath.write_text(placement.to_json())
    rc = main(
        [
            "deploy",
            "--topo",
            TOPO,
            "--placement",
            str(ppath),
            "--switch-addr-map",
            _addr_map(procs),
            "--p4info",
            str(tmp_path / "dhc.p4info.txtpb"),
            "--device-config",
            str(tmp_path / "dhc.p4"),
            "--json",
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["writes"] == 0
    assert not any(s["pipeline_pushed"] for s in doc["switches"].values())
    rc = main(["deploy", "--topo", TOPO, "--placement", str(ppath), "--switch-addr-map", _addr_map(procs),
               "--p4info", str(tmp_path / "dhc.p4"), "--device-config", str(tmp_path / "dhc.p4")])
    assert rc == 2 and "not a P4Info" in capsys.readouterr().err


def test_cli_jobs_remove_then_add(net, tmp_path, capsys) -> None:
    topo, placement, procs = net
    ppath = tmp_path / "placement.json"
    ppath.write_text(placement.to_json())
    root = placement.job(2).root
    n2 = sum(1 for e in intended_state(topo, placement)[root].entries.values() if e.owner == 2) + 1  # + group
    rc = main(
        ["jobs", "remove", "--topo", TOPO, "--job", "2", "--switch-addr-map", _addr_map(procs), "--json"]
    )
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["writes"] == n2 and doc["switches"][root]["deleted"] == n2
    rc = main(["jobs", "add", "--topo", TOPO, "--placement", str(ppath), "--job", "2",
               "--switch-addr-map", _addr_map(procs)])
    out = capsys.readouterr().out
    assert rc == 0 and "job 2 added" in out and f"{n2} update(s) written" in out
    rc = main(["jobs", "add", "--topo", TOPO, "--placement", str(ppath), "--job", "9",
               "--switch-addr-map", _addr_map(procs), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 2 and "job(s) [9] are not in the placement" in doc["message"]
    assert_equal(read_all(procs.addresses)[root], intended_state(topo, placement)[root])

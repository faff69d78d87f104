"""Every CLI value is checked where it is read, with the same checks for a manifest as for a
topology (issue 30, item 5): no traceback, no traffic from values a topology would refuse, and a
``--dry-run`` that fails where the real run would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.errors import TopologyError
from controller.topology_file import from_dict
from dhcwire import limits
from hostagent.manifest import ManifestError, load_endpoint, write_manifest
from tests.robustness.test_cli_bad_files import SINGLE, _main, _placement

DEAD = "s1=127.0.0.1:9"
JOB = {"job_id": 7, "window": 4, "lanes": 4,
       "workers": {"h1": {"ip": "10.0.0.1", "child_id": 0, "switch_ip": "10.0.100.1"},
                   "h2": {"ip": "10.0.0.2", "child_id": 1, "switch_ip": "10.0.100.1"}}}


def _run(cli: str, argv: list[str], capsys) -> tuple[int, str]:
    try:
        rc = _main(cli)(argv)
    except SystemExit as exit_:
        rc = exit_.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return rc, err


# ------------------------------------------------------------------ --switch-addr-map
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
@pytest.mark.parametrize("command", [["status"], ["deploy", "--placement", "{P}"],
                                     ["jobs", "remove", "--job", "1"]])
def test_addr_map_that_is_not_utf8(command, suffix, tmp_path: Path, capsys) -> None:
    bad = tmp_path / f"map{suffix}"
    bad.write_bytes(b"s1: \xff\xfe127.0.0.1:9559\n")
    argv = [a.replace("{P}", _placement(tmp_path)) for a in command]
    argv += ["--topo", SINGLE, "--switch-addr-map", str(bad), "--timeout", "1"]
    rc, err = _run("dhc-ctl", argv, capsys)
    assert rc not in (0, None) and "not UTF-8" in err and str(bad) in err


@pytest.mark.parametrize("spec", ["s1=127.0.0.1:٩٥٥٩", "s1=127.0.0.1:9559@²", "s1=127.0.0.1:70000"])
def test_addr_map_inline_values(spec: str, capsys) -> None:
    argv = ["status", "--topo", SINGLE, "--switch-addr-map", spec, "--timeout", "1"]
    rc, err = _run("dhc-ctl", argv, capsys)
    assert rc not in (0, None) and "--switch-addr-map" in err


# ------------------------------------------------------------------ manifest = topology checks
BAD_JOB_VALUES = [("lanes", 100000), ("lanes", 3), ("window", 1e9), ("window", 0), ("window", True),
                  ("job_id", 70000)]
BAD_WORKER_VALUES = [("child_id", 511), ("child_id", -1), ("switch_ip", "255.255.255.255"),
                     ("switch_ip", "224.0.0.1"), ("switch_ip", "0.0.0.0"), ("switch_ip", "not-an-ip")]


@pytest.mark.parametrize("key,value", BAD_JOB_VALUES + BAD_WORKER_VALUES)
def test_manifest_values_are_refused_before_any_traffic(key, value, tmp_path: Path, capsys) -> None:
    job = json.loads(json.dumps(JOB))
    if key in ("child_id", "switch_ip"):
        job["workers"]["h1"][key] = value
    else:
        job[key] = value
    path = tmp_path / "jobs.json"
    write_manifest(path, [job])
    with pytest.raises(ManifestError, match=key):
        load_endpoint(path, "h1")
    rc, err = _run("dhc-agent", ["--manifest", str(path), "--host", "h1", "--dim", "1000"], capsys)
    assert rc == 2 and key in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("option,value", [("--window", "0"), ("--window", "1e9"), ("--window", "40000"),
                                          ("--lanes", "3"), ("--child", "511"), ("--job", "-1"),
                                          ("--switch", "255.255.255.255"), ("--epoch", "256"),
                                          ("--workers", "0"), ("--timeout", "nan"), ("--retries", "-1"),
                                          ("--density", "0"), ("--dim", "0"), ("--repeat", "0"),
                                          ("--bind", "10.0.0")])
def test_agent_options_are_checked(option: str, value: str, capsys) -> None:
    argv = ["--job", "1", "--child", "0", "--switch", "10.0.100.1", "--workers", "2", "--dim", "100"]
    rc, err = _run("dhc-agent", [*argv, option, value], capsys)
    assert rc == 2 and option in err


def _topology_with(lanes=4, window=4, ip="10.0.0.1") -> dict:
    return {"switches": [{"name": "s1", "ip": "10.0.100.1", "mac": "02:00:00:00:01:01"}],
            "hosts": [{"name": "h1", "ip": ip, "mac": "02:00:00:00:00:01"},
                      {"name": "h2", "ip": "10.0.0.2", "mac": "02:00:00:00:00:02"}],
            "links": [{"a": "h1", "a_port": 0, "b": "s1", "b_port": 1},
                      {"a": "h2", "a_port": 0, "b": "s1", "b_port": 2}],
            "jobs": [{"id": 1, "workers": ["h1", "h2"], "bytes_per_iteration": 1000,
                      "window": window, "lanes": lanes}]}


def _accepted(check, value) -> bool:
    try:
        check(value)
        return True
    except ValueError:
        return False


@pytest.mark.parametrize("field,values", [
    ("lanes", [0, 1, 3, 4, 32, 256, 257, 1000, 100000, 2.0, True, "4"]),
    ("window", [0, 1, 64, 32767, 32768, 1e9, -3, None]),
    ("ip", ["10.0.0.1", "255.255.255.255", "224.0.0.5", "0.0.0.0", "240.0.0.1", "127.0.0.1", "x", 167772161]),
])
def test_topology_and_manifest_agree(field: str, values: list, tmp_path: Path) -> None:
    """One set of checks: a value the topology loader refuses, the manifest loader refuses too
    (loopback is the one documented difference: an endpoint may live on one machine's lo)."""
    for v in values:
        try:
            from_dict(_topology_with(**{field: v}))
            topo_ok = True
        except TopologyError:
            topo_ok = False
        job = json.loads(json.dumps(JOB))
        if field == "ip":
            job["workers"]["h1"]["switch_ip"] = v
        else:
            job[field] = v
        path = tmp_path / "jobs.json"
        write_manifest(path, [job])
        try:
            load_endpoint(path, "h1")
            manifest_ok = True
        except ManifestError:
            manifest_ok = False
        if field == "ip" and v == "127.0.0.1":
            assert not topo_ok and manifest_ok and _accepted(limits.endpoint_ip, v)
            continue
        assert topo_ok == manifest_ok, (field, v, topo_ok, manifest_ok)


# ------------------------------------------------------------------ --dry-run checks what a run checks
def test_dry_run_with_a_missing_program_fails(tmp_path: Path, capsys) -> None:
    argv = ["deploy", "--topo", SINGLE, "--placement", _placement(tmp_path), "--dry-run",
            "--program", str(tmp_path / "nonexist.p4"), "--switch-addr-map", DEAD, "--timeout", "1"]
    rc, err = _run("dhc-ctl", argv, capsys)
    assert rc not in (0, None) and "nonexist.p4" in err, err

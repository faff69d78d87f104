"""``dhc-ctl status`` reports the switch's real counters: a softswitch process whose CPU port is
where worker h1 hangs (so a PacketOut is h1 sending), deployed by the controller; h1's
contribution shows up in its job's counters, a frame posing as h2 in the drop counters."""

from __future__ import annotations

import json
import time

import pytest
import yaml

from controller.cli import main
from controller.p4rt_client import MultiSwitchClient
from controller.placement import place
from controller.plan import manifest_jobs
from controller.rollout import rollout
from controller.topology_file import load
from dhcwire import header as wire
from tests.controller.deploy.frames import dhc_data
from tests.controller.deploy.switches import SoftswitchProcs

CPU = 64
TOPO = {
    "name": "cpu1",
    "switches": [{"name": "s1", "ip": "10.0.0.254", "mac": "02:00:00:00:01:01"}],
    "hosts": [
        {"name": "h1", "ip": "10.0.0.1", "mac": "02:00:00:00:00:01"},
        {"name": "h2", "ip": "10.0.0.2", "mac": "02:00:00:00:00:02"},
    ],
    "links": [
        {"a": "h1", "a_port": 0, "b": "s1", "b_port": CPU},
        {"a": "h2", "a_port": 0, "b": "s1", "b_port": 2},
    ],
    "jobs": [{"id": 7, "workers": ["h1", "h2"], "bytes_per_iteration": 1024, "window": 8, "lanes": 32}],
}


@pytest.fixture(scope="module")
def cpu_net(tmp_path_factory):
    d = tmp_path_factory.mktemp("cpu1")
    (d / "cpu1.yaml").write_text(yaml.safe_dump(TOPO))
    topo = load(str(d / "cpu1.yaml"))
    placement = place(topo)
    procs = SoftswitchProcs(["s1"], d, cpu_port=CPU)
    try:
        rollout(topo, procs.addresses, placement=placement)
        yield topo, placement, procs, d / "cpu1.yaml"
    finally:
        procs.stop()


def _status(path, procs, capsys) -> dict:
    amap = ",".join(f"{n}={a.addr}@{a.device_id}" for n, a in procs.addresses.items())
    assert main(["status", "--topo", str(path), "--switch-addr-map", amap, "--json"]) == 0
    (s1,) = json.loads(capsys.readouterr().out)["switches"]
    return s1


def test_status_shows_contributions_and_drops(cpu_net, capsys) -> None:
    topo, placement, procs, path = cpu_net
    (job,) = manifest_jobs(topo, placement)
    h1, s1 = topo.hosts["h1"], topo.switches["s1"]
    me = job["workers"]["h1"]
    good = dhc_data(h1.mac, h1.ip, s1.mac, me["switch_ip"], list(range(32)), job=7, child_id=me["child_id"],
                    chunk=0, window=8, level=int(wire.Level.VALUE_SKETCH))
    # h1 posing as h2 (h2's address and child id, from h1's port): spoofed (anti-spoofing drops it
    # before child_table could call it unauthorised)
    other = job["workers"]["h2"]
    forged = dhc_data(h1.mac, topo.hosts["h2"].ip, s1.mac, me["switch_ip"], [1] * 32, job=7,
                      child_id=other["child_id"], chunk=0, window=8, level=int(wire.Level.VALUE_SKETCH))
    with MultiSwitchClient(procs.addresses, election_id=(0, 5)) as client:
        client.connections["s1"].packet_out(good)
        client.connections["s1"].packet_out(forged)
        deadline = time.monotonic() + 10
        while True:
            st = _status(path, procs, capsys)
            (js,) = st["jobs"]
            if js["contributions"] and st["drops"] or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    assert (js["job_id"], js["role"], js["fan_in"]) == (7, "root", 2)
    assert (js["contributions"], js["completions"], js["duplicates"], js["results"]) == (1, 0, 0, 0)
    assert st["drops"] == {"spoofed": 1}

"""Port status from interface link state (as BMv2's port monitor reports it to PI) reaching the
selector members that watch a port."""

from __future__ import annotations

from pathlib import Path

from softswitch import Switch
from softswitch.api import Exact
from softswitch.server import Device
from softswitch.server.linkstatus import LinkWatcher, link_up
from softswitch.target.profiles import Watch

PROGRAM = Path(__file__).parents[1] / "programs" / "action_selector.p4"


def test_link_up_reads_interface_flags():
    assert link_up("lo") is True
    assert link_up("ss-no-such0") is False


def test_watcher_reports_changes_to_the_device():
    sw = Switch.load(PROGRAM)
    device = Device()
    device.install_program(sw, b"")
    for mid, port in ((1, 1), (2, 2)):
        sw.act_prof_add_member("sel", mid, "set", {"port": port, "v": port})
    sw.act_prof_create_group("sel", 5, [1, 2], watch=[Watch(1), Watch(2)])
    sw.table_add_indirect("lb", {"hdr.e.kind": Exact(1)}, group_id=5)
    frames = [bytes([1, 0, 0, i, 0, 0, 0, 3 * i, 0, 0]) for i in range(24)]
    links = {"veth-a": True, "veth-b": True}
    w = LinkWatcher({1: "veth-a", 2: "veth-b"}, device.port_set_status, probe=links.__getitem__)
    assert w.poll() == []                       # ports start up: nothing to report
    links["veth-a"] = False
    assert w.poll() == [(1, False)]
    assert {sw.process(0, f)[0][0] for f in frames} == {2}
    assert device.ports_down == {1}
    links["veth-a"] = True
    assert w.poll() == [(1, True)]
    assert {sw.process(0, f)[0][0] for f in frames} == {1, 2}

"""P4Runtime Write/Read of action profile members, groups and indirect table entries (real gRPC)."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from softswitch.native.build import compiler
from softswitch.server.ids import encode_bytes
from tests.softswitch.runtime.conftest import compile_config
from tests.softswitch.runtime.p4rt import Client, U

PROGRAM = Path(__file__).parents[1] / "programs" / "action_selector.p4"


@pytest.fixture
def ctl(server):
    device, addr = server
    c = Client(addr, election_id=3)
    c.set_pipeline(*compile_config(PROGRAM))
    yield c, device
    c.close()


@pytest.fixture(params=["python", pytest.param("native", marks=pytest.mark.skipif(compiler() is None,
                                                                                   reason="no cc"))])
def ctl_both(request, server, monkeypatch):
    monkeypatch.setattr("softswitch.backend._default", request.param)
    device, addr = server
    c = Client(addr, election_id=3)
    c.set_pipeline(*compile_config(PROGRAM))
    assert device.require_pipeline().switch.backend == request.param
    yield c, device
    c.close()


def _ids(c: Client):
    profs = {p.preamble.name: p.preamble.id for p in c.p4info.action_profiles}
    acts = {a.preamble.name: a for a in c.p4info.actions}
    return profs, acts


def member(c: Client, profile: str, mid: int, action: str, **params: int) -> p4runtime_pb2.Entity:
    profs, acts = _ids(c)
    a = acts[action]
    m = p4runtime_pb2.ActionProfileMember(action_profile_id=profs[profile], member_id=mid)
    m.action.action_id = a.preamble.id
    pids = {p.name: p.id for p in a.params}
    for name, v in params.items():
        m.action.params.add(param_id=pids[name], value=encode_bytes(v))
    return p4runtime_pb2.Entity(action_profile_member=m)


def group(c: Client, profile: str, gid: int, members: list[int], weight: int = 1) -> p4runtime_pb2.Entity:
    g = p4runtime_pb2.ActionProfileGroup(action_profile_id=_ids(c)[0][profile], group_id=gid)
    for mid in members:
        g.members.add(member_id=mid, weight=weight)
    return p4runtime_pb2.Entity(action_profile_group=g)


def indirect(c: Client, table: str, kind: int, *, member_id: int = 0, group_id: int = 0):
    te = c.table_entry(table, {"hdr.e.kind": kind})
    if member_id:
        te.action.action_profile_member_id = member_id
    else:
        te.action.action_profile_group_id = group_id
    return te


def _code(failure) -> int:
    assert failure is not None, "the write should have failed"
    return failure.details[0][0]


def test_members_groups_entries_forward_and_read_back(ctl):
    c, device = ctl
    c.write_ok((U.INSERT, member(c, "I.sel", 1, "I.set", port=1, v=0x11)),
               (U.INSERT, member(c, "I.sel", 2, "I.set", port=2, v=0x22)),
               (U.INSERT, group(c, "I.sel", 5, [2, 1])),
               (U.INSERT, indirect(c, "I.lb", 1, group_id=5)),
               (U.INSERT, indirect(c, "I.lb", 4, member_id=2)))
    sw = device.require_pipeline().switch
    frame = bytes([4, 0, 0, 1, 0, 0, 0, 2, 0, 0])
    assert sw.process(0, frame)[0][0] == 2
    ports = {sw.process(0, bytes([1, 0, 0, i, 0, 0, 0, i, 0, 0]))[0][0] for i in range(16)}
    assert ports == {1, 2}
    got = c.read(p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()))
    assert sorted(e.action_profile_member.member_id for e in got) == [1, 2]
    want = member(c, "I.sel", 1, "I.set", port=1, v=0x11).action_profile_member
    assert got[0].action_profile_member == want
    (g,) = c.read(p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup()))
    assert g.action_profile_group == group(c, "I.sel", 5, [2, 1]).action_profile_group
    entries = {e.table_entry.match[0].exact.value: e.table_entry.action
               for e in c.read(c.table_entry("I.lb"))}
    assert entries[b"\x01"].action_profile_group_id == 5
    assert entries[b"\x04"].action_profile_member_id == 2
    c.write_ok((U.MODIFY, member(c, "I.sel", 2, "I.set", port=7, v=0x77)))
    assert sw.process(0, frame)[0][0] == 7
    c.write_ok((U.MODIFY, group(c, "I.sel", 5, [1])))
    assert {sw.process(0, bytes([1, 0, 0, i, 0, 0, 0, i, 0, 0]))[0][0] for i in range(8)} == {1}
    c.write_ok((U.DELETE, indirect(c, "I.lb", 1, group_id=5)), (U.DELETE, group(c, "I.sel", 5, [])))
    assert c.read(p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup())) == []


def test_error_codes(ctl):
    c, _device = ctl
    c.write_ok((U.INSERT, member(c, "I.sel", 1, "I.set", port=1, v=1)),
               (U.INSERT, group(c, "I.sel", 3, [1])),
               (U.INSERT, indirect(c, "I.lb", 1, group_id=3)))
    assert _code(c.write((U.INSERT, member(c, "I.sel", 1, "I.set", port=1, v=1)))) == code_pb2.ALREADY_EXISTS
    assert _code(c.write((U.MODIFY, member(c, "I.sel", 9, "I.set", port=1, v=1)))) == code_pb2.NOT_FOUND
    assert _code(c.write((U.INSERT, indirect(c, "I.lb", 2, member_id=9)))) == code_pb2.NOT_FOUND
    assert _code(c.write((U.INSERT, indirect(c, "I.lb", 2, group_id=9)))) == code_pb2.NOT_FOUND
    assert _code(c.write((U.DELETE, member(c, "I.sel", 1, "I.set")))) == code_pb2.FAILED_PRECONDITION
    assert _code(c.write((U.DELETE, group(c, "I.sel", 3, [])))) == code_pb2.FAILED_PRECONDITION
    assert _code(c.write((U.INSERT, group(c, "I.sel", 4, [1], weight=0)))) == code_pb2.INVALID_ARGUMENT
    assert _code(c.write((U.MODIFY, group(c, "I.sel", 8, [1])))) == code_pb2.NOT_FOUND
    assert _code(c.write((U.INSERT, group(c, "I.sel", 4, [7])))) == code_pb2.NOT_FOUND
    assert _code(c.write((U.INSERT, group(c, "I.shared", 4, [])))) == code_pb2.INVALID_ARGUMENT
    assert _code(c.write((U.INSERT, member(c, "I.sel", 2, "I.mark", v=1)))) == code_pb2.INVALID_ARGUMENT
    direct = c.table_entry("I.lb", {"hdr.e.kind": 2}, "I.set", {"port": 1, "v": 1})
    assert _code(c.write((U.INSERT, direct))) == code_pb2.INVALID_ARGUMENT
    one_shot = c.table_entry("I.lb", {"hdr.e.kind": 2})
    one_shot.action.action_profile_action_set.action_profile_actions.add()   # weight 0
    assert _code(c.write((U.INSERT, one_shot))) == code_pb2.INVALID_ARGUMENT
    assert _code(c.write((U.INSERT, c.table_entry("I.lb", {"hdr.e.kind": 2})))) == code_pb2.INVALID_ARGUMENT


def test_weights_and_watch_ports(ctl_both):
    """As PI on BMv2: weight w replicates the member w times; a member whose watched port is down
    (the device's port status) is not chosen; reads give weights and watch fields back."""
    c, device = ctl_both
    g = group(c, "I.sel", 5, [1, 2])
    g.action_profile_group.members[0].weight = 3
    g.action_profile_group.members[0].watch_port = b"\x05"
    g.action_profile_group.members[1].watch = 6
    c.write_ok((U.INSERT, member(c, "I.sel", 1, "I.set", port=1, v=1)),
               (U.INSERT, member(c, "I.sel", 2, "I.set", port=2, v=2)),
               (U.INSERT, g), (U.INSERT, indirect(c, "I.lb", 1, group_id=5)))
    (got,) = c.read(p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup()))
    assert got.action_profile_group == g.action_profile_group
    sw = device.require_pipeline().switch
    frames = [bytes([1, 0, 0, i, 0, 0, 0, 3 * i, 0, 0]) for i in range(32)]
    ports = [sw.process(0, f)[0][0] for f in frames]
    assert set(ports) == {1, 2} and ports.count(1) > ports.count(2)
    device.port_set_status(5, False)
    assert {sw.process(0, f)[0][0] for f in frames} == {2}
    device.port_set_status(5, True)
    assert [sw.process(0, f)[0][0] for f in frames] == ports
    device.port_set_status(6, False)     # kept for pipelines installed later too
    c.set_pipeline(*compile_config(PROGRAM),
                   action=p4runtime_pb2.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT)
    sw = device.require_pipeline().switch
    assert {sw.process(0, f)[0][0] for f in frames} == {1}
    device.port_set_status(6, True)


def test_one_shot_action_sets(ctl):
    c, device = ctl
    _profs, acts = _ids(c)
    te = c.table_entry("I.lb", {"hdr.e.kind": 1})
    for port in (3, 4):
        pa = te.action.action_profile_action_set.action_profile_actions.add(weight=1)
        pa.action.CopyFrom(member(c, "I.sel", 0, "I.set", port=port, v=port).action_profile_member.action)
    c.write_ok((U.INSERT, te))
    sw = device.require_pipeline().switch
    assert {sw.process(0, bytes([1, 0, 0, i, 0, 0, 0, i, 0, 0]))[0][0] for i in range(16)} == {3, 4}
    (got,) = c.read(c.table_entry("I.lb"))
    assert got.table_entry.action == te.action
    # the hidden members and group are not the controller's
    assert c.read(p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember())) == []
    del te.action.action_profile_action_set.action_profile_actions[1]
    c.write_ok((U.MODIFY, te))
    assert {sw.process(0, bytes([1, 0, 0, i, 0, 0, 0, i, 0, 0]))[0][0] for i in range(8)} == {3}
    # PI: an action of weight w is w BMv2 members; its watch port is kept with it
    te.action.action_profile_action_set.action_profile_actions[0].weight = 2
    te.action.action_profile_action_set.action_profile_actions[0].watch = 9
    c.write_ok((U.MODIFY, te))
    (got,) = c.read(c.table_entry("I.lb"))
    assert got.table_entry.action == te.action
    assert [m.handles for m in sw.inst.profiles["I.sel"].members.values()] == [[0, 1]]
    device.port_set_status(9, False)                      # its one action's port down: empty group
    assert sw.process(0, bytes([1, 0, 0, 1, 0, 0, 0, 1, 0, 0]))[0][0] == 0
    device.port_set_status(9, True)
    te.action.action_profile_action_set.action_profile_actions[0].weight = 0
    assert _code(c.write((U.MODIFY, te))) == code_pb2.INVALID_ARGUMENT
    c.write_ok((U.DELETE, te))
    assert sw.inst.profiles["I.sel"].members == {}   # released with the entry
    assert acts["I.set"].preamble.id == pa.action.action_id


def test_reconcile_carries_members_groups_and_indirect_entries(ctl):
    c, device = ctl
    c.write_ok((U.INSERT, member(c, "I.sel", 4, "I.set", port=4, v=4)),
               (U.INSERT, member(c, "I.sel", 2, "I.set", port=2, v=2)),
               (U.INSERT, group(c, "I.sel", 1, [2, 4])),
               (U.INSERT, indirect(c, "I.lb", 1, group_id=1)))
    frames = [bytes([1, 0, 0, i, 0, 0, 0, i, 0, 0]) for i in range(16)]
    before = [device.require_pipeline().switch.process(0, f)[0][0] for f in frames]
    entities = [p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()),
                p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup()),
                p4runtime_pb2.Entity(table_entry=c.table_entry("I.lb"))]
    state = c.read(*entities)
    c.set_pipeline(*compile_config(PROGRAM),
                   action=p4runtime_pb2.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT)
    assert c.read(*entities) == state
    assert [device.require_pipeline().switch.process(0, f)[0][0] for f in frames] == before

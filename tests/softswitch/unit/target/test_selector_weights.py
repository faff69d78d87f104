"""Selector member weights and watched ports as PI's P4Runtime server makes them on BMv2, on
both backends: a member of weight w is w BMv2 members (copies with the smallest free handles),
and a member whose watched port is down is left out of its group's choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from softswitch import Switch
from softswitch.api import Exact, RuntimeAPIError
from softswitch.native.build import compiler
from softswitch.native.switch import NativeSwitch
from softswitch.target.profiles import Watch

PROGRAM = Path(__file__).parents[2] / "programs" / "action_selector.p4"
BACKENDS = ["python", pytest.param("native", marks=pytest.mark.skipif(compiler() is None, reason="no cc"))]
FRAMES = [bytes([1, 0, 0, i, 0, 0, 0, 3 * i, 0, 0]) for i in range(48)]


def _switch(backend: str):
    return (NativeSwitch if backend == "native" else Switch).load(PROGRAM)


def _ports(sw) -> list[int]:
    return [sw.process(0, f)[0][0] for f in FRAMES]


def _members(sw, spec: dict[int, int]) -> None:
    for mid, port in spec.items():
        sw.act_prof_add_member("sel", mid, "set", {"port": port, "v": port})


@pytest.mark.parametrize("backend", BACKENDS)
def test_weight_is_replication_in_handle_order(backend: str):
    """Weights 3 and 1 choose exactly as four distinct members whose handles are in the same
    order: member 1 (handle 0), member 2 (1), then member 1's two copies (2, 3)."""
    sw = _switch(backend)
    _members(sw, {1: 1, 2: 2})
    sw.act_prof_create_group("sel", 5, [1, 2], weights=[3, 1])
    sw.table_add_indirect("lb", {"hdr.e.kind": Exact(1)}, group_id=5)
    ref = _switch(backend)
    _members(ref, {1: 1, 2: 2, 3: 1, 4: 1})
    ref.act_prof_create_group("sel", 5, [1, 2, 3, 4])
    ref.table_add_indirect("lb", {"hdr.e.kind": Exact(1)}, group_id=5)
    got = _ports(sw)
    assert got == _ports(ref) and set(got) == {1, 2} and got.count(1) > got.count(2)
    prof = sw.inst.profiles["I.sel"]
    assert prof.members[1].handles == [0, 2, 3]
    assert sw.act_prof_group_members("sel") == {5: [(1, 3, None), (2, 1, None)]}
    # weight back to 1: the copies go, newest first; a new member takes the smallest free handle
    sw.act_prof_modify_group("sel", 5, [1, 2], weights=[1, 1])
    assert prof.members[1].handles == [0]
    _members(sw, {3: 3})
    assert prof.members[3].handles == [2]
    assert set(_ports(sw)) == {1, 2}


@pytest.mark.parametrize("backend", BACKENDS)
def test_copies_are_shared_between_groups_and_kept_while_needed(backend: str):
    sw = _switch(backend)
    _members(sw, {1: 1, 2: 2})
    sw.act_prof_create_group("sel", 5, [1, 2], weights=[2, 1])
    sw.act_prof_create_group("sel", 6, [1], weights=[3])
    prof = sw.inst.profiles["I.sel"]
    assert prof.members[1].handles == [0, 2, 3]
    sw.act_prof_delete_group("sel", 6)
    assert prof.members[1].handles == [0, 2]      # group 5 still needs one copy
    with pytest.raises(RuntimeAPIError) as ei:
        sw.act_prof_create_group("sel", 7, [2], weights=[0])
    assert ei.value.code == "INVALID_ARGUMENT"
    with pytest.raises(RuntimeAPIError) as ei:
        sw.act_prof_create_group("sel", 7, [2], weights=[9], max_size=8)
    assert ei.value.code == "RESOURCE_EXHAUSTED"  # the weights' sum counts against max_size


@pytest.mark.parametrize("backend", BACKENDS)
def test_watched_port_down_deactivates_the_member(backend: str):
    sw = _switch(backend)
    _members(sw, {1: 1, 2: 2})
    sw.act_prof_create_group("sel", 5, [1, 2], watch=[Watch(5), None])
    sw.table_add_indirect("lb", {"hdr.e.kind": Exact(1)}, group_id=5)
    both = _ports(sw)
    assert set(both) == {1, 2}
    sw.port_set_status(5, False)
    assert set(_ports(sw)) == {2}
    sw.port_set_status(5, True)
    assert _ports(sw) == both
    # every member down: BMv2's group has no active member, an empty group (no action runs)
    sw.act_prof_modify_group("sel", 5, [1, 2], watch=[Watch(5), Watch(6, "watch")])
    sw.port_set_status(5, False)
    sw.port_set_status(6, False)
    out = sw.process(0, FRAMES[0])
    assert out[0][0] == 0 and out[0][1][8] == 0       # egress_spec and res untouched
    assert sw.act_prof_group_members("sel")[5] == [(1, 1, Watch(5)), (2, 1, Watch(6, "watch"))]


@pytest.mark.parametrize("backend", BACKENDS)
def test_custom_crc_selector_keeps_the_default_parameters(backend: str):
    """A selector's crc16_custom is no named calculation: it hashes as crc16 (it was a KeyError
    on the python backend)."""
    custom = PROGRAM.read_text().replace("action_selector(HashAlgorithm.crc16, 32w16, 32w16) sel;",
                                         "action_selector(HashAlgorithm.crc16_custom, 32w16, 32w16) sel;")
    assert "crc16_custom" in custom
    cls = NativeSwitch if backend == "native" else Switch
    out = []
    for sw in (cls.from_source(custom, "custom.p4"), _switch(backend)):
        _members(sw, {1: 1, 2: 2})
        sw.act_prof_create_group("sel", 5, [1, 2])
        sw.table_add_indirect("lb", {"hdr.e.kind": Exact(1)}, group_id=5)
        out.append(_ports(sw))
    assert out[0] == out[1] and set(out[0]) == {1, 2}

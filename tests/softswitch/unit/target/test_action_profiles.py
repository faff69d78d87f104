"""Action profiles and action selectors: BMv2's member choice, both backends, errors.

The expected member of every packet is computed here from BMv2's rules, with this file's own
hash code: the selector hash over the ``selector`` key fields of valid headers (bits packed MSB
first, last byte zero-padded), cast to 32 bits, ``h % n`` over the group's members in ascending
BMv2 handle order, a handle being the smallest free one when the member was created.
"""

from __future__ import annotations

import random
import zlib

import pytest

from softswitch import P4CompileError
from softswitch.api import Exact, RuntimeAPIError
from softswitch.target.profiles import ProfileError

from ..helpers import frame, switch, words

BACKENDS = ["python", "native"]


def _crc16(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


HASHES = {
    "crc16": _crc16,
    "crc32": lambda d: zlib.crc32(d),
    "identity": lambda d: int.from_bytes(d[:8], "big") & 0xFFFFFFFF,
}


def _table(algo: str, extra: str = "") -> str:
    return f"""
    action_selector(HashAlgorithm.{algo}, 32w16, 32w16) sel_{algo};
    table lb_{algo} {{
        key = {{ hdr.eth.dst: exact; hdr.d.w1: selector; meta.m16: selector; hdr.d.w2: selector;
                hdr.d.isValid(): selector; }}
        actions = {{ set; other; }}
        implementation = sel_{algo};
        default_action = other(9);
        {extra}
    }}
"""


# one program (one native build): hdr.d.w0 picks the table, 0 crc16, 1 crc32, else identity
ILOCALS = """
    action set(bit<9> port, bit<32> v) { sm.egress_spec = port; hdr.d.w7 = v; }
    action other(bit<32> v) { hdr.d.w6 = v; }
    direct_counter(CounterType.packets) dc;
""" + _table("crc16") + _table("crc32", "counters = dc;") + _table("identity")
INGRESS = """meta.m16 = hdr.eth.etype;
    bool hit;
    if (hdr.d.w0 == 0) { hit = lb_crc16.apply().hit; }
    else if (hdr.d.w0 == 1) { hit = lb_crc32.apply().hit; }
    else { hit = lb_identity.apply().hit; }
    if (hit) { hdr.eth.src = 1; }"""
TABLE_OF = {"crc16": 0, "crc32": 1, "identity": 2}


def _selector_bytes(etype: int, w1: int, w2: int) -> bytes:
    """w1, m16, w2 and hdr.d's validity bit (81 bits, zero-padded to 11 bytes); with hdr.d
    invalid its fields and its validity bit are left out: only meta.m16 is hashed."""
    if etype != 0x88B5:
        return etype.to_bytes(2, "big")
    bits = (w1 << 49) | (etype << 33) | (w2 << 1) | 1
    return (bits << 7).to_bytes(11, "big")


@pytest.mark.parametrize("backend", BACKENDS)
def test_group_member_chosen_as_bmv2(backend: str):
    sw = switch(INGRESS, backend, ilocals=ILOCALS)
    rng = random.Random(14)
    for algo, w0 in TABLE_OF.items():
        sel = f"sel_{algo}"
        handles: dict[int, int] = {}
        for mid in (10, 20, 30, 40):
            handles[mid] = min(set(range(8)) - set(handles.values()))
            sw.act_prof_add_member(sel, mid, "set", {"port": mid // 10, "v": mid})
        sw.act_prof_delete_member(sel, 20)          # frees handle 1 ...
        del handles[20]
        sw.act_prof_add_member(sel, 50, "set", {"port": 5, "v": 50})
        handles[50] = 1                             # ... which the next member gets
        sw.act_prof_create_group(sel, 7, [40, 10, 50, 30])
        sw.table_add_indirect(f"lb_{algo}", {"hdr.eth.dst": Exact(2)}, group_id=7)
        order = sorted([40, 10, 50, 30], key=handles.__getitem__)
        assert order == [10, 50, 30, 40]
        for _ in range(16):
            etype = rng.choice([0x88B5, 0x88B5, 0x0800])
            w1, w2 = rng.getrandbits(32), rng.getrandbits(32)
            out = sw.process(0, frame(w0, w1, w2, etype=etype))
            if etype != 0x88B5:  # no hdr.d: the crc16 table runs (w0 reads 0)
                algo_run = "crc16"
            else:
                algo_run = algo
            want = order[HASHES[algo_run](_selector_bytes(etype, w1, w2)) % len(order)]
            assert out[0][0] == want // 10, (algo, etype, w1, w2)
            if etype == 0x88B5:
                assert words(out[0][1])[7] == want


@pytest.mark.parametrize("backend", BACKENDS)
def test_miss_empty_group_and_member_entries(backend: str):
    sw = switch(INGRESS, backend, ilocals=ILOCALS)
    out = sw.process(0, frame(0, 2, 3))
    assert out[0][0] == 1 and words(out[0][1])[6] == 0   # miss: no action, not the default one
    sw.act_prof_create_group("sel_crc16", 1, [])
    sw.table_add_indirect("lb_crc16", {"hdr.eth.dst": Exact(2)}, group_id=1)
    out = sw.process(0, frame(0, 2, 3))
    assert out[0][0] == 1 and out[0][1][6:12] == b"\x00" * 5 + b"\x01"  # hit, nothing run
    sw.act_prof_add_member("sel_crc16", 3, "other", {"v": 0xABC})
    sw.act_prof_modify_group("sel_crc16", 1, [3])
    assert words(sw.process(0, frame(0, 2, 3))[0][1])[6] == 0xABC
    sw.act_prof_modify_member("sel_crc16", 3, "set", {"port": 4, "v": 5})
    assert sw.process(0, frame(0, 2, 3))[0][0] == 4
    sw.table_modify_indirect("lb_crc16", {"hdr.eth.dst": Exact(2)}, member_id=3)
    assert sw.process(0, frame(0, 0x88B5, 7))[0][0] == 4
    [e] = sw.table_entries("lb_crc16")
    assert (e.member_id, e.group_id) == (3, None)
    assert sw.act_prof_members("sel_crc16") == {3: ("I.set", {"port": 4, "v": 5})}
    assert sw.act_prof_groups("sel_crc16") == {1: [3]}


@pytest.mark.parametrize("backend", BACKENDS)
def test_profile_shared_by_two_tables(backend: str):
    ilocals = """
    action mark(bit<32> v) { hdr.d.w5 = hdr.d.w5 + v; }
    action_profile(32w4) ap;
    table a { key = { hdr.d.w0: exact; } actions = { mark; } implementation = ap; }
    table b { key = { hdr.d.w1: exact; } actions = { mark; } implementation = ap; }
"""
    sw = switch("a.apply(); b.apply();", backend, ilocals=ilocals)
    info = sw.p4info
    [prof] = info.action_profiles
    assert prof.preamble.name == "I.ap" and not prof.with_selector and prof.size == 4
    assert sorted(prof.table_ids) == sorted(t.preamble.id for t in info.tables)
    assert all(t.implementation_id == prof.preamble.id for t in info.tables)
    sw.act_prof_add_member("ap", 1, "mark", {"v": 3})
    sw.table_add_indirect("a", {"hdr.d.w0": Exact(7)}, member_id=1)
    sw.table_add_indirect("b", {"hdr.d.w1": Exact(8)}, member_id=1)
    assert words(sw.process(0, frame(7, 8))[0][1])[5] == 6
    sw.act_prof_modify_member("ap", 1, "mark", {"v": 5})
    assert words(sw.process(0, frame(7, 8))[0][1])[5] == 10
    with pytest.raises(ProfileError) as ei:
        sw.act_prof_delete_member("ap", 1)
    assert ei.value.code == "FAILED_PRECONDITION"
    sw.table_delete("a", {"hdr.d.w0": Exact(7)})
    sw.table_clear("b")
    sw.act_prof_delete_member("ap", 1)
    with pytest.raises(ProfileError):
        sw.act_prof_create_group("ap", 1, [])     # no selector: no groups


def test_refusals():
    sw = switch(INGRESS.replace("lb_crc16", "lb"),
                ilocals=ILOCALS.replace("sel_crc16", "sel").replace("lb_crc16", "lb"))
    sw.act_prof_add_member("sel", 1, "set", {"port": 1, "v": 1})
    codes = {}
    for what, call in {
        "unknown member": lambda: sw.table_add_indirect("lb", {"hdr.eth.dst": Exact(1)}, member_id=9),
        "unknown group": lambda: sw.table_add_indirect("lb", {"hdr.eth.dst": Exact(1)}, group_id=9),
        "duplicate member": lambda: sw.act_prof_add_member("sel", 1, "set", {"port": 1, "v": 1}),
        "weight": lambda: sw.act_prof_create_group("sel", 2, [1], weights=[0]),
        "twice in a group": lambda: sw.act_prof_create_group("sel", 2, [1, 1]),
        "bad action": lambda: sw.act_prof_add_member("sel", 2, "NoAction", {}),
    }.items():
        with pytest.raises(RuntimeAPIError) as ei:
            call()
        codes[what] = getattr(ei.value, "code", None)
    assert codes["unknown member"] == codes["unknown group"] == "NOT_FOUND"
    assert codes["duplicate member"] == "ALREADY_EXISTS"
    assert codes["weight"] == "INVALID_ARGUMENT"   # PI: weights are positive
    with pytest.raises(RuntimeAPIError, match="indirect"):
        sw.table_add("lb", "set", {"hdr.eth.dst": Exact(1)}, {"port": 1, "v": 1})
    with pytest.raises(RuntimeAPIError, match="indirect"):
        sw.table_set_default("lb", "set", {"port": 1, "v": 1})
    with pytest.raises(RuntimeAPIError, match="exactly one"):
        sw.table_add_indirect("lb", {"hdr.eth.dst": Exact(1)})
    sw.act_prof_create_group("sel", 3, [1])
    sw.table_add_indirect("lb", {"hdr.eth.dst": Exact(1)}, group_id=3)
    with pytest.raises(ProfileError, match="still used"):
        sw.act_prof_delete_group("sel", 3)


@pytest.mark.parametrize("body, message", [
    ("action_profile(32w4) ap; table t { key = { hdr.d.w0: selector; } actions = { NoAction; } "
     "implementation = ap; }", "selector keys need"),
    ("register<bit<8>>(4) r; table t { key = { hdr.d.w0: exact; } actions = { NoAction; } "
     "implementation = r; }", "must name an action_profile"),
    ("table t { key = { hdr.d.w0: exact; } actions = { NoAction; } "
     "implementation = action_profile(32w4); }", "anonymous table property"),
    ("action_profile(32w4) ap; table t { key = { hdr.d.w0: exact; } actions = { NoAction; } "
     "implementation = ap; const entries = { 1: NoAction(); } }", "entries in the program"),
    ("action_selector(HashAlgorithm.crc16, 32w4) s; table t { key = { hdr.d.w0: exact; } "
     "actions = { NoAction; } implementation = s; }", "constructor takes"),
])
def test_compile_errors(body: str, message: str):
    with pytest.raises(P4CompileError, match=message) as ei:
        switch("t.apply();", ilocals=body)
    assert ei.value.line > 0


def test_p4info_of_in_place_selector_and_selector_keys():
    ilocals = ILOCALS.replace("implementation = sel_crc32;", '@name("lb_sel") implementation = '
                              "action_selector(HashAlgorithm.crc32, 32w128, 32w10);")
    sw = switch(INGRESS, ilocals=ilocals)
    profs = {p.preamble.name: p for p in sw.p4info.action_profiles}
    assert set(profs) == {"lb_sel", "I.sel_crc16", "I.sel_identity"}  # unused I.sel_crc32 left out
    assert profs["lb_sel"].with_selector and profs["lb_sel"].size == 128
    assert profs["lb_sel"].preamble.id == (0x11 << 24) | 0x68af61   # p4c's id of "lb_sel"
    t = next(t for t in sw.p4info.tables if t.preamble.name == "I.lb_crc32")
    assert [m.name for m in t.match_fields] == ["hdr.eth.dst"]   # selector keys are not listed
    assert t.implementation_id == profs["lb_sel"].preamble.id


@pytest.mark.parametrize("backend", BACKENDS)
def test_direct_counter_counts_hits_of_indirect_entries(backend: str):
    sw = switch(INGRESS, backend, ilocals=ILOCALS)   # lb_crc32 has the direct counter
    sw.act_prof_create_group("sel_crc32", 1, [])
    sw.table_add_indirect("lb_crc32", {"hdr.eth.dst": Exact(2)}, group_id=1)
    sw.act_prof_add_member("sel_crc32", 4, "other", {"v": 1})
    sw.table_add_indirect("lb_crc32", {"hdr.eth.dst": Exact(3)}, member_id=4)
    for dst, n in ((2, 3), (3, 2), (9, 4)):   # an empty group's hits count, misses do not
        f = frame(1, 6)
        for _ in range(n):
            sw.process(0, f[:5] + bytes([dst]) + f[6:])
    assert sw.direct_counter_read("lb_crc32", {"hdr.eth.dst": Exact(2)})[0] == 3
    assert sw.direct_counter_read("lb_crc32", {"hdr.eth.dst": Exact(3)})[0] == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_shot_entries(backend: str):
    sw = switch(INGRESS, backend, ilocals=ILOCALS)
    sw.act_prof_add_member("sel_crc16", 1, "set", {"port": 9, "v": 9})   # handle 0 is taken
    match = {"hdr.eth.dst": Exact(2)}
    sw.table_add_one_shot("lb_crc16", match, [("set", {"port": 3, "v": 3}), ("set", {"port": 4, "v": 4})])
    [e] = sw.table_entries("lb_crc16")
    assert e.action_set == [("I.set", {"port": 3, "v": 3}, 1, None), ("I.set", {"port": 4, "v": 4}, 1, None)]
    assert (e.member_id, e.group_id) == (None, None)
    assert sw.act_prof_members("sel_crc16") == {1: ("I.set", {"port": 9, "v": 9})}
    for w1 in range(12):
        h = _crc16(_selector_bytes(0x88B5, w1, 0))
        assert sw.process(0, frame(0, w1, 0))[0][0] == (3, 4)[h % 2]   # set order = handle order
    sw.table_modify_one_shot("lb_crc16", match, [("other", {"v": 5})])
    assert words(sw.process(0, frame(0, 1, 0))[0][1])[6] == 5
    sw.table_delete("lb_crc16", match)
    prof = sw.inst.profiles["I.sel_crc16"]
    assert list(prof.members) == [1] and prof.groups == {}
    with pytest.raises(ValueError, match="does not fit"):
        sw.table_add_one_shot("lb_crc16", match, [("set", {"port": 1 << 9, "v": 0})])
    assert list(prof.members) == [1] and sw.table_entries("lb_crc16") == []


P4C_SHAPE = """
#include <core.p4>
#include <v1model.p4>
struct H { }
struct M { bit<32> h1; }
parser P(packet_in pk, out H hdr, inout M meta, inout standard_metadata_t sm) {
    state start { transition accept; } }
control IngressI(inout H hdr, inout M meta, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action_selector(HashAlgorithm.identity, 32w1024, 32w10) as;
    table indirect_ws { key = { meta.h1 : selector; } actions = { drop; NoAction; }
                        const default_action = NoAction(); @name("ignored") implementation = as; }
    table indirect_ws_1 { key = { meta.h1 : selector; } actions = { drop; NoAction; }
                          const default_action = NoAction(); implementation = as; }
    table indirect { key = { } actions = { drop; NoAction; } const default_action = NoAction();
                     @name("ap") implementation = action_profile(32w128); }
    apply { indirect_ws.apply(); indirect_ws_1.apply(); indirect.apply(); }
}
control E(inout H hdr, inout M meta, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M meta) { apply { } }
control D(packet_out pk, in H hdr) { apply { } }
V1Switch(P(), V(), IngressI(), E(), V(), D()) main;
"""


def test_p4info_ids_are_p4cs():
    """Ids, table lists, sizes and selector flags as p4c's P4Info gives them for these names."""
    from softswitch import Switch

    info = Switch.from_source(P4C_SHAPE, "shape.p4").p4info
    tables = {t.preamble.name: t for t in info.tables}
    assert tables["IngressI.indirect_ws"].preamble.id == 38116258
    assert tables["IngressI.indirect_ws_1"].preamble.id == 33951097
    assert tables["IngressI.indirect"].preamble.id == 46872340
    profs = {p.preamble.name: (p.preamble.id, list(p.table_ids), p.with_selector, p.size)
             for p in info.action_profiles}
    assert profs == {"IngressI.as": (291652621, [38116258, 33951097], True, 1024),
                     "ap": (294074782, [46872340], False, 128)}
    assert {t.implementation_id for t in info.tables} == {291652621, 294074782}
    assert all(not t.match_fields for t in info.tables)


@pytest.mark.parametrize("backend", BACKENDS)
def test_action_run_switch_skipped_when_no_action_ran(backend: str):
    """p4c gives the table ``base_default_next`` = the statement after the switch, which BMv2
    follows when no action ran (a miss of a table with a profile): no label, not `default`."""
    ingress = """meta.m16 = hdr.eth.etype;
    switch (lb_crc16.apply().action_run) {
        set: { hdr.d.w5 = 1; }
        default: { hdr.d.w5 = 2; }
    }
    hdr.d.w4 = 3;"""
    sw = switch(ingress, backend, ilocals=ILOCALS)
    assert words(sw.process(0, frame(0, 1, 2))[0][1])[4:6] == [3, 0]
    sw.act_prof_add_member("sel_crc16", 1, "other", {"v": 7})
    sw.table_add_indirect("lb_crc16", {"hdr.eth.dst": Exact(2)}, member_id=1)
    assert words(sw.process(0, frame(0, 1, 2))[0][1])[4:7] == [3, 2, 7]


def test_max_group_size_annotation():
    sw = switch(INGRESS, ilocals=ILOCALS.replace("action_selector(HashAlgorithm.crc16",
                                                 "@max_group_size(2) action_selector(HashAlgorithm.crc16"))
    prof = next(p for p in sw.p4info.action_profiles if p.preamble.name == "I.sel_crc16")
    assert prof.max_group_size == 2 and "@max_group_size(2)" in prof.preamble.annotations
    for mid in (1, 2, 3):
        sw.act_prof_add_member("sel_crc16", mid, "other", {"v": mid})
    sw.act_prof_create_group("sel_crc16", 1, [1, 2])
    with pytest.raises(ProfileError, match="at most 2") as ei:
        sw.act_prof_modify_group("sel_crc16", 1, [1, 2, 3])
    assert ei.value.code == "RESOURCE_EXHAUSTED"

"""Forms found in p4c's accepted v1model samples that the softswitch used to refuse: named
``V1Switch`` arguments in any order, p4c's keyword names (``type``, ``key``, ``actions``,
``state``, ``entries``) as variables and parameters, a register of a serializable enum, and
``error``/enum fields in a digest.  Each runs on both backends."""

from __future__ import annotations

import pytest

from softswitch import Switch
from softswitch.api import Exact, P4CompileError
from softswitch.native.switch import NativeSwitch
from softswitch.p4info import build_p4info

from ..helpers import frame, program, run_words, switch

POSITIONAL = "V1Switch(P(), VC(), I(), E(), CC(), D()) main;"
BACKENDS = ["python", "native"]


def _load(src: str, backend: str) -> Switch:
    if backend == "native":
        return NativeSwitch.from_source(src, "unit.p4")
    return Switch.from_source(src, "unit.p4", trace=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_v1switch_named_arguments_any_order(backend):
    src = program("hdr.d.w2 = hdr.d.w0 + hdr.d.w1;", egress="hdr.d.w3 = 4;")
    named = "V1Switch(ig = I(), dep = D(), p = P(), eg = E(), vr = VC(), ck = CC()) main;"
    sw = _load(src.replace(POSITIONAL, named), backend)
    assert run_words(sw, 5, 7)[:4] == [5, 7, 12, 4]


@pytest.mark.parametrize("args, reason", [
    ("P(), vr = VC(), ig = I(), eg = E(), ck = CC(), dep = D()", "all or none"),
    ("p = P(), vr = VC(), ig = I(), eg = E(), ck = CC(), dp = D()", "no parameter named dp"),
    ("p = P(), vr = VC(), ig = I(), eg = E(), ck = CC(), p = D()", "given twice"),
])
def test_v1switch_named_arguments_misuse(args, reason):
    src = program().replace(POSITIONAL, f"V1Switch({args}) main;")
    with pytest.raises(P4CompileError, match=reason):
        Switch.from_source(src, "unit.p4")


KEYWORD_NAMES = dict(
    ilocals="""
    action set_t(bit<32> type) { hdr.d.w2 = type; }
    table t { key = { hdr.d.w0: exact; } actions = { set_t; NoAction; }
              const entries = { 5: set_t(9); } }""",
    ingress="""
        bit<32> key = hdr.d.w1 + 1;
        bit<32> state = key << 1;
        bit<32> entries = state + key;
        bit<32> actions = entries;
        bit<32> type = actions;
        hdr.d.w3 = type;
        t.apply();""")


@pytest.mark.parametrize("backend", BACKENDS)
def test_keyword_names_as_variables_and_parameters(backend):
    sw = switch(backend=backend, **KEYWORD_NAMES)
    assert run_words(sw, 5, 7)[:4] == [5, 7, 9, 24]
    assert run_words(sw, 6, 1)[:4] == [6, 1, 0, 6]


SERENUM_REGISTER = dict(
    decls="enum bit<16> Eth { V4 = 0x0800, V6 = 0x86dd }",
    ilocals="register<Eth>(2) r;",
    ingress="""
        r.write(1, (Eth) hdr.d.w0[15:0]);
        Eth v;
        r.read(v, 1);
        hdr.d.w2 = (bit<32>) (bit<16>) v;
        if (v == Eth.V6) { hdr.d.w3 = 1; }""")


@pytest.mark.parametrize("backend", BACKENDS)
def test_register_of_serializable_enum(backend):
    sw = switch(backend=backend, **SERENUM_REGISTER)
    assert run_words(sw, 0x186DD, 7)[:4] == [0x186DD, 7, 0x86DD, 1]
    assert run_words(sw, 0x0800, 7)[:4] == [0x0800, 7, 0x0800, 0]
    assert sw.register_read("I.r", 1) == 0x0800


DIGEST = dict(
    decls="""enum Kind { Small, Large }
enum bit<8> Code { A = 28, B = 42 }
struct note_t { bit<32> w; error e; Kind k; Code c; }""",
    mfields="note_t note;",
    ingress="""
        meta.note.w = hdr.d.w0;
        meta.note.e = error.NoMatch;
        meta.note.k = hdr.d.w0 > 10 ? Kind.Large : Kind.Small;
        meta.note.c = Code.B;
        digest(1, meta.note);""")


@pytest.mark.parametrize("backend", BACKENDS)
def test_digest_carries_error_and_enum_codes(backend):
    sw = switch(backend=backend, **DIGEST)
    sw.process(0, frame(5))
    sw.process(0, frame(50))
    no_match = sw.prog.decls.errors.index("NoMatch")
    assert sw.digests() == [("note_t", (5, no_match, 0, 42)), ("note_t", (50, no_match, 1, 42))]


def test_digest_p4info_names_error_and_enum_types():
    info = build_p4info(switch(**DIGEST).prog)
    members = {m.name: m.type_spec for m in info.type_info.structs["note_t"].members}
    assert members["e"].HasField("error")
    assert members["k"].enum.name == "Kind"
    assert members["c"].serializable_enum.name == "Code"
    assert [m.name for m in info.type_info.enums["Kind"].members] == ["Small", "Large"]
    se = info.type_info.serializable_enums["Code"]
    assert se.underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in se.members] == [("A", b"\x1c"), ("B", b"\x2a")]
    assert "NoMatch" in info.type_info.error.members


def test_register_of_serializable_enum_p4info():
    info = build_p4info(switch(**SERENUM_REGISTER).prog)
    reg = next(r for r in info.registers if r.preamble.name == "I.r")
    assert reg.type_spec.serializable_enum.name == "Eth"
    assert info.type_info.serializable_enums["Eth"].underlying_type.bitwidth == 16


@pytest.mark.parametrize("backend", BACKENDS)
def test_control_named_like_an_earlier_extern_function(backend):
    """``control verify_checksum`` after v1model's extern function of that name (p4c compiles
    it); the checksum calls elsewhere still reach the extern."""
    src = program("hdr.d.w2 = hdr.d.w0;",
                  compute="update_checksum(true, { hdr.d.w0 }, hdr.d.w3, HashAlgorithm.csum16);")
    src = src.replace("control VC(", "control verify_checksum(").replace(
        "V1Switch(P(), VC(),", "V1Switch(P(), verify_checksum(),")
    sw = _load(src, backend)
    assert run_words(sw, 0x12345678, 7)[:4] == [0x12345678, 7, 0x12345678, 0xFFFF - (0x1234 + 0x5678)]


def test_function_named_like_an_earlier_control_is_still_refused():
    src = program(decls="control Twice(inout bit<8> v) { apply { } }\nbool Twice() { return true; }")
    with pytest.raises(P4CompileError, match="Re-declaration of Twice"):
        Switch.from_source(src, "unit.p4")


BARE_DROP = dict(
    decls="action top_drop() { mark_to_drop(); }",
    ilocals="table t { key = { hdr.d.w0: exact; } actions = { top_drop; NoAction; }\n"
            "          const entries = { 1: top_drop(); } default_action = NoAction(); }",
    ingress="t.apply();",
    elocals="table e { key = { hdr.d.w1: exact; } actions = { top_drop; NoAction; }\n"
            "          const entries = { 2: top_drop(); } default_action = NoAction(); }",
    egress="e.apply();")


@pytest.mark.parametrize("backend", BACKENDS)
def test_bare_mark_to_drop_in_a_top_level_action(backend):
    """v1model's deprecated ``mark_to_drop()`` in a top-level action (no standard_metadata_t in
    scope): BMv2's ``drop`` primitive drops the packet of the pass that runs it, in ingress and
    in egress."""
    sw = switch(backend=backend, **BARE_DROP)
    assert sw.process(0, frame(1, 7)) == []
    assert sw.process(0, frame(3, 2)) == []
    assert run_words(sw, 3, 7)[:2] == [3, 7]


@pytest.mark.parametrize("backend", BACKENDS)
def test_p4runtime_translation_with_a_type_argument(backend):
    """p4c keeps an annotation's body as tokens: ``@p4runtime_translation("u", bit<32>)`` and
    ``(..., string)`` load; the `type` values behave as their underlying bits."""
    decls = """typedef bit<16> P_t;
@p4runtime_translation("example.org/P1", 32) type P_t P1_t;
@p4runtime_translation("example.org/P2", bit<32>) type P_t P2_t;
@p4runtime_translation("example.org/P3", string) type P_t P3_t;"""
    ingress = """P2_t a = (P2_t) hdr.d.w0[15:0];
        P3_t b = (P3_t) (P_t) 3;
        hdr.d.w2 = (bit<32>) (P_t) a + (bit<32>) (P_t) b;"""
    sw = switch(backend=backend, decls=decls, ingress=ingress)
    assert run_words(sw, 0x10005, 7)[:3] == [0x10005, 7, 8]


def test_type_in_a_structured_annotation_is_refused():
    with pytest.raises(P4CompileError, match="illegal structured annotation value"):
        switch(decls="@foo[bit<8>] action a() { }")


SELECTOR_NO_IMPL = dict(
    ilocals="action set(bit<32> v) { hdr.d.w2 = v; }\n"
            "    table t { key = { hdr.d.w0: exact; hdr.d.w1: selector; } actions = { set; NoAction; } }",
    ingress="t.apply();")


@pytest.mark.parametrize("backend", BACKENDS)
def test_selector_key_without_implementation_is_left_out(backend):
    """A ``selector`` key on a table with no ``implementation``: p4c compiles it (its
    issue1560 sample) and its BMv2 back end and P4Info leave the key out: the table matches on
    the other keys only."""
    sw = switch(backend=backend, **SELECTOR_NO_IMPL)
    sw.table_add("I.t", "I.set", {"hdr.d.w0": Exact(5)}, {"v": 9})
    assert run_words(sw, 5, 1)[:3] == [5, 1, 9]
    assert run_words(sw, 5, 2)[:3] == [5, 2, 9]
    assert run_words(sw, 6, 1)[:3] == [6, 1, 0]
    info = build_p4info(sw.prog)
    table = next(t for t in info.tables if t.preamble.name == "I.t")
    assert [m.name for m in table.match_fields] == ["hdr.d.w0"]


DIRECT_ACTION_DATA = dict(
    ilocals="""
    action put(bit<32> v) { hdr.d.w2 = v; }
    action twice() { put(hdr.d.w0 + hdr.d.w1); }
    table t { key = { hdr.d.w0: exact; } actions = { twice; put; } default_action = put(32w3); }""",
    ingress="t.apply(); if (hdr.d.w0 == 1) { put(hdr.d.w1 << 1); }")


@pytest.mark.parametrize("backend", BACKENDS)
def test_direct_action_call_binds_action_data_to_any_value(backend):
    """A directly called action's directionless parameters take any expression, as `in` ones
    (p4c's type checker; its crc32-bmv2 sample passes a sum); only a table's default_action and
    entries need compile-time constants."""
    sw = switch(backend=backend, **DIRECT_ACTION_DATA)
    sw.table_add("I.t", "I.twice", {"hdr.d.w0": Exact(5)})
    assert run_words(sw, 5, 7)[:3] == [5, 7, 12]
    assert run_words(sw, 1, 7)[:3] == [1, 7, 14]
    assert run_words(sw, 2, 7)[:3] == [2, 7, 3]


def test_table_default_action_data_must_still_be_constant():
    ilocals = ("action put(bit<32> v) { hdr.d.w2 = v; }\n"
               "    table t { key = { hdr.d.w0: exact; } actions = { put; }\n"
               "              default_action = put(hdr.d.w1); }")
    with pytest.raises(P4CompileError, match="constant"):
        switch(ilocals=ilocals, ingress="t.apply();")

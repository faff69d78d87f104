"""Controls and tables: match kinds, priorities, defaults, const entries, action_run, exit/return."""

from __future__ import annotations

import pytest

from softswitch import P4CompileError
from softswitch.api import (
    EntryExistsError,
    EntryNotFoundError,
    Exact,
    Lpm,
    Optional,
    Range,
    RuntimeAPIError,
    Ternary,
)

from ..helpers import frame, run_words, switch

ACTIONS = """
    action set(bit<32> v) { hdr.d.w7 = v; }
    action miss() { hdr.d.w7 = 0xEEEE; }
"""


def table(keys: str, extra: str = "") -> str:
    return ACTIONS + f"""
    table t {{ key = {{ {keys} }} actions = {{ set; miss; NoAction; }} default_action = miss(); {extra} }}
"""


def test_lpm_longest_prefix_wins_and_default():
    sw = switch("t.apply();", ilocals=table("hdr.d.w0: lpm;"))
    sw.table_add("I.t", "I.set", {"hdr.d.w0": Lpm(0x0A000000, 8)}, {"v": 8})
    sw.table_add("I.t", "I.set", {"hdr.d.w0": Lpm(0x0A010000, 16)}, {"v": 16})
    sw.table_add("I.t", "I.set", {"hdr.d.w0": Lpm(0, 0)}, {"v": 0})
    assert run_words(sw, 0x0A010203)[7] == 16
    assert run_words(sw, 0x0A020203)[7] == 8
    assert run_words(sw, 0x0B000000)[7] == 0
    sw.table_delete("I.t", {"hdr.d.w0": Lpm(0, 0)})
    assert run_words(sw, 0x0B000000)[7] == 0xEEEE


def test_exact_multi_key_modify_delete_and_errors():
    sw = switch("t.apply();", ilocals=table("hdr.d.w0: exact; hdr.d.w1[7:0]: exact @name(\"low\");"))
    sw.table_add("I.t", "set", {"hdr.d.w0": Exact(1), "low": Exact(2)}, {"v": 12})
    assert run_words(sw, 1, 0x102)[7] == 12
    with pytest.raises(EntryExistsError):
        sw.table_add("I.t", "set", {"hdr.d.w0": Exact(1), "low": Exact(2)}, {"v": 1})
    sw.table_modify("I.t", "set", {"hdr.d.w0": Exact(1), "low": Exact(2)}, {"v": 13})
    assert run_words(sw, 1, 2)[7] == 13
    with pytest.raises(ValueError):
        sw.table_add("I.t", "set", {"hdr.d.w0": Exact(1), "low": Exact(256)}, {"v": 1})
    with pytest.raises(RuntimeAPIError):
        sw.table_add("I.t", "set", {"hdr.d.w0": Exact(1)}, {"v": 1})
    with pytest.raises(RuntimeAPIError):
        sw.table_add("I.t", "nosuch", {"hdr.d.w0": Exact(3), "low": Exact(0)})
    sw.table_delete("I.t", {"hdr.d.w0": Exact(1), "low": Exact(2)})
    with pytest.raises(EntryNotFoundError):
        sw.table_delete("I.t", {"hdr.d.w0": Exact(1), "low": Exact(2)})
    assert run_words(sw, 1, 2)[7] == 0xEEEE


def test_ternary_priorities_higher_wins():
    sw = switch("t.apply();", ilocals=table("hdr.d.w0: ternary;"))
    sw.table_add("I.t", "set", {"hdr.d.w0": Ternary(0x10, 0xF0)}, {"v": 1}, priority=10)
    sw.table_add("I.t", "set", {"hdr.d.w0": Ternary(0x12, 0xFF)}, {"v": 2}, priority=20)
    assert run_words(sw, 0x12)[7] == 2
    assert run_words(sw, 0x13)[7] == 1
    with pytest.raises(RuntimeAPIError):
        sw.table_add("I.t", "set", {"hdr.d.w0": Ternary(0, 0)}, {"v": 3})  # priority required
    entries = sw.table_entries("I.t")
    assert [e.priority for e in entries] == [10, 20]


def test_range_and_optional():
    sw = switch("t.apply();", ilocals=table("hdr.d.w0: range; hdr.d.w1: optional;"))
    sw.table_add("I.t", "set", {"hdr.d.w0": Range(10, 20), "hdr.d.w1": Optional(None)}, {"v": 1}, priority=1)
    sw.table_add("I.t", "set", {"hdr.d.w0": Range(15, 15), "hdr.d.w1": Optional(7)}, {"v": 2}, priority=5)
    assert run_words(sw, 15, 7)[7] == 2
    assert run_words(sw, 15, 8)[7] == 1
    assert run_words(sw, 21, 7)[7] == 0xEEEE


def test_const_entries_and_const_default():
    ilocals = ACTIONS + """
    table t { key = { hdr.d.w0: ternary; } actions = { set; miss; }
        const default_action = miss();
        const entries = { 0x1 &&& 0xF : set(1); 0x11 : set(2); _ : set(3); } }
    """
    sw = switch("t.apply();", ilocals=ilocals)
    assert run_words(sw, 0x11)[7] == 1    # earlier const entries win
    assert run_words(sw, 0x2)[7] == 3
    with pytest.raises(RuntimeAPIError):
        sw.table_set_default("I.t", "set", {"v": 1})
    with pytest.raises(RuntimeAPIError):
        sw.table_add("I.t", "set", {"hdr.d.w0": Ternary(0, 0)}, {"v": 1}, priority=1)
    assert sw.table_default("I.t").is_const


def test_set_default_and_reset():
    sw = switch("t.apply();", ilocals=table("hdr.d.w0: exact;"))
    sw.table_set_default("I.t", "set", {"v": 77})
    assert run_words(sw, 5)[7] == 77
    assert sw.table_default("I.t").params == {"v": 77}
    sw.table_reset_default("I.t")
    assert run_words(sw, 5)[7] == 0xEEEE


def test_switch_on_action_run_and_hit_miss():
    ingress = """
        switch (t.apply().action_run) {
            set: { hdr.d.w6 = 1; }
            miss: { hdr.d.w6 = 2; }
            default: { hdr.d.w6 = 3; }
        }
        if (t2.apply().hit) { hdr.d.w5 = 1; } else { hdr.d.w5 = 2; }
        if (t3.apply().miss) { hdr.d.w4 = 1; }
    """
    extra = """
    table t2 { key = { hdr.d.w0: exact; } actions = { NoAction; } }
    table t3 { key = { hdr.d.w0: exact; } actions = { NoAction; } }
    """
    sw = switch(ingress, ilocals=table("hdr.d.w0: exact;") + extra)
    for t in ("I.t2", "I.t3"):
        sw.table_add(t, "NoAction", {"hdr.d.w0": Exact(1)})
        sw.table_add(t, "NoAction", {"hdr.d.w0": Exact(2)})
    sw.table_add("I.t", "set", {"hdr.d.w0": Exact(1)}, {"v": 1})
    sw.table_add("I.t", "NoAction", {"hdr.d.w0": Exact(2)})
    assert run_words(sw, 1)[4:7] == [0, 1, 1]
    assert run_words(sw, 0)[4:7] == [1, 2, 2]
    assert run_words(sw, 2)[4:7] == [0, 1, 3]


def test_table_applied_twice_is_rejected():
    with pytest.raises(P4CompileError) as ei:
        switch("t.apply(); t.apply();", ilocals=table("hdr.d.w0: exact;"))
    assert "applied more than once" in ei.value.reason


def test_exit_and_return():
    ilocals = """
        action a_exit() { hdr.d.w1 = 1; exit; }
        action a_ret() { hdr.d.w2 = 1; return; }
    """
    ingress = """
        if (hdr.d.w0 == 1) { a_exit(); hdr.d.w3 = 1; }
        if (hdr.d.w0 == 2) { a_ret(); hdr.d.w3 = 2; return; }
        hdr.d.w4 = 1;
    """
    sw = switch(ingress, ilocals=ilocals, egress="hdr.d.w5 = 5;")
    assert run_words(sw, 1)[1:6] == [1, 0, 0, 0, 5]   # exit ends ingress only; egress still runs
    assert run_words(sw, 2)[1:6] == [0, 1, 2, 0, 5]


def test_direct_action_call_with_inout_args_and_control_locals():
    ilocals = """
        bit<32> acc = 3;
        action swap(inout bit<32> a, inout bit<32> b) { bit<32> t = a; a = b; b = t; }
        action add(in bit<32> x) { acc = acc + x; }
    """
    ingress = "swap(hdr.d.w0, hdr.d.w1); add(hdr.d.w2); add(4); hdr.d.w3 = acc;"
    sw = switch(ingress, ilocals=ilocals)
    assert run_words(sw, 1, 2, 10)[:4] == [2, 1, 10, 17]


def test_nested_control_apply_with_arguments():
    decls = """
    control Sub(inout data_t d, in bit<32> k, out bit<32> r) {
        table st { key = { k: exact; } actions = { NoAction; } }
        apply { r = k + 1; d.w6 = 66; st.apply(); }
    }
    """
    ilocals = "Sub() sub;"
    sw = switch("bit<32> r; sub.apply(hdr.d, hdr.d.w0, r); hdr.d.w1 = r;", decls=decls, ilocals=ilocals)
    assert run_words(sw, 41)[:2] == [41, 42]
    assert "I.sub.st" in {t.preamble.name for t in sw.p4info.tables}


def test_direct_counter_counts_hits():
    ilocals = ACTIONS + """
    direct_counter(CounterType.packets_and_bytes) dc;
    table t { key = { hdr.d.w0: exact; } actions = { set; miss; } default_action = miss(); counters = dc; }
    """
    sw = switch("t.apply();", ilocals=ilocals)
    sw.table_add("I.t", "set", {"hdr.d.w0": Exact(1)}, {"v": 1})
    run_words(sw, 1)
    run_words(sw, 1)
    run_words(sw, 2)
    assert sw.direct_counter_read("I.t", {"hdr.d.w0": Exact(1)}) == (2, 2 * 46)
    assert sw.table_entries("I.t")[0].counter == (2, 92)


def test_missing_default_action_is_noaction_defaultonly():
    ilocals = """
        @name("fwd") action set_port(@name("out_port") bit<9> p) { sm.egress_spec = p; }
        table t { key = { hdr.d.w0: exact; } actions = { set_port; } }
    """
    sw = switch("t.apply();", ilocals=ilocals)
    assert sw.table_default("I.t").action == "NoAction"
    sw.table_add("I.t", "I.fwd", {"hdr.d.w0": Exact(1)}, {"out_port": 4})
    assert [p for p, _ in sw.process(0, frame(1))] == [4]
    assert sw.table_entries("I.t")[0].params == {"out_port": 4}
    with pytest.raises(RuntimeAPIError):
        sw.table_add("I.t", "NoAction", {"hdr.d.w0": Exact(2)})   # @defaultonly
    (t,) = sw.p4info.tables
    acts = {a.preamble.id: a for a in sw.p4info.actions}
    refs = {acts[r.id].preamble.name: r.scope for r in t.action_refs}
    assert refs == {"I.fwd": 0, "NoAction": 2}
    assert [p.name for p in acts[t.action_refs[0].id].params] == ["out_port"]


def test_switch_on_a_value_with_fallthrough_labels():
    ingress = """
        switch (hdr.d.w0[7:0]) {
            1: { hdr.d.w1 = 10; }
            2:
            3: { hdr.d.w1 = 20; }
            default: { hdr.d.w1 = 30; }
        }
    """
    sw = switch(ingress)
    assert [run_words(sw, v)[1] for v in (1, 2, 3, 4)] == [10, 20, 20, 30]


def test_atomic_annotated_block():
    sw = switch("@atomic { hdr.d.w1 = hdr.d.w0 + 1; }")
    assert run_words(sw, 1)[1] == 2


@pytest.mark.parametrize("backend", ["python", "native"])
def test_parenthesised_single_mask_and_range_keysets(backend):
    """``(v &&& m)`` and ``(lo .. hi)`` are keysets of one key too (P4_16's tupleKeysetExpression
    with one reduced element), in const entries and in select cases."""
    ilocals = """
        action put(bit<32> v) { hdr.d.w2 = v; }
        table tm {
            key = { hdr.d.w0 : ternary; }
            actions = { put; NoAction; }
            const entries = { (32w0x10 &&& 32w0xF0) : put(1); }
        }
        table tr {
            key = { hdr.d.w1 : range; }
            actions = { put; NoAction; }
            const entries = { (32w5 .. 32w9) : put(2); }
        }
    """
    parser = """
    state start { pkt.extract(hdr.eth); transition select(hdr.eth.etype) {
        (16w0x88b0 &&& 16w0xFFF0): parse_d; default: accept; } }
    state parse_d { pkt.extract(hdr.d); transition accept; }
    """
    sw = switch("tm.apply(); tr.apply();", backend=backend, ilocals=ilocals, parser=parser)
    assert run_words(sw, 0x13, 0)[2] == 1
    assert run_words(sw, 0x23, 7)[2] == 2
    assert run_words(sw, 0x23, 10)[2] == 0

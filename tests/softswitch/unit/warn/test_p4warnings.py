"""p4c's warnings for accepted programs: unused (folded) top-level constants, size on const tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from softswitch import Switch
from softswitch.api import P4CompileError

from ..helpers import run_words, switch

ROOT = Path(__file__).resolve().parents[4]

ILOCALS = """
    action set_port(bit<9> p) { sm.egress_spec = p; }
    table t {
        key = { hdr.eth.dst: exact; }
        actions = { set_port; NoAction; }
        size = 16;
        const entries = { 48w1 : set_port(9w1); }
    }
"""


def test_dhc_compiles_without_warnings():
    sw = Switch.load(str(ROOT / "p4src" / "dhc.p4"), defines={}, include_dirs=[], cpu_port=None)
    assert sw.prog.warnings == []


def test_folded_constant_and_size_of_const_table_warn_as_p4c():
    decls = 'const bit<8> FOLDED = 8w3;\n@noWarn("unused") const bit<8> QUIET = 8w4;\n'
    sw = switch("t.apply(); hdr.d.w0 = (bit<32>)(FOLDED + QUIET);", ilocals=ILOCALS, decls=decls)
    ws = sw.prog.warnings
    assert len(ws) == 2, ws
    assert "[--Wwarn=unused]" in ws[0] and ws[0].endswith("warning: 'FOLDED' is unused")
    assert "[--Wwarn=mismatch]" in ws[1] and "size 16 specified for table with constant entries" in ws[1]


def test_literal_that_does_not_fit_warns_and_is_truncated_on_both_backends():
    ilocals = ("action put(bit<32> v) { hdr.d.w2 = v; }\n"
               "table t { key = { hdr.d.w0[7:0]: exact; } actions = { put; }\n"
               "          const entries = { 0x105: put(1); } }")
    for backend in ("python", "native"):
        sw = switch("t.apply(); meta.m8 = 257; hdr.d.w3 = (bit<32>) meta.m8; int<4> s = 8;"
                    "hdr.d.w4 = (bit<32>) (bit<4>) s; hdr.d.w5 = hdr.d.w5 << 8w40;",
                    ilocals=ilocals, backend=backend)
        ws = sw.prog.warnings
        assert len(ws) == 4, ws
        assert "[--Wwarn=mismatch]" in ws[0] and "0x105: value does not fit in 8 bits" in ws[0]
        assert "257: value does not fit in 8 bits" in ws[1]
        assert "[--Wwarn=overflow]" in ws[2] and "8: signed value does not fit in 4 bits" in ws[2]
        assert "<<: shifting value with 32 bits by 40" in ws[3]
        assert run_words(sw, 5, 0, 0, 0, 0, 9)[2:6] == [1, 1, 8, 0]


def test_duplicate_and_covered_const_entries_warn_and_the_first_wins():
    ilocals = ("action put(bit<32> v) { hdr.d.w2 = v; }\n"
               "table t { key = { hdr.d.w0: exact; } actions = { put; }\n"
               "          const entries = { 5: put(1); 0x5: put(2); } }\n"
               "table u { key = { hdr.d.w1: ternary; hdr.d.w0: exact; } actions = { put; }\n"
               "  const entries = { (7 &&& 0xF, 5): put(10); (0x17, 5): put(20); (_, 5): put(30); } }")
    for backend in ("python", "native"):
        sw = switch("t.apply(); hdr.d.w3 = hdr.d.w2; hdr.d.w1 = 0x17; u.apply();", ilocals=ilocals,
                    backend=backend)
        ws = sw.prog.warnings
        assert len(ws) == 2, ws
        assert "[--Wwarn=table-keys]" in ws[0] and "table t: duplicate entry keys" in ws[0]
        assert "table u: ternary entry covered" in ws[1]
        assert run_words(sw, 5)[2:4] == [10, 1]


def test_serializable_enum_member_that_does_not_fit_is_an_error_a_typed_one_wraps():
    """p4c's error corpus (serenum-typedef): an untyped value out of the underlying type's range
    is an error; a typed value wraps as any typed constant does."""
    with pytest.raises(P4CompileError, match="300 is out of bounds of the underlying type bit<8>"):
        switch("hdr.d.w2 = (bit<32>) SE.A;", decls="enum bit<8> SE { A = 300, B = 0x1F }")
    with pytest.raises(P4CompileError, match="-1 is negative, but the underlying type bit<4>"):
        switch("", decls="enum bit<4> SE { A = -1 }")
    sw = switch("hdr.d.w2 = (bit<32>) SE.A;", decls="enum bit<8> SE { A = (bit<8>)4 * 100, B = 0x1F }")
    assert sw.prog.warnings == [] and run_words(sw, 1)[2] == 400 & 0xFF

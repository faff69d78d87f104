"""p4c's warnings for accepted programs: unused (folded) top-level constants, size on const tables."""

from __future__ import annotations

from pathlib import Path

from softswitch import Switch

from .helpers import switch

ROOT = Path(__file__).resolve().parents[3]

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
    assert "[--Wwarn=unused]" in ws[0] and "FOLDED" in ws[0]
    assert "[--Wwarn=mismatch]" in ws[1] and "size 16 specified for table with constant entries" in ws[1]

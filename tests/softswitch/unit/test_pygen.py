"""The python backend is generated from the typed IR (softswitch/pygen), not from syntax trees:
what only it runs (widths above 128 bits, trace entries), tuples, and how the backends split."""

from __future__ import annotations

import pytest

from softswitch.ir import nodes as ir
from softswitch.native import build
from softswitch.native.build import NativeBuildError

from .helpers import frame, run_words, switch

WIDE = """
    bit<256> v = ((bit<256>) hdr.d.w0) << 200;
    v = v + (((bit<256>) hdr.d.w1) << 224);
    hdr.d.w2 = (bit<32>) (v >> 200);
    hdr.d.w3 = (bit<32>) (v >> 224);
    int<200> s = -((int<200>) ((bit<200>) hdr.d.w0));
    hdr.d.w4 = (bit<32>) ((bit<200>) (s >> 3));
"""


def test_code_comes_from_the_ir_and_the_front_end_generates_none():
    sw = switch("hdr.d.w2 = hdr.d.w0 + hdr.d.w1;")
    assert isinstance(sw.code.ir, ir.Program)
    assert "def C_I(L):" in sw.code.source
    assert "L.p_hdr.d.w2 = ((L.p_hdr.d.w0 + L.p_hdr.d.w1)" in sw.code.source
    assert not hasattr(sw.prog, "source") and not hasattr(sw.prog, "ns")
    assert run_words(sw, 5, 7)[2] == 12


def test_widths_above_128_bits_run_on_python_and_native_refuses_them():
    sw = switch(WIDE)
    w = run_words(sw, 3, 4)
    assert w[2] == (3 + (4 << 24)) & 0xFFFFFFFF and w[3] == 4
    assert w[4] == ((-3) >> 3) & 0xFFFFFFFF
    if build.compiler() is None:
        pytest.skip("no C compiler")
    with pytest.raises(NativeBuildError, match=r"bit<256>.*widths above 128 bits"):
        switch(WIDE, backend="native")


def test_native_refuses_a_wide_varbit_outside_its_byte_array_uses():
    """varbit<256> is a byte array in C (varbit_wide.p4 runs there); a table key of one is not."""
    from pathlib import Path

    from softswitch import backend

    prog = Path(__file__).parents[1] / "programs" / "varbit_wide.p4"
    text = prog.read_text().replace(
        "    apply {\n        hdr.r.setValid();",
        "    table t { key = { hdr.a.data: exact; } actions = { NoAction; } }\n"
        "    apply {\n        t.apply();\n        hdr.r.setValid();", 1)
    assert "t.apply();" in text
    backend.from_source(text, "wide_key.p4", backend="python")
    if build.compiler() is None:
        pytest.skip("no C compiler")
    with pytest.raises(NativeBuildError, match=r"field data wider than 128 bits in table"):
        backend.from_source(text, "wide_key.p4", backend="native")


def test_tuples_assigned_compared_and_indexed():
    ingress = """tuple<bit<8>, bool> t = {8w3, true}; tuple<bit<8>, bool> u = t;
                 if (u == t) { hdr.d.w2 = 1; }
                 u[0] = 8w4; if (u != t && !(u[0] == t[0]) && u[1]) { hdr.d.w3 = (bit<32>) u[0]; }"""
    assert run_words(switch(ingress), 0)[2:4] == [1, 4]


def test_log_msg_assert_and_assume_are_trace_entries():
    sw = switch('log_msg("seen"); assert(hdr.d.w0 == 1); assume(hdr.d.w1 == 7);')
    sw.process(0, frame(2, 7))
    text = "\n".join(sw.last_trace)
    assert "log: seen" in text and "assert failed" in text and "assume failed" not in text
    sw.process(0, frame(1, 8))
    text = "\n".join(sw.last_trace)
    assert "assert failed" not in text and "assume failed" in text

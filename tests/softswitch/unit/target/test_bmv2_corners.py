"""Corners where p4c's lowering decides what BMv2 runs, on both backends: how arguments are
passed (copies, substitution, temporaries) and copied back around `exit`, where `out` values
start, union membership after calls, stack indexes in table keys, varbit `==`, controller
headers with structs, select on error/enum, extern calls in functions (each test names the p4c
pass or BMv2 code it follows)."""

from __future__ import annotations

import pytest

from softswitch.api import Exact, P4CompileError
from softswitch.backend import from_source
from softswitch.native.build import compiler

from ..helpers import run_words, switch

BACKENDS = ["python", pytest.param("native", marks=pytest.mark.skipif(compiler() is None, reason="no cc"))]


EXIT_DECLS = """
control Sub(inout bit<32> v, out bit<32> o) { apply { v = v + 2; o = 9; exit; } }
"""

EXIT_LOCALS = """
    action a(inout bit<32> x, out bit<32> y) { x = x + 1; y = 7; exit; }
    action outer(inout bit<32> z) { a(z, hdr.d.w5); }
    table t { actions = { a(hdr.d.w2, hdr.d.w3); } default_action = a(hdr.d.w2, hdr.d.w3); }
    Sub() sub;
    Sub() sub2;
"""

EXIT_INGRESS = """
        if (hdr.d.w7 == 1) { a(hdr.d.w0, hdr.d.w1); }
        else if (hdr.d.w7 == 2) { t.apply(); }
        else if (hdr.d.w7 == 3) { outer(hdr.d.w4); }
        else if (hdr.d.w7 == 4) { sub.apply(hdr.d.w0, hdr.d.w1); }
        else if (hdr.d.w7 == 5) { sub2.apply(hdr.d.w2, hdr.d.w2); }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_exit_copy_out(backend: str):
    sw = switch(EXIT_INGRESS, backend=backend, decls=EXIT_DECLS, ilocals=EXIT_LOCALS)
    w = [10, 20, 30, 40, 50, 60, 70]
    # p4c RemoveActionParameters (InsertBeforeExits): copy-out before `exit`, direct call or table
    assert run_words(sw, *w, 1) == [11, 7, 30, 40, 50, 60, 70, 1]
    assert run_words(sw, *w, 2) == [10, 20, 31, 7, 50, 60, 70, 2]
    # p4c InlineActions: an action called from an action is inlined with its copy-out after the
    # body, which `exit` skips; the outer action's own copy-out still happens (unchanged z)
    assert run_words(sw, *w, 3) == [10, 20, 30, 40, 50, 60, 70, 3]
    # p4c GeneralInliner: non-aliasing arguments replace the parameters, the writes land
    assert run_words(sw, *w, 4) == [12, 9, 30, 40, 50, 60, 70, 4]
    # aliasing arguments: temporaries copied out after the inlined body, skipped by `exit`
    assert run_words(sw, *w, 5) == [10, 20, 30, 40, 50, 60, 70, 5]


OUT_DECLS = """
bit<32> f(out bit<32> y) { y = y + 3; return 1; }
control Acc(out bit<32> o) { apply { o = o + 1; } }
control Two(inout bit<32> v, out bit<32> o) { apply { o = o + 4; v = v + 1; } }
"""

OUT_LOCALS = """
    action rd(out bit<32> y) { y = y + 5; }
    action in_act(out bit<32> y) { rd(y); y = y + 100; }
    table t { actions = { rd(hdr.d.w3); } default_action = rd(hdr.d.w3); }
    Acc() acc;
    Two() two;
"""

OUT_INGRESS = """
        rd(hdr.d.w0);
        hdr.d.w6 = f(hdr.d.w1);
        t.apply();
        in_act(hdr.d.w2);
        acc.apply(hdr.d.w4);
        two.apply(hdr.d.w5, hdr.d.w5);
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_scalar_starts_fresh(backend: str):
    sw = switch(OUT_INGRESS, backend=backend, decls=OUT_DECLS, ilocals=OUT_LOCALS)
    # p4c RemoveActionParameters / InlineFunctions / InlineActions: an `out` parameter is a new
    # local with no initialiser; BMv2 holds it in zero-initialised metadata ("scalars")
    got = run_words(sw, 1000, 2000, 3000, 4000, 5000, 6000)
    assert got[:4] == [5, 3, 105, 5] and got[6] == 1
    # p4c GeneralInliner: a non-aliasing argument replaces the parameter (the caller's value);
    # aliasing ones become temporaries (a fresh `o`), copied out in parameter order
    assert got[4] == 5001
    assert got[5] == 4


VARBIT = """
#include <core.p4>
#include <v1model.p4>
header fix_t { bit<8> la; bit<8> lb; }
header var_t { varbit<32> opt; }
header res_t { bit<8> f; bit<8> h; }
struct headers_t { fix_t fix; var_t a; var_t b; res_t res; }
struct metadata_t { }
parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.fix);
        pk.extract(hdr.a, (bit<32>)hdr.fix.la << 3);
        pk.extract(hdr.b, (bit<32>)hdr.fix.lb << 3);
        transition accept;
    }
}
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        hdr.res.f = hdr.a.opt == hdr.b.opt ? 8w1 : 8w0;
        hdr.res.h = hdr.a != hdr.b ? 8w0 : 8w1;
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_varbit_equality_compares_values(backend: str):
    sw = from_source(VARBIT, "varbit_eq.p4", backend=backend)
    # BMv2 evaluates `==` on fields with Data::operator== (bm_sim/data.h), which compares the
    # values only: 8-bit 0x05 equals 16-bit 0x0005; p4c's SimplifyComparisons expands the
    # header `==` into field comparisons
    cases = {bytes([1, 2, 5, 0, 5]): b"\x01\x01", bytes([1, 1, 5, 5]): b"\x01\x01",
             bytes([1, 1, 5, 6]): b"\x00\x00", bytes([2, 1, 0, 1, 1]): b"\x01\x01",
             bytes([2, 2, 1, 0, 0, 1]): b"\x00\x00"}
    for frame, res in cases.items():
        (port, out), = sw.process(0, frame)
        assert (port, out) == (1, frame + res), frame.hex()


SUB_DECLS = """
parser Al(packet_in p, inout bit<32> a, inout bit<32> b) {
    state start { a = a + 1; b = b + 10; transition accept; } }
parser Os(packet_in p, out bit<32> o) { state start { o = o + 1; transition accept; } }
parser Rj(packet_in p, inout bit<32> a, inout bit<32> b) { state start { a = 5; transition reject; } }
"""

SUB_PARSER = """
    Al() al; Os() os; Os() os1; Rj() rj;
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.d);
        transition select(hdr.d.w7) { 1: alias; 2: two_a; 3: two_b; 4: rej; 5: single; default: accept; } }
    state alias { meta.m0 = hdr.d.w0; al.apply(pkt, meta.m0, meta.m0); transition accept; }
    state two_a { meta.m0 = hdr.d.w0; os.apply(pkt, meta.m0); transition accept; }
    state two_b { meta.m1 = hdr.d.w1; os.apply(pkt, meta.m1); transition accept; }
    state rej { meta.m1 = 7; rj.apply(pkt, meta.m1, meta.m1); transition accept; }
    state single { meta.m0 = hdr.d.w0; os1.apply(pkt, meta.m0); transition accept; }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_subparser_arguments_as_p4c_inlines_them(backend: str):
    sw = switch("hdr.d.w0 = meta.m0; hdr.d.w1 = meta.m1;", backend=backend, decls=SUB_DECLS,
                parser=SUB_PARSER)
    # p4c GeneralInliner (parser states): aliasing arguments, or apply sites with different
    # arguments, become temporaries copied in before and out after the sub-parser (in parameter
    # order, not at all on reject); otherwise the arguments replace the parameters
    assert run_words(sw, 100, 200, 0, 0, 0, 0, 0, 1)[:2] == [110, 0]
    assert run_words(sw, 100, 200, 0, 0, 0, 0, 0, 2)[:2] == [1, 0]
    assert run_words(sw, 100, 200, 0, 0, 0, 0, 0, 3)[:2] == [0, 1]
    assert run_words(sw, 100, 200, 0, 0, 0, 0, 0, 4)[:2] == [0, 7]
    assert run_words(sw, 100, 200, 0, 0, 0, 0, 0, 5)[:2] == [101, 0]


KEY_LOCALS = """
    action setw(bit<32> v) { hdr.d.w1 = v; }
    table t {
        key = { hdr.s[hdr.d.w0].w2: exact; hdr.d.w3: exact; }
        actions = { setw; NoAction; }
        default_action = NoAction;
    }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_stack_index_out_of_range_in_table_key(backend: str):
    ing = "hdr.s[0].setValid(); hdr.s[1].setValid(); hdr.s[0].w2 = 5; hdr.s[1].w2 = 6; t.apply();"
    sw = switch(ing, backend=backend, hfields="data_t[2] s;", ilocals=KEY_LOCALS)
    for key, v in ((0, 77), (6, 66), (5, 55)):
        sw.table_add("I.t", "I.setw", {"hdr.s[hdr.d.w0].w2": Exact(key), "hdr.d.w3": Exact(9)}, {"v": v})
    # p4c's SimplifyKey assigns a run-time-indexed key to a temporary before the apply; with the
    # index out of range that assignment does nothing (run-time index lowering), the temporary
    # keeps its zero start, and the lookup still runs
    assert run_words(sw, 1, 0, 0, 9)[:2] == [1, 66]
    assert run_words(sw, 0, 0, 0, 9)[:2] == [0, 55]
    assert run_words(sw, 2, 0, 0, 9)[:2] == [2, 77]
    assert run_words(sw, 0xFFFFFFFF, 0, 0, 9)[:2] == [0xFFFFFFFF, 77]


UNION_DECLS = """
header h32_t { bit<32> x; }
header_union u_t { h32_t a; h32_t b; }
bit<32> fv(inout h32_t h) { h.setValid(); h.x = 3; return 1; }
void fv2(inout h32_t h) { h.setValid(); h.x = 4; }
control S(inout h32_t h) { apply { h.setValid(); h.x = 5; } }
control S2(in h32_t hin, inout u_t u) { apply { u.a = hin; } }
"""

UNION_INGRESS = """
    hdr.u.b.setValid(); hdr.u.b.x = 9;
    if (hdr.d.w0 == 1) { av(hdr.u.a); }
    else if (hdr.d.w0 == 2) { hdr.d.w5 = fv(hdr.u.a); }
    else if (hdr.d.w0 == 3) { fv2(hdr.u.a); }
    else if (hdr.d.w0 == 4) { s.apply(hdr.u.a); }
    else if (hdr.d.w0 == 5) { hdr.src.setValid(); hdr.src.x = 6; s2.apply(hdr.src, hdr.u); }
    else if (hdr.d.w0 == 6) { if (fv(hdr.u.a) == 1) { hdr.d.w5 = 1; } }
    hdr.d.w1 = hdr.u.a.isValid() ? 32w1 : 32w0;
    hdr.d.w2 = hdr.u.b.isValid() ? 32w1 : 32w0;
    hdr.d.w3 = hdr.u.a.x;
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_union_membership_through_callees(backend: str):
    sw = switch(UNION_INGRESS, backend=backend, decls=UNION_DECLS, hfields="u_t u; h32_t src;",
                ilocals="action av(inout h32_t h) { h.setValid(); h.x = 2; }  S() s; S2() s2;")
    # a union member given to an action, function (statement or inside an expression) or
    # sub-control comes back valid through p4c's copy-out, an assignment to the member, and
    # BMv2's union then invalidates the other members (P4_16 spec, header unions)
    for case, x in ((1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 3)):
        assert run_words(sw, case)[1:4] == [1, 0, x], case


CPU_DECLS = """
struct port_pair_t { bit<9> port; bit<7> pad; }
struct inner_t { bit<8> lo; port_pair_t pp; }
@controller_header("packet_in") header packet_in_t { bit<16> reason; inner_t meta; bit<8> tail; }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_controller_header_with_struct_fields(backend: str):
    sw = switch("", backend=backend, decls=CPU_DECLS, hfields="packet_in_t cpu;")
    (cm,) = sw.p4info.controller_packet_metadata
    # p4c's control-plane FlattenHeader: struct-typed fields are flattened in layout order,
    # each named by its path (the `@name` p4c gives the flattened field), ids 1, 2, ...
    assert cm.preamble.name == "packet_in"
    assert [(m.id, m.name, m.bitwidth) for m in cm.metadata] == [
        (1, "reason", 16), (2, "meta.lo", 8), (3, "meta.pp.port", 9), (4, "meta.pp.pad", 7), (5, "tail", 8)]


FRESH_DECLS = """
header h32_t { bit<32> x; }
struct pair_t { bit<32> a; h32_t h; bool f; }
void fill(out pair_t p) { p.a = p.a + 1; }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_struct_starts_fresh(backend: str):
    ing = """
        meta.p.a = 40; meta.p.h.setValid(); meta.p.h.x = 7; meta.p.f = true;
        if (hdr.d.w0 == 1) { fill(meta.p); } else if (hdr.d.w0 == 2) { put(meta.p); } else { tt.apply(); }
        hdr.d.w1 = meta.p.a;
        hdr.d.w2 = meta.p.h.isValid() ? 32w1 : 32w0;
        hdr.d.w3 = meta.p.f ? 32w1 : 32w0;
    """
    sw = switch(ing, backend=backend, decls=FRESH_DECLS, mfields="pair_t p;",
                ilocals="action put(out pair_t p) { p.a = p.a + 2; }\n"
                        "table tt { actions = { put(meta.p); } default_action = put(meta.p); }")
    # p4c InlineFunctions / RemoveActionParameters: an `out` struct is a new local, its scalar
    # fields zero-started BMv2 metadata, its header invalid; copied out field by field
    assert run_words(sw, 1)[1:4] == [1, 0, 0]
    assert run_words(sw, 2)[1:4] == [2, 0, 0]
    assert run_words(sw, 3)[1:4] == [2, 0, 0]


RESET_DECLS = """
header h32_t { bit<32> x; }
struct pair_t { bit<32> a; h32_t h; }
control S(out h32_t h) { apply { } }
control S3(out pair_t p) { apply { } }
parser PS(packet_in p, out h32_t h) { state start { transition accept; } }
"""

RESET_PARSER = """
    PS() ps;
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.d); hdr.src.setValid(); hdr.src.x = 3;
                  transition select(hdr.d.w0) { 3: sub; default: accept; } }
    state sub { ps.apply(pkt, hdr.src); transition accept; }
"""

RESET_INGRESS = """
    meta.p.a = 40; meta.p.h.setValid();
    if (hdr.d.w0 == 1) { s.apply(hdr.src); }
    if (hdr.d.w0 == 2) { s3.apply(meta.p); }
    hdr.d.w1 = hdr.src.isValid() ? 32w1 : 32w0;
    hdr.d.w2 = meta.p.h.isValid() ? 32w1 : 32w0;
    hdr.d.w3 = meta.p.a;
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_argument_of_sub_block_is_reset(backend: str):
    sw = switch(RESET_INGRESS, backend=backend, decls=RESET_DECLS, hfields="h32_t src;",
                mfields="pair_t p;", ilocals="S() s; S3() s3;", parser=RESET_PARSER)
    # p4c's GeneralInliner resets an `out` argument of an applied control or parser
    # (DoResetHeaders): its headers become invalid even when the callee never touches them;
    # scalar fields of a substituted struct keep their values
    assert run_words(sw, 0)[1:4] == [1, 1, 40]
    assert run_words(sw, 1)[1:4] == [0, 1, 40]
    assert run_words(sw, 2)[1:4] == [1, 0, 40]
    assert run_words(sw, 3)[1:4] == [0, 1, 40]


COPY_DECLS = """
header h32_t { bit<32> x; }
void fn(inout h32_t a, in h32_t b) { a.x = b.x + 1; a.x = a.x + b.x; }
control S4(inout h32_t a, inout h32_t b) { apply { a.x = a.x + 1; b.x = b.x + 10; } }
control S5(inout h32_t a, inout h32_t b) { apply { a.x = 8; exit; } }
"""

COPY_LOCALS = """
    action rd(in h32_t x) { hdr.src.x = 5; hdr.d.w2 = x.x; }
    action two(inout h32_t a, inout h32_t b) { a.x = a.x + 1; b.x = b.x + 10; }
    action ex(inout h32_t h) { h.x = 8; exit; }
    action outer() { ex(hdr.src); }
    table t { actions = { ex(hdr.src); } default_action = ex(hdr.src); }
    S4() s4;
    S5() s5;
"""

COPY_INGRESS = """
    hdr.src.setValid(); hdr.src.x = 3;
    if (hdr.d.w0 == 1) { rd(hdr.src); }
    else if (hdr.d.w0 == 2) { two(hdr.src, hdr.src); }
    else if (hdr.d.w0 == 3) { ex(hdr.src); }
    else if (hdr.d.w0 == 4) { outer(); }
    else if (hdr.d.w0 == 5) { fn(hdr.src, hdr.src); }
    else if (hdr.d.w0 == 6) { t.apply(); }
    else if (hdr.d.w0 == 7) { s4.apply(hdr.src, hdr.src); }
    else if (hdr.d.w0 == 8) { s5.apply(hdr.src, hdr.src); }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_compound_arguments_are_copied(backend: str):
    sw = switch(COPY_INGRESS, backend=backend, decls=COPY_DECLS, hfields="h32_t src;",
                ilocals=COPY_LOCALS, egress="hdr.d.w1 = hdr.src.x;")
    # p4c RemoveActionParameters / InlineActions / InlineFunctions copy header arguments in and
    # out like scalars: an `in` copy does not see later writes, aliasing inout copies are copied
    # back in parameter order, `exit` copies back unless the action was called from an action
    assert run_words(sw, 1)[1:3] == [5, 3]
    assert run_words(sw, 2)[1] == 13
    assert run_words(sw, 3)[1] == 8
    assert run_words(sw, 4)[1] == 3
    assert run_words(sw, 5)[1] == 7
    assert run_words(sw, 6)[1] == 8
    # p4c's GeneralInliner with aliasing arguments: temporaries, copied back in parameter order,
    # not at all after `exit`
    assert run_words(sw, 7)[1] == 13
    assert run_words(sw, 8)[1] == 3


SELECT_PARSER = """
    Kind k = Kind.A;
    error e = error.NoError;
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.d);
        transition select(hdr.d.w0) { 1: setb; 2: sete; default: decide; } }
    state setb { k = Kind.B; transition decide; }
    state sete { e = error.PacketTooShort; transition decide; }
    state decide { transition select(k, e) {
        (Kind.B, error.NoError): mb; (Kind.A, error.PacketTooShort): me; default: accept; } }
    state mb { meta.m0 = 11; transition accept; }
    state me { meta.m0 = 22; transition accept; }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_select_on_error_and_enum_values(backend: str):
    sw = switch("hdr.d.w1 = meta.m0;", backend=backend, decls="enum Kind { A, B, C }",
                parser=SELECT_PARSER)
    # P4_16 select keys may be error and enum values (exact matches; p4c's BMv2 back end gives
    # them their numeric codes)
    assert [run_words(sw, w)[1] for w in (0, 1, 2)] == [0, 11, 22]


def test_select_on_error_with_a_mask_is_rejected():
    bad = SELECT_PARSER.replace("(Kind.A, error.PacketTooShort)", "(Kind.A, error.PacketTooShort &&& 1)")
    with pytest.raises(P4CompileError, match="only exact values"):
        switch("", decls="enum Kind { A, B, C }", parser=bad)


FUNC_DECLS = """
bit<32> pick(in bit<32> lo) { bit<32> r; random(r, lo, lo); return r; }
bit<16> ident(in bit<16> v) {
    bit<16> h; hash(h, HashAlgorithm.identity, 16w0, { v }, 32w65536); log_msg("h={}", {h}); return h; }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_extern_functions_inside_a_function(backend: str):
    sw = switch("hdr.d.w1 = pick(hdr.d.w0); hdr.d.w2 = (bit<32>)ident(hdr.d.w0[15:0]);",
                backend=backend, decls=FUNC_DECLS)
    # p4c inlines functions, so a function may call random, hash and log_msg as its caller can
    assert run_words(sw, 0x12345)[:3] == [0x12345, 0x12345, 0x2345]


RET_DECLS = """
header h32_t { bit<32> x; }
header_union u_t { h32_t a; h32_t b; }
h32_t mk(inout h32_t a) { a.x = a.x + 1; h32_t r; return r; }
h32_t mk2(inout h32_t a) { a.x = a.x + 1; h32_t r = a; r.x = 50; return r; }
"""

RET_INGRESS = """
    hdr.src.setValid(); hdr.src.x = 3; hdr.dst.setValid(); hdr.dst.x = 9;
    hdr.u.b.setValid();
    if (hdr.d.w0 == 1) { hdr.dst = mk(hdr.src); }
    if (hdr.d.w0 == 2) { hdr.dst = mk2(hdr.src); hdr.src.x = 77; }
    if (hdr.d.w0 == 3) { hdr.u.a = mk2(hdr.src); }
    hdr.d.w1 = hdr.src.x; hdr.d.w2 = hdr.dst.x; hdr.d.w3 = hdr.dst.isValid() ? 32w1 : 32w0;
    hdr.d.w4 = hdr.u.b.isValid() ? 32w1 : 32w0;
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_header_returned_by_function_with_inout_arguments(backend: str):
    sw = switch(RET_INGRESS, backend=backend, decls=RET_DECLS, hfields="h32_t src; h32_t dst; u_t u;")
    # the returned header is assigned with BMv2's assign_header (an invalid one only invalidates
    # the destination) after the inout copy-out; a union member target evicts its siblings
    assert run_words(sw, 1)[1:5] == [4, 9, 0, 1]
    assert run_words(sw, 2)[1:5] == [77, 50, 1, 1]
    assert run_words(sw, 3)[1:5] == [4, 9, 1, 0]


def test_tuple_indexing():
    ing = """tuple<bit<32>, bit<16>> t = {hdr.d.w0, 16w5};
             hdr.d.w1 = t[0]; t[1] = 16w9; hdr.d.w2 = (bit<32>)t[1];"""
    # P4_16 (8.11): a tuple is indexed with compile-time constants; both backends (tuples are
    # structs before code generation, specialize.py)
    assert run_words(switch(ing), 7)[:3] == [7, 7, 9]
    with pytest.raises(P4CompileError, match="out of range"):
        switch("tuple<bit<32>, bit<16>> t = {hdr.d.w0, 16w5}; hdr.d.w1 = t[2];")
    if compiler() is not None:
        assert run_words(switch(ing, backend="native"), 7)[:3] == [7, 7, 9]

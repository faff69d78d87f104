"""p4c's warnings that follow the program's data flow: overlapping ``out`` arguments
(``ordering``) -- with p4c's wording, and none where p4c gives none."""

from __future__ import annotations

import pytest

from .test_p4warnings_kinds import _kinds, _texts, switch

INOUT2 = "action a2(inout bit<32> x, inout bit<32> y) { x = x + 1; y = y + 2; }"


@pytest.mark.parametrize("kw, texts", [
    # p4c's issue2288-2: the inner call writes h.a, which the outer one also takes inout
    (dict(decls="bit<8> g(inout bit<8> z) { z = 3; return 1; }"
                " bit<8> f(in bit<8> z, inout bit<8> x) { return 4 + z + x; }",
          ingress="f(g(meta.m8), meta.m8);"),
     ["meta.m8: 'out' argument has fields in common with meta.m8"]),
    # two inout arguments on the same field, or one inside the other: one warning for each
    (dict(ilocals=INOUT2, ingress="a2(hdr.d.w0, hdr.d.w0);"),
     ["hdr.d.w0: 'out' argument has fields in common with hdr.d.w0"] * 2),
    (dict(decls="control S(inout data_t d, inout bit<32> w) { apply { w = d.w1; } }",
          ilocals="S() s;", ingress="s.apply(hdr.d, hdr.d.w0);"),
     ["hdr.d: 'out' argument has fields in common with hdr.d.w0",
      "hdr.d.w0: 'out' argument has fields in common with hdr.d"]),
])
def test_overlapping_out_arguments_warn_as_p4c(kw, texts):
    sw = switch(**kw)
    assert _texts(sw) == texts
    assert set(_kinds(sw)) == {"ordering"}


@pytest.mark.parametrize("kw", [
    dict(ilocals=INOUT2, ingress="a2(hdr.d.w0, hdr.d.w1);"),             # different fields
    dict(ilocals="action a(in bit<32> x, inout bit<32> y) { y = x; }",  # an in argument may overlap
         ingress="a(hdr.d.w0, hdr.d.w0);"),
    dict(ilocals=INOUT2 + " bit<32>[2] st;",                           # distinct constant indexes
         ingress="st[0] = 0; st[1] = 1; a2(st[0], st[0x1]); hdr.d.w0 = st[0];"),
    # a table applied inside the call: p4c copies every argument and says nothing
    dict(ilocals="action a(in bool b, inout bit<32> x, inout bit<32> y) { x = y; }"
                 " table t { actions = { NoAction; } }",
         ingress="a(t.apply().hit, hdr.d.w0, hdr.d.w0);"),
    # an uncalled action is removed before p4c orders side effects
    dict(ilocals=INOUT2 + " action b() { a2(hdr.d.w0, hdr.d.w0); }",
         ingress="a2(hdr.d.w0, hdr.d.w1);"),
])
def test_no_ordering_warning_where_p4c_gives_none(kw):
    assert "ordering" not in _kinds(switch(**kw))


def _invalid(sw) -> list[str]:
    return [w.split(" warning: ", 1)[1] for w in sw.warnings if "[--Wwarn=invalid_header]" in w]


# p4c's invalid-hdr-warnings1.p4 in this skeleton: p4c reports exactly these six
P4C_PARSER = """
    state start { hdr.h2.w0 = 1; transition next; }
    state next {
        if (hdr.h2.w0 == 1) { hdr.h1.w0 = 0; }
        pkt.extract(hdr.h1);
        hdr.h2.setInvalid();
        transition select(hdr.h1.w0) { 0: state0; 1: state1; default: accept; }
    }
    state state0 { hdr.h1.setInvalid(); transition select(hdr.h2.w0) { 2: state1; default: next; } }
    state state1 {
        hdr.h2.w0 = hdr.h2.w0 + 1;
        hdr.h2.setValid();
        transition select(hdr.h2.w0) { 1: state1; 2: state0; default: accept; }
    }
"""


def test_invalid_headers_in_a_parser_as_p4cs_sample():
    sw = switch(parser=P4C_PARSER, hfields="data_t h1; data_t h2;")
    may, inv = "accessing a field of a potentially invalid header", "accessing a field of an invalid header"
    assert _invalid(sw) == [f"{inv} hdr.h2", f"{may} hdr.h2", f"{inv} hdr.h1", f"{may} hdr.h2",
                            f"{may} hdr.h2", f"{may} hdr.h2"]


INV = "action inv() { hdr.d.setInvalid(); } table t { actions = { inv; } }"


@pytest.mark.parametrize("kw, texts", [
    (dict(ingress="hdr.d.setInvalid(); hdr.d.w0 = 1;"), ["accessing a field of an invalid header hdr.d"]),
    (dict(ingress="if (hdr.d.w1 == 0) { hdr.d.setInvalid(); } hdr.d.w0 = hdr.d.w2;"),
     ["accessing a field of a potentially invalid header hdr.d"] * 2),
    (dict(ingress="data_t t; t.w0 = 1; hdr.d.w0 = t.w0;"),                # header variables start invalid
     ["accessing a field of an invalid header t"] * 2),
    (dict(ilocals=INV, ingress="inv(); hdr.d.w0 = 1;"), ["accessing a field of an invalid header hdr.d"]),
    (dict(ilocals="action a(out data_t o) { o.w0 = 1; }", ingress="a(hdr.d);"),
     ["accessing a field of an invalid header o"]),
    (dict(ilocals="action a(in data_t i) { hdr.d.w0 = i.w1; }", ingress="data_t x; a(x);"),
     ["accessing a field of an invalid header i"]),
])
def test_invalid_headers_in_controls_warn_as_p4c(kw, texts):
    assert _invalid(switch(**kw)) == texts


@pytest.mark.parametrize("kw", [
    dict(ingress="if (hdr.d.w1 == 0) { hdr.d.setInvalid(); } if (hdr.d.isValid()) { hdr.d.w0 = 1; }"),
    dict(ingress="data_t t; t.setValid(); t.w0 = 1; data_t u = t; hdr.d.w0 = u.w0;"),
    dict(ingress="data_t t = { 1, 2, 3, 4, 5, 6, 7, 8 }; hdr.d.w0 = t.w0;"),
    # as p4c: what a table's actions do is not seen after the apply
    dict(ilocals=INV, ingress="t.apply(); hdr.d.w0 = 1;"),
    # a constant condition: p4c folds it, this check stays silent
    dict(ingress="hdr.d.setInvalid(); if (true) { hdr.d.setValid(); } hdr.d.w0 = 1;"),
    dict(decls="control S(out data_t d) { apply { d.setValid(); } }", ilocals="S() s;",
         ingress="hdr.d.setInvalid(); s.apply(hdr.d); hdr.d.w0 = 1;"),
    dict(ilocals="action a(out data_t o) { o.setValid(); o.w0 = 1; }", ingress="a(hdr.d); hdr.d.w1 = 1;"),
])
def test_no_invalid_header_warning_where_p4c_gives_none(kw):
    assert _invalid(switch(**kw)) == []


def _uninit(sw) -> list[str]:
    return [w.split(" warning: ", 1)[1] for w in sw.warnings if "[--Wwarn=uninitialized_use]" in w]


@pytest.mark.parametrize("kw, texts", [
    # fields of a struct or header variable, the whole of one (p4c's uninit.p4: stack[1], h)
    (dict(ingress="metadata m; m.m0 = 1; hdr.d.w1 = m.m0; hdr.d.w2 = m.m1;"), ["m.m1 may be uninitialized"]),
    (dict(ingress="data_t t; t.setValid(); t.w0 = 1; hdr.d = t;"), ["t may not be completely initialized"]),
    (dict(ingress="metadata m; if (hdr.d.w0 == 1) { m = meta; } else { m.m0 = 2; } meta = m;"),
     ["m may not be completely initialized"]),
    # a parser's out headers: fields read where the header may not have been extracted
    (dict(parser="state start { pkt.extract(hdr.eth); transition select(hdr.eth.etype) {"
                 " 1: one; default: two; } } state one { pkt.extract(hdr.d); transition two; }"
                 " state two { hdr.eth.src = (bit<48>)hdr.d.w0; transition accept; }"),
     ["hdr.d.w0 may be uninitialized"]),
    # an in or inout argument is read: a struct with a field never written, whole
    (dict(ilocals="action a(in metadata x) { hdr.d.w0 = x.m0; }",
          ingress="metadata m; m.m0 = 1; a(m); hash(hdr.d.w1, HashAlgorithm.crc32, 32w0, m, 32w16);"),
     ["m may not be completely initialized"] * 2),
    (dict(decls="control S(out data_t o, inout bit<32> w) { apply { w = o.w3; o.w3 = w; } }",
          ilocals="S() s;", ingress="s.apply(hdr.d, hdr.d.w0);"), ["o.w3 may be uninitialized"]),
])
def test_uninitialised_fields_and_structs_warn_as_p4c(kw, texts):
    assert _uninit(switch(**kw)) == texts


@pytest.mark.parametrize("kw", [
    dict(ingress="metadata m = meta; hdr.d.w1 = m.m1; meta = m;"),
    dict(ingress="data_t t; t.setValid(); t = hdr.d; hdr.d = t; hdr.d.w0 = t.w7;"),
    dict(ingress="metadata m; m.m0 = 1; m.m1 = 2; m.m8 = 3; m.m16 = 4; meta = m;"),
    # written whole on one branch and field by field on the other: written
    dict(ingress="metadata m; if (hdr.d.w0 == 1) { m = meta; } else { m.m0 = 1; m.m1 = 2; m.m8 = 3;"
                 " m.m16 = 4; } meta = m;"),
    # passed to an out parameter (here an extern's), a variable is written
    dict(ingress="data_t t; hash(t.w0, HashAlgorithm.crc32, 32w0, { hdr.d.w1 }, 32w16); hdr.d.w0 = t.w0;"),
    dict(ilocals="action o(out metadata x) { x = meta; }", ingress="metadata m; o(m); meta = m;"),
    # set by an action a table may run: counted as written, as everything such a call may write
    dict(ilocals="metadata lm; action a() { lm.m0 = 1; } table t { actions = { a; } default_action = a(); }",
         ingress="t.apply(); hdr.d.w0 = lm.m0;"),
    # the valid bit is not a field: isValid() of a variable reads none of its fields
    dict(ingress="data_t t; if (t.isValid()) { hdr.d.w0 = 1; }"),
    dict(parser="state start { pkt.extract(hdr.eth); pkt.extract(hdr.d);"
                " transition select(hdr.d.w0) { 1: one; default: accept; } }"
                " state one { hdr.eth.src = (bit<48>)hdr.d.w1; transition accept; }"),
])
def test_no_uninitialised_field_warning_where_p4c_gives_none(kw):
    assert _uninit(switch(**kw)) == []


def test_no_warn_on_an_enclosing_declaration_or_block_silences_that_kind_only():
    ilocals = ("@noWarn(\"invalid_header\") action a() { hdr.d.setInvalid(); hdr.d.w0 = 1; bit<8> u; "
               "hdr.d.w1 = (bit<32>)u; }")
    sw = switch(ilocals=ilocals, ingress="a(); @noWarn(\"uninitialized_use\") { bit<8> v; meta.m8 = v; }")
    assert _texts(sw) == ["u may be uninitialized"]


@pytest.mark.parametrize("kw, texts", [
    (dict(ilocals="action a(out bit<8> x) { if (hdr.d.w0 == 1) { x = 1; } }", ingress="a(meta.m8);"),
     ["out parameter 'x' may be uninitialized when 'a' terminates"]),
    # a struct's scalars must all be written; a header inside it, or an out header, may stay invalid
    (dict(decls="struct Pr { bit<8> a; bit<8> b; data_t h; }"
                " control S(out Pr p, out data_t o) { apply { p.a = 1; } }",
          ilocals="S() s; Pr pv; data_t ov;", ingress="s.apply(pv, ov);"),
     ["out parameter 'p' may be uninitialized when 'S' terminates"]),
    (dict(ilocals="action a(out metadata x) { x = meta; exit; }", ingress="a(meta);"), []),
])
def test_out_parameters_left_unwritten_warn_as_p4c(kw, texts):
    sw = switch(**kw)
    assert [w.split(" warning: ", 1)[1] for w in sw.warnings if "uninitialized_out_param" in w] == texts


def test_p4cs_issue2393_sample_gives_p4cs_three_warnings():
    decls = ("action do_global_action(in bool make_zero, out bool val_undefined) {"
             " bit<16> tmp; tmp = tmp * (make_zero ? 16w0 : 16w1); }")
    ilocals = ("bool filler_bool = true; bool tmp_bool = false;"
               " action do_action() { do_global_action(tmp_bool, tmp_bool); }"
               " table simple_table { key = { hdr.eth.src: exact; }"
               " actions = { do_action(); do_global_action(true, filler_bool); } }")
    sw = switch(decls=decls, ilocals=ilocals, ingress="simple_table.apply();")
    assert sorted(_texts(sw)) == [
        "'val_undefined' is unused",
        "out parameter 'val_undefined' may be uninitialized when 'do_global_action' terminates",
        "tmp may be uninitialized"]


# the control side of p4c's invalid-hdr-warnings2.p4, in this skeleton: p4c reports exactly these
# (and no uninitialised read: each header is written whole or field by field on every path)
P4C_CONTROL = """
    data_t h1; data_t h2; headers s1; headers s2;
    action invalid_H(inout headers s) { s.eth.setInvalid(); s.d.setInvalid(); }
"""
P4C_APPLY = """
    h1 = { 1, 2, 3, 4, 5, 6, 7, 8 };
    if (hdr.d.w0 == 0) { h2 = h1; } else { h2.setValid(); h2 = { 0, 0, 0, 0, 0, 0, 0, 0 }; }
    hdr.d.w0 = h1.w0;
    hdr.d.w1 = h2.w0;
    if (h2.w0 == 1) { h1.setInvalid(); }
    hdr.d.w2 = h1.w0;
    h1 = h2;
    if (h1.w0 == 1) {
        s1 = { hdr.eth, h1 };
        s2 = s1;
        if (s2.d.w0 == 0 && s2.eth.etype == 0) {
            if (s1.d.w1 > 0) { s1.d.setInvalid(); } else { s1.d.setInvalid(); }
            hdr.d.w3 = s1.d.w0;
        } else {
            s1.d.setValid();
        }
        hdr.d.w4 = s1.d.w0;
    }
    invalid_H(hdr);
    hdr.d.w5 = 1;
    hdr.eth.etype = 1;
"""


def test_invalid_headers_in_a_control_as_p4cs_sample():
    sw = switch(P4C_APPLY, ilocals=P4C_CONTROL)
    may, inv = "accessing a field of a potentially invalid header", "accessing a field of an invalid header"
    assert _texts(sw) == [f"{may} h1", f"{inv} s1.d", f"{may} s1.d", f"{inv} hdr.d", f"{inv} hdr.eth"]

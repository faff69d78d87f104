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

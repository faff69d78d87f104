"""Types: typedef, enums, serializable enums, bool/enum header fields, keyword field names, errors."""

from __future__ import annotations

import pytest

from ..helpers import frame, run_words, switch, words

DECLS = """
typedef bit<32> word_t;
type bit<8> tag_t;
enum Color { RED, GREEN, BLUE }
enum bit<8> Kind { A = 1, B = 7 }
header flags_t { bool f; bit<7> x; Kind kind; bit<8> not; bit<8> copy; }
"""


def test_enums_serializable_enums_typedefs():
    ingress = """
        Color c = Color.GREEN;
        word_t w = hdr.d.w0;
        if (c == Color.GREEN && c != Color.RED) { hdr.d.w1 = w; }
        Kind k = (Kind)(bit<8>)hdr.d.w2;
        if (k == Kind.B) { hdr.d.w3 = (bit<32>)(bit<8>)Kind.B; }
        hdr.d.w4 = (bit<32>)(bit<8>)k;
    """
    sw = switch(ingress, decls=DECLS)
    assert run_words(sw, 5, 0, 7)[:5] == [5, 5, 7, 7, 7]


def test_bool_enum_and_keyword_named_header_fields():
    parser = """
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.fl); transition accept; }
    """
    ingress = """
        if (hdr.fl.f) { hdr.fl.x = 1; }
        if (hdr.fl.kind == Kind.A) { hdr.fl.not = hdr.fl.copy + 1; }
        hdr.fl.f = !hdr.fl.f;
    """
    sw = switch(ingress, decls=DECLS, hfields="flags_t fl;", parser=parser,
                deparser="pkt.emit(hdr.eth); pkt.emit(hdr.fl);")
    out = sw.process(0, frame()[:14] + bytes([0x80, 1, 0, 41]))
    assert out[0][1][14:] == bytes([0x01, 1, 42, 41])
    assert sw.header_types["flags_t"] == [("f", 1), ("x", 7), ("kind", 8), ("not", 8), ("copy", 8)]


def test_error_values_and_tuples():
    ingress = """
        error e = error.NoMatch;
        tuple<bit<8>, bit<16>> t = {1, 2};
        if (e == error.NoMatch && e != error.NoError) { hdr.d.w0 = 1; }
    """
    sw = switch(ingress, decls=DECLS)
    assert run_words(sw)[0] == 1


def test_header_validity_and_invalid_emit():
    sw = switch("hdr.d.setInvalid();")
    out = sw.process(0, frame(1, 2))
    assert out[0][1] == frame()[:14]
    sw = switch("hdr.d.w1 = hdr.d.isValid() ? 32w1 : 32w2;")
    assert words(sw.process(0, frame(7))[0][1])[1] == 1
    assert sw.process(0, frame(etype=0x800))[0][1] == frame(etype=0x800)  # d not parsed, payload kept


def test_set_valid_zeroes_an_invalid_header_like_bmv2_add_header():
    ingress = """
        hdr.d.w0 = 5;          // write to an invalid header
        hdr.d.setValid();      // add_header resets it
        hdr.d.w1 = hdr.d.w0 + 1;
        hdr.d.setValid();      // already valid: no reset
        hdr.d.w2 = 9;
    """
    sw = switch(ingress)
    out = sw.process(0, frame(etype=0x800))
    assert words(out[0][1])[:3] == [0, 1, 9]


@pytest.mark.parametrize("backend", ["python", "native"])
def test_new_type_values_casts_and_table_keys(backend):
    """``type bit<8> tag_t``: a distinct type to the checks, bit<8> values at run time."""
    ingress = """
        meta.tg = (tag_t)(bit<8>)hdr.d.w0;
        if (meta.tg == (tag_t)8w5) { hdr.d.w1 = (bit<32>)(bit<8>)meta.tg; }
        by_tag.apply();
    """
    ilocals = """
        action mark(bit<32> v) { hdr.d.w2 = v; }
        table by_tag {
            key = { meta.tg: exact; }
            actions = { mark; NoAction; }
            const entries = { 5: mark(77); }
        }
    """
    sw = switch(ingress, backend=backend, decls=DECLS, mfields="tag_t tg;", ilocals=ilocals)
    assert run_words(sw, 5)[:3] == [5, 5, 77]
    assert run_words(sw, 6)[:3] == [6, 0, 0]

"""Parser: select with masks/ranges/tuples/default, lookahead, verify, header stacks, errors, varbit."""

from __future__ import annotations

import pytest

from ..helpers import frame, run_words, switch, words

# the parser_error code is visible to ingress (BMv2 continues to ingress on parser errors)
REPORT_ERR = """
    if (sm.parser_error == error.NoError) { hdr.d.w7 = 0; }
    else if (sm.parser_error == error.PacketTooShort) { hdr.d.w7 = 1; }
    else if (sm.parser_error == error.NoMatch) { hdr.d.w7 = 2; }
    else if (sm.parser_error == error.StackOutOfBounds) { hdr.d.w7 = 3; }
    else { hdr.d.w7 = 4; }
    hdr.d.setValid();
"""


def test_select_masks_ranges_tuples_and_default():
    parser = """
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.d);
        transition select(hdr.d.w0[7:0], hdr.d.w1[3:0]) {
            (0x10 &&& 0xF0, _): s_mask;
            (0x20 .. 0x2F, 0x1): s_range;
            (0x30, 0x2 &&& 0x3): s_tuple;
            default: s_default; } }
    state s_mask { meta.m0 = 1; transition accept; }
    state s_range { meta.m0 = 2; transition accept; }
    state s_tuple { meta.m0 = 3; transition accept; }
    state s_default { meta.m0 = 4; transition accept; }
    """
    sw = switch("hdr.d.w2 = meta.m0;", parser=parser)
    assert run_words(sw, 0x1A, 0)[2] == 1
    assert run_words(sw, 0x25, 1)[2] == 2
    assert run_words(sw, 0x25, 2)[2] == 4
    assert run_words(sw, 0x30, 0x6)[2] == 3
    assert run_words(sw, 0x30, 0x5)[2] == 4


def test_no_match_sets_parser_error_and_continues_to_ingress():
    parser = """
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.d);
        transition select(hdr.d.w0) { 1: accept; } }
    """
    sw = switch(REPORT_ERR, parser=parser)
    assert run_words(sw, 1)[7] == 0
    assert run_words(sw, 2)[7] == 2


def test_packet_too_short_leaves_header_invalid():
    parser = """
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.d); transition accept; }
    """
    sw = switch("hdr.d.setValid(); hdr.d.w0 = sm.parser_error == error.PacketTooShort ? 32w1 : 32w0;",
                parser=parser)
    out = sw.process(0, frame()[:20])
    # d was invalid after the failed extract; ingress made it valid; payload is the unparsed rest
    data = out[0][1]
    assert data[14:18] == (1).to_bytes(4, "big") and data[14 + 32:] == frame()[14:20]


def test_lookahead_advance_and_verify():
    parser = """
    state start { pkt.extract(hdr.eth);
        transition select(pkt.lookahead<bit<32>>()) { 0xDEADBEEF: skip; default: parse_d; } }
    state skip { pkt.advance(32); transition parse_d; }
    state parse_d { pkt.extract(hdr.d); verify(hdr.d.w0 != 0, error.HeaderTooShort); transition accept; }
    """
    sw = switch(REPORT_ERR, parser=parser)
    out = sw.process(0, frame(0xDEADBEEF, 5, 6, 7, 8, 9, 10, 11, extra=b"\x00\x00\x00\x0c"))
    w = words(out[0][1])
    assert w[0] == 5 and w[7] == 0
    w = run_words(sw, 0, 1)
    assert w[7] == 4  # HeaderTooShort from verify


def test_lookahead_header_does_not_consume():
    parser = """
    state start { pkt.extract(hdr.eth);
        data_t peek = pkt.lookahead<data_t>();
        meta.m1 = peek.w1;
        pkt.extract(hdr.d); transition accept; }
    """
    sw = switch("hdr.d.w2 = meta.m1;", parser=parser)
    assert run_words(sw, 1, 77)[:3] == [1, 77, 77]


def test_header_stack_next_last_and_overflow():
    decls = "header item_t { bit<8> v; bit<8> more; }"
    parser = """
    state start { pkt.extract(hdr.eth); transition parse_item; }
    state parse_item { pkt.extract(hdr.items.next); meta.m0 = hdr.items.lastIndex;
        transition select(hdr.items.last.more) { 1: parse_item; default: accept; } }
    """
    ingress = """
        hdr.d.setValid();
        hdr.d.w0 = meta.m0;
        hdr.d.w1 = (bit<32>)hdr.items[0].v;
        hdr.d.w2 = hdr.items[1].isValid() ? 32w1 : 32w0;
        hdr.d.w7 = sm.parser_error == error.StackOutOfBounds ? 32w3 : 32w0;
    """
    sw = switch(ingress, decls=decls, hfields="item_t[3] items;", parser=parser,
                deparser="pkt.emit(hdr.eth); pkt.emit(hdr.d);")
    out = sw.process(0, frame(etype=0x1111)[:14] + bytes([7, 1, 8, 0]) + b"pay")
    w = words(out[0][1])
    assert w[0] == 1 and w[1] == 7 and w[2] == 1 and w[7] == 0
    out = sw.process(0, frame(etype=0x1111)[:14] + bytes([1, 1, 2, 1, 3, 1, 4, 0]))
    assert words(out[0][1])[7] == 3


def test_header_stack_push_pop_and_emit_order():
    decls = "header item_t { bit<8> v; bit<8> more; }"
    parser = """
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.items.next); pkt.extract(hdr.items.next);
                  transition accept; }
    """
    ingress = """
        hdr.items.push_front(1);
        hdr.items[0].setValid();
        hdr.items[0].v = 9;
        hdr.items[0].more = 1;
    """
    sw = switch(ingress, decls=decls, hfields="item_t[3] items;", parser=parser,
                deparser="pkt.emit(hdr.eth); pkt.emit(hdr.items);")
    out = sw.process(0, frame(etype=0x1111)[:14] + bytes([1, 1, 2, 0]))
    assert out[0][1][14:] == bytes([9, 1, 1, 1, 2, 0])
    sw = switch("hdr.items.pop_front(1);", decls=decls, hfields="item_t[3] items;", parser=parser,
                deparser="pkt.emit(hdr.eth); pkt.emit(hdr.items);")
    out = sw.process(0, frame(etype=0x1111)[:14] + bytes([1, 1, 2, 0]))
    assert out[0][1][14:] == bytes([2, 0])


def test_varbit_extract_and_emit():
    decls = "header opt_t { bit<8> len; varbit<64> body; }"
    parser = """
    state start { pkt.extract(hdr.eth); bit<8> n = pkt.lookahead<bit<8>>();
        pkt.extract(hdr.opt, (bit<32>)n * 8); transition accept; }
    """
    sw = switch("", decls=decls, hfields="opt_t opt;", parser=parser,
                deparser="pkt.emit(hdr.eth); pkt.emit(hdr.opt);")
    body = bytes([2, 0xAA, 0xBB]) + b"tail"
    # len=2 means 2 bytes of body after... the length byte counts itself here: 2*8 bits of body
    out = sw.process(0, frame(etype=0x1111)[:14] + body)
    assert out[0][1][14:] == body
    assert sw.header_types["opt_t"] == [("len", 8), ("body", 64)]


def test_explicit_reject_keeps_packet_for_ingress():
    parser = "state start { pkt.extract(hdr.eth); pkt.extract(hdr.d); transition reject; }"
    sw = switch("hdr.d.w1 = 9;", parser=parser)
    assert run_words(sw, 5)[:2] == [5, 9]


@pytest.mark.parametrize("backend", ["python", "native"])
def test_parser_value_sets_single_and_struct(backend):
    from softswitch.api import Exact, Ternary

    decls = "struct pair_t { bit<16> et; @match(ternary) bit<32> w; }"
    parser = """
    value_set<bit<16>>(4) types;
    value_set<pair_t>(2) pairs;
    state start { pkt.extract(hdr.eth);
                  transition select(hdr.eth.etype) { types: parse_d; default: accept; } }
    state parse_d { pkt.extract(hdr.d);
        transition select(hdr.eth.etype, hdr.d.w0) { pairs: mark; default: accept; } }
    state mark { meta.m0 = 1; transition accept; }
    """
    sw = switch("hdr.d.w1 = meta.m0;", backend, decls=decls, parser=parser)
    assert sw.process(0, frame(etype=0x1234)) == [(1, frame(etype=0x1234))]   # not in the set: d unparsed
    sw.value_set_set("P.types", [{"types": Exact(0x1234)}])
    sw.value_set_set("pairs", [{"et": Exact(0x1234), "w": Ternary(0x10, 0xF0)}])
    out = sw.process(0, frame(0x15, etype=0x1234))
    assert words(out[0][1])[1] == 1
    out = sw.process(0, frame(0x25, etype=0x1234))
    assert words(out[0][1])[1] == 0
    vs = {v.preamble.name: v for v in sw.p4info.value_sets}
    assert vs["P.types"].preamble.id >> 24 == 0x03 and vs["P.types"].size == 4
    assert [(m.name, m.bitwidth, m.match_type) for m in vs["P.pairs"].match] == [("et", 16, 2), ("w", 32, 4)]


def test_state_without_transition_rejects():
    parser = """
    state start { pkt.extract(hdr.eth); transition next; }
    state next { }
    """
    sw = switch("hdr.d.setValid(); hdr.d.w0 = 3;", parser=parser)
    out = sw.process(0, frame())
    assert words(out[0][1])[0] == 3 and "parser state next" in "\n".join(sw.last_trace)

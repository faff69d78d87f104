"""Where p4c's BMv2 back end keeps what a block leaves behind, when something runs twice in one
packet (both backends).

- A sub-control or sub-parser instance applied at two sites: p4c's inliner declares the
  instance's locals and its parameter temporaries once per instance, so the second apply sees
  what the first left (an initialiser runs at every apply; an ``out`` temporary has its headers
  made invalid, its scalars -- struct fields too -- kept).  Every packet pass starts from zero.
- An action run twice (two direct call sites, or a table and a call): p4c gives each table and
  each call site its own copy of the action (``FindRepeatedActionUses``), so each run reads
  its ``out`` parameters and uninitialised locals fresh: 0, headers invalid.
"""

from __future__ import annotations

import pytest

from ..helpers import frame, switch

BACKENDS = ["python", "native"]


def _words(out: list[tuple[int, bytes]]) -> list[int]:
    (_port, b), = out
    return [int.from_bytes(b[14 + 4 * i:18 + 4 * i], "big") for i in range(8)]


CONTROL = """
control Acc(inout bit<32> x, out bit<32> o) {
    bit<32> total;
    bit<32> base = 100;
    apply {
        total = total + x;
        x = total + base;
        base = 7;
        if (total == 5) { o = 77; }
    }
}
"""
CONTROL_INGRESS = """
    acc.apply(hdr.d.w0, hdr.d.w4);
    acc.apply(hdr.d.w1, hdr.d.w5);
    other.apply(hdr.d.w2, hdr.d.w6);
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_sub_control_instance_keeps_its_locals_between_applies(backend):
    sw = switch(CONTROL_INGRESS, backend=backend, decls=CONTROL, ilocals="Acc() acc; Acc() other;")
    for _packet in range(2):  # the second packet starts from zero again
        w = _words(sw.process(0, frame(5, 7, 9)))
        # acc: total 5 then 12 (kept), base 100 at each apply (its initialiser runs every time);
        # other: its own total
        assert w[:3] == [105, 112, 109]
        # `o` goes through one temporary per instance (the sites' arguments differ): the second
        # apply does not write it and copies out what the first left
        assert w[4:7] == [77, 77, 0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_substituted_out_argument_keeps_the_argument(backend):
    # one apply site per instance: p4c substitutes the arguments, `o` is hdr.d.w4 itself
    sw = switch("acc.apply(hdr.d.w0, hdr.d.w4);", backend=backend, decls=CONTROL, ilocals="Acc() acc;")
    assert _words(sw.process(0, frame(6, 0, 0, 0, 55)))[4] == 55


PAIR = """
struct pair_t { bit<32> a; bit<32> b; }
control Sub(in bit<32> k, out pair_t o) {
    apply { if (k == 5) { o.a = 11; o.b = 22; } else { o.b = 33; } }
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_compound_out_temporary_is_one_per_instance(backend):
    ingress = ("pair_t p1; pair_t p2; sub.apply(hdr.d.w0, p1); sub.apply(hdr.d.w1, p2);"
               "hdr.d.w4 = p1.a; hdr.d.w5 = p1.b; hdr.d.w6 = p2.a; hdr.d.w7 = p2.b;")
    sw = switch(ingress, backend=backend, decls=PAIR, ilocals="Sub() sub;")
    for _packet in range(2):
        # the second apply writes only o.b: o.a still holds the first apply's 11
        assert _words(sw.process(0, frame(5, 7)))[4:8] == [11, 22, 11, 33]


SUBPARSER = """
header tag_t { bit<8> v; }
parser Sub(packet_in pkt, inout bit<32> x, out bit<32> o, out tag_t t) {
    bit<32> total;
    bit<32> base = 100;
    state start {
        total = total + x;
        x = total + base;
        base = 7;
        transition select(total) { 5: five; default: accept; }
    }
    state five { o = 77; t.setValid(); t.v = 1; transition accept; }
}
"""
SUBPARSER_PARSER = """
    Sub() sub;
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.d);
        sub.apply(pkt, hdr.d.w0, hdr.d.w4, hdr.t1);
        sub.apply(pkt, hdr.d.w1, hdr.d.w5, hdr.t2);
        transition accept;
    }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_sub_parser_instance_keeps_its_locals_between_applies(backend):
    sw = switch("hdr.d.w6 = hdr.t1.isValid() ? 32w1 : 32w0; hdr.d.w7 = hdr.t2.isValid() ? 32w1 : 32w0;",
                backend=backend, decls=SUBPARSER, hfields="tag_t t1; tag_t t2;", parser=SUBPARSER_PARSER)
    for _packet in range(2):
        w = _words(sw.process(0, frame(5, 7)))
        assert w[:2] == [105, 112]
        # the `out` scalar temporary keeps 77; the `out` header temporary is made invalid again
        assert w[4:6] == [77, 77]
        assert w[6:8] == [1, 0]


ACTIONS = """
    action once(out bit<32> o, out tag_t h) {
        bit<32> t;
        hdr.d.w6 = hdr.d.w6 + o + t;
        if (h.isValid()) { hdr.d.w7 = 1; }
        o = 9;
        t = 5;
        h.setValid();
    }
    table tb {
        key = { hdr.d.w0: exact; }
        actions = { once(hdr.d.w4, hdr.tg); NoAction; }
        default_action = once(hdr.d.w4, hdr.tg);
    }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_action_run_twice_starts_fresh(backend):
    ingress = "once(hdr.d.w5, hdr.tg); tb.apply(); once(hdr.d.w5, hdr.tg);"
    sw = switch(ingress, backend=backend, ilocals=ACTIONS, decls="header tag_t { bit<8> v; }",
                hfields="tag_t tg;")
    w = _words(sw.process(0, frame(1, 0, 0, 0, 3, 3, 0, 0)))
    # three runs, each reads o = 0 and t = 0 (w6 stays 0) and an invalid h (w7 stays 0)
    assert w[4:8] == [9, 9, 0, 0]

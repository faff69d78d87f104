"""P4Info: names as p4c writes them, id prefixes, match fields, params, externs, controller headers."""

from __future__ import annotations

from softswitch.p4info import jenkins_oaat, p4info_pb2

from .helpers import switch

ILOCALS = """
    counter(16, CounterType.packets) pc;
    direct_counter(CounterType.packets_and_bytes) dc;
    register<bit<16>>(32) reg;
    meter(4, MeterType.bytes) mt;
    action fwd(bit<9> port, bit<48> mac) { sm.egress_spec = port; hdr.eth.dst = mac; }
    @name("renamed") action other() { }
    @hidden action hidden_one() { }
    table t { key = { hdr.eth.dst: exact; hdr.d.w0: ternary @name("word0"); }
              actions = { fwd; @defaultonly other; NoAction; } default_action = NoAction(); counters = dc;
              size = 64; }
"""
DECLS = """
@controller_header("packet_in") header packet_in_t { bit<9> ingress_port; bit<7> pad; }
"""


def test_p4info_names_ids_and_shapes():
    sw = switch("t.apply(); pc.count(0); hidden_one();", ilocals=ILOCALS, decls=DECLS,
                hfields="packet_in_t cpu;")
    info = sw.p4info
    assert isinstance(info, p4info_pb2().P4Info)
    (t,) = info.tables
    assert t.preamble.name == "I.t" and t.preamble.alias == "t" and t.preamble.id >> 24 == 0x02
    assert t.preamble.id == (0x02 << 24) | (jenkins_oaat("I.t") & 0xFFFFFF)
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in t.match_fields] == [
        (1, "hdr.eth.dst", 48, 2), (2, "word0", 32, 4)]
    assert t.size == 64
    actions = {a.preamble.name: a for a in info.actions}
    assert set(actions) == {"I.fwd", "I.renamed", "NoAction"}
    assert [(p.id, p.name, p.bitwidth) for p in actions["I.fwd"].params] == [(1, "port", 9), (2, "mac", 48)]
    assert all(a.preamble.id >> 24 == 0x01 for a in info.actions)
    scopes = {r.id: r.scope for r in t.action_refs}
    assert scopes[actions["I.renamed"].preamble.id] == 2  # DEFAULT_ONLY
    (dc,) = info.direct_counters
    assert dc.preamble.id >> 24 == 0x13 and dc.direct_table_id == t.preamble.id
    assert list(t.direct_resource_ids) == [dc.preamble.id]
    (c,) = info.counters
    assert c.preamble.name == "I.pc" and c.preamble.id >> 24 == 0x12 and c.size == 16 and c.spec.unit == 2
    (r,) = info.registers
    assert r.preamble.id >> 24 == 0x16 and r.size == 32 and r.type_spec.bitstring.bit.bitwidth == 16
    (m,) = info.meters
    assert m.preamble.id >> 24 == 0x14 and m.spec.unit == 1
    (cm,) = info.controller_packet_metadata
    assert cm.preamble.name == "packet_in" and cm.preamble.id >> 24 == 0x04
    assert [(x.name, x.bitwidth) for x in cm.metadata] == [("ingress_port", 9), ("pad", 7)]


def test_p4info_is_deterministic():
    a = switch("t.apply();", ilocals=ILOCALS).p4info
    b = switch("t.apply();", ilocals=ILOCALS).p4info
    assert a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def test_validity_key_is_named_like_p4c():
    ilocals = "table v { key = { hdr.d.isValid(): exact; hdr.d.w0[7:0]: ternary; } actions = { NoAction; } }"
    sw = switch("v.apply();", ilocals=ilocals)
    (t,) = sw.p4info.tables
    assert [(m.name, m.bitwidth) for m in t.match_fields] == [("hdr.d.$valid$", 1), ("hdr.d.w0[7:0]", 8)]

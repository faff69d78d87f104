// Values of struct and tuple types with a varbit field (p4c accepts them; BMv2 keeps a varbit's
// current length beside its value in any field container, and assign_VL copies both): metadata,
// a local struct assigned from it, a tuple built from a list expression, an action's `in`
// parameter, a function's arguments and result (through ?: on structs), a sub-control's inout
// parameter, and a new local (length 0).  Each copy of the varbit lands in a header of its
// own, emitted at the length it carries; the length byte becomes the low byte of the CRC-16 of
// m.s, whose varbit adds only its current length.
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> bytes; }
header vb_t { varbit<32> v; }
struct S { bit<8> a; varbit<32> v; }
struct headers_t { len_t len; vb_t v; vb_t c1; vb_t c2; vb_t c3; vb_t c4; vb_t c5; }
struct meta_t { S s; }

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.len);
        pk.extract(hdr.v, (bit<32>)hdr.len.bytes * 8);
        transition accept;
    }
}

S pick(in S a, in S b, in bool first) {
    return first ? a : b;
}

control Put(inout S s, inout vb_t h) {
    apply {
        h.setValid();
        h.v = s.v;
        s.a = s.a + 1;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Put() put;
    action put_c1(in S s) {
        hdr.c1.setValid();
        hdr.c1.v = s.v;
    }
    apply {
        m.s.v = hdr.v.v;
        m.s.a = hdr.len.bytes;
        S t = m.s;
        tuple<bit<8>, varbit<32>> tp = { 1, t.v };
        put_c1(t);
        hdr.c2.setValid();
        hdr.c2.v = tp[1];
        S d;
        d.a = 1;
        hdr.c3.setValid();
        hdr.c3.v = d.v;
        S r = pick(d, t, hdr.len.bytes > 1);
        hdr.c4.setValid();
        hdr.c4.v = r.v;
        put.apply(m.s, hdr.c5);
        bit<16> h;  // the field list {m.s.a, m.s.v}: a varbit adds its current length
        hash(h, HashAlgorithm.crc16, 16w0, m.s, 16w0xffff);
        hdr.len.bytes = h[7:0];
        sm.egress_spec = 2;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply {
        pk.emit(hdr.len); pk.emit(hdr.v); pk.emit(hdr.c1); pk.emit(hdr.c2);
        pk.emit(hdr.c3); pk.emit(hdr.c4); pk.emit(hdr.c5);
    }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

// Generic controls and parsers instantiated with explicit type arguments (genericblocks.py;
// p4c specialises them per type): a sub-parser generic in the header it extracts, a control
// generic in the value it copies (used with bit<8> and with a header type), and one with two
// type parameters.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> x; bit<8> y; }
header b_t { bit<16> z; }
struct headers_t { a_t a; b_t b; b_t c; }
struct meta_t {}

parser Take<H>(packet_in pk, out H h) {
    state start { pk.extract(h); transition accept; }
}

control Copy<T>(inout T dst, in T src) {
    apply { dst = src; }
}

control Mix<A, B>(inout A a, in B b) {
    apply { a = a + (A)b; }
}

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Take<a_t>() ta;
    Take<b_t>() tb;
    state start { ta.apply(pk, hdr.a); tb.apply(pk, hdr.b); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Copy<bit<8>>() c8;
    Copy<b_t>() ch;
    Mix<bit<8>, bit<16>>() mix;
    apply {
        c8.apply(hdr.a.x, hdr.a.y);
        ch.apply(hdr.c, hdr.b);
        mix.apply(hdr.a.y, hdr.b.z);
        sm.egress_spec = 2;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

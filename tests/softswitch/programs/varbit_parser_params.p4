// varbit<W> parameters of a sub-parser: p4c inlines the sub-parser's states, so the argument's
// current length flows in and out.  Grab extracts a varbit into its `out` parameter (its length
// from the packet) and, when it extracted bytes, copies its `in` one to its `inout` one.  Applied
// at two sites with other arguments, the parameters are locals of the instance, copied in and out
// (value and length).
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> a; bit<8> b; }
header vb_t { varbit<32> v; }
struct headers_t { len_t len; vb_t x; vb_t y; vb_t c1; vb_t c2; }
struct meta_t { bit<8> a; }

parser Grab(packet_in pk, in bit<8> n, out varbit<32> got, in varbit<32> src, inout varbit<32> dst) {
    vb_t tmp;
    state start {
        pk.extract(tmp, (bit<32>)n * 8);
        got = tmp.v;
        transition select(n) { 0: accept; default: copy; }
    }
    state copy {
        dst = src;
        transition accept;
    }
}

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Grab() g;
    state start {
        pk.extract(hdr.len);
        hdr.x.setValid();
        hdr.y.setValid();
        hdr.c1.setValid();
        hdr.c2.setValid();
        g.apply(pk, hdr.len.a, hdr.x.v, hdr.c1.v, hdr.c1.v);
        hdr.c2.v = hdr.x.v;
        g.apply(pk, hdr.len.b, hdr.y.v, hdr.c2.v, hdr.c1.v);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 2; }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply { pk.emit(hdr.len); pk.emit(hdr.x); pk.emit(hdr.y); pk.emit(hdr.c1); pk.emit(hdr.c2); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

// varbit<W> parameters of a control (`inout`, `in`, `out`): p4c inlines the applied instance, so
// each argument's current length flows in and out with its value (Swap exchanges two varbits of
// different lengths; w gets z at its length).  Swap ends with `exit`: p4c substitutes the
// arguments of the only apply site, so what Swap wrote stays (the copy back runs on the exit).
#include <core.p4>
#include <v1model.p4>
header len_t { bit<8> bytes; bit<8> other; }
header vb_t { varbit<32> v; }
struct headers_t { len_t len; vb_t v; vb_t c1; vb_t c2; }
struct meta_t { bit<8> a; }
parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.len);
        pk.extract(hdr.v, (bit<32>)hdr.len.bytes * 8);
        pk.extract(hdr.c1, (bit<32>)hdr.len.other * 8);
        transition accept;
    }
}
control Swap(inout varbit<32> x, inout varbit<32> y, in varbit<32> z, out varbit<32> w) {
    varbit<32> t;
    apply {
        t = x;
        x = y;
        y = t;
        w = z;
        exit;
    }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Swap() s;
    apply {
        varbit<32> keep = hdr.v.v;
        hdr.c2.setValid();
        sm.egress_spec = 2;
        s.apply(hdr.v.v, hdr.c1.v, keep, hdr.c2.v);
        hdr.c2.setInvalid();
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply { pk.emit(hdr.len); pk.emit(hdr.v); pk.emit(hdr.c1); pk.emit(hdr.c2); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

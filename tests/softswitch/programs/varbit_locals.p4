// Variables of type varbit<W> (a local with and without an initialiser, a control-level one):
// each keeps its current length beside its value, as BMv2 keeps it in any field, so copying
// one into a header emits the bytes it holds; a variable never assigned has length 0.
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> bytes; }
header vb_t { varbit<32> v; }
struct headers_t { len_t len; vb_t v; vb_t c1; vb_t c2; }
struct meta_t { bit<8> a; }

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.len);
        pk.extract(hdr.v, (bit<32>)hdr.len.bytes * 8);
        transition accept;
    }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    varbit<32> keep;
    apply {
        varbit<32> loc = hdr.v.v;
        varbit<32> none;
        if (hdr.len.bytes > 1) {
            keep = loc;
        } else {
            keep = none;
        }
        hdr.c1.setValid();
        hdr.c1.v = keep;
        hdr.c2.setValid();
        hdr.c2.v = loc;
        sm.egress_spec = 3;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply { pk.emit(hdr.len); pk.emit(hdr.v); pk.emit(hdr.c1); pk.emit(hdr.c2); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

// Slices of header fields as inout arguments of an action and a function: the copy
// goes back into the slice only, the other bits stay.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers_t { h_t h; }
struct meta_t {}

bit<8> fill(inout bit<3> v) {
    v = 7;
    return 1;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action inc_low(inout bit<4> v) { v = v + 1; }
    apply {
        inc_low(hdr.h.a[3:0]);
        hdr.h.c = fill(hdr.h.b[6:4]);
        sm.egress_spec = 1;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;

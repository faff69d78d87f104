// A bit<200> header field, at a bit offset that is not a multiple of 8: extracted,
// emitted, assigned to another header's field and compared (the native backend keeps a
// field wider than 128 bits as a byte array; those are the uses it allows).
#include <core.p4>
#include <v1model.p4>

header big_t { bit<4> lo; bit<200> x; bit<4> hi; }
header copy_t { bit<200> y; bit<8> eq; }
struct headers_t { big_t b; big_t b2; copy_t c; }
struct meta_t {}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.b); pkt.extract(hdr.b2); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        hdr.c.setValid();
        hdr.c.y = hdr.b.x;
        hdr.c.eq = hdr.b.x == hdr.b2.x ? 8w1 : 8w0;
        hdr.b.hi = hdr.b.lo;
        sm.egress_spec = 1;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.b); pkt.emit(hdr.c); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;

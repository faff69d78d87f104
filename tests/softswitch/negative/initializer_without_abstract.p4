// expect-error: 13: abstract
// an instance initializer for an extern type with no abstract methods (p4c rejects this)
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t {}

parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<8>>(1) r = { bit<8> f() { return 1; } };
    apply { hdr.h.a = 1; }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control V(inout headers_t hdr, inout meta_t m) { apply {} }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;

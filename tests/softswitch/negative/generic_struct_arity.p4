// expect-error: 14: type parameter|type argument
// a generic struct given two type arguments for its one type parameter (p4c rejects this)
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t {}
struct S<T> { T x; }
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {

    apply { S<bit<8>, bit<8>> s; s.x = 1; hdr.h.a = s.x; }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control V(inout headers_t hdr, inout meta_t m) { apply {} }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;

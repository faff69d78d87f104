// expect-error: 8: duplicate type parameter
// a generic struct with two type parameters of one name (p4c rejects this)
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t {}
struct P<T, T> { T x; }
parser P0(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { P<bit<8>, bit<8>> p; p.x = 1; hdr.h.a = p.x; }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control V(inout headers_t hdr, inout meta_t m) { apply {} }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P0(), V(), I(), E(), V(), D()) main;

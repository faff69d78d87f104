// expect-error: type arguments|infer
// a generic control instantiated without type arguments: nothing fixes T (p4c cannot infer a
// type argument from a constructor call without arguments either)
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers_t { h_t h; }
struct meta_t {}
control G<T>(inout T x) { apply { } }
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    G() g;
    apply { g.apply(hdr.h.a); }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control V(inout headers_t hdr, inout meta_t m) { apply {} }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;

// expect-error: 7: too many ports
// a static_assert whose condition folds to false stops compilation with its message (p4c)
#include <core.p4>
#include <v1model.p4>
const bit<10> PORTS = 600;
const bit<10> MAX = 511;
const bool ok = static_assert(PORTS <= MAX, "too many ports");
header h_t { bit<8> a; }
struct headers_t { h_t h; }
struct meta_t {}
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control V(inout headers_t hdr, inout meta_t m) { apply {} }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;

// expect-error: 10: for loops are not allowed in a parser|syntax
// a for loop is not a parser statement in p4c's grammar
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; }
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h);
        for (bit<8> i = 0; i < 2; i = i + 1) { m.x = i; }
        transition accept; }
}
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control V(inout headers_t hdr, inout meta_t m) { apply {} }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;

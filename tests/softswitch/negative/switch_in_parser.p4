// expect-error: 10: switch statements are not allowed in a parser|syntax
// a switch statement is not a parser statement in p4c's grammar (nor is a for loop)
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; }
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h);
        switch (hdr.h.a) { 1: { m.x = 1; } }
        transition accept; }
}
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control V(inout headers_t hdr, inout meta_t m) { apply {} }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;

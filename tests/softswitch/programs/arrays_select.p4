/* Arrays of non-header types, continued: a select on an element at a run-time index (out of
 * range: StackOutOfBounds, ingress still runs), an element as a table key, an array in a
 * digest struct (a tuple of its elements in P4Info). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> i; bit<8> r; }
struct headers_t { h_t h; }
struct dg_t { bit<8> x; bit<8>[2] arr; }
struct metadata_t { bit<8>[4] m; }
parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        meta.m[0] = 1; meta.m[1] = 2;
        transition select(meta.m[hdr.h.i]) { 1: one; 2: two; default: accept; }
    }
    state one { hdr.h.r = 0x11; transition accept; }
    state two { hdr.h.r = 0x22; transition accept; }
}
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action setr(bit<8> v) { hdr.h.r = hdr.h.r + v; }
    table t { key = { meta.m[1] : exact; } actions = { setr; NoAction; } }
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.StackOutOfBounds) { hdr.h.r = 0xff; }
        t.apply();
        dg_t d = { hdr.h.i, { 1, 2 } };
        digest<dg_t>(1, d);
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;

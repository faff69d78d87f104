/* A struct-typed field inside a header (P4_16 allows fixed-width structs in headers): extract,
 * field access through the struct, struct assignment, emit; lookahead<S>() of a struct. */
#include <core.p4>
#include <v1model.p4>

struct pair_t { bit<4> hi; bit<4> lo; }
struct inner_t { pair_t p; bit<8> b; }
header h_t { bit<8> a; inner_t s; bit<8> c; }
header pre_t { bit<8> x; }
struct look_t { bit<4> kind; bit<4> rest; }

struct headers_t { h_t h; pre_t pre; }
struct metadata_t { look_t l; }

parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        meta.l = pk.lookahead<look_t>();
        transition select(meta.l.kind) { 1: parse_h; default: parse_pre; }
    }
    state parse_h { pk.extract(hdr.h); transition accept; }
    state parse_pre { pk.extract(hdr.pre); transition accept; }
}

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.h.isValid()) {
            hdr.h.s.p.lo = hdr.h.s.p.hi;
            hdr.h.c = hdr.h.s.b + 1;
            if (hdr.h.a == 0x1f) { hdr.h.s.p = { 4w0xa, 4w0xb }; }
        } else {
            hdr.pre.x = meta.l.rest ++ meta.l.kind;
        }
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;

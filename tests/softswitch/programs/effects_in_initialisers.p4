// Calls with inout parameters inside list and struct initialisers: items are evaluated
// left to right, a value read before the call keeps the value it had then (p4c's order).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }
struct headers_t { h_t h; }
struct meta_t {}
struct pair_t { bit<8> x; bit<8> y; }

bit<8> bump(inout bit<8> v) {
    v = v + 1;
    return v + 10;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    pair_t kept = { hdr.h.a, bump(hdr.h.a) };
    apply {
        pair_t s = { x = hdr.h.b, y = bump(hdr.h.b) };
        hdr.h.c = kept.x;
        hdr.h.d = kept.y;
        hdr.h.e = s.x;
        hdr.h.f = s.y;
        sm.egress_spec = 1;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;

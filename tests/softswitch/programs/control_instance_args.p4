// Control instances given as constructor arguments of other controls (C2(c1) c2;),
// including one whose own constructor takes a value, and a control type declaration.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers_t { h_t h; }
struct meta_t {}

control step_t(inout bit<8> v);

control AddK(inout bit<8> v)(bit<8> k) { apply { v = v + k; } }
control FlipInc(inout bit<8> v) { apply { v = (v ^ 0x0F) + 1; } }
control Twice(inout bit<8> v)(step_t s) { apply { s.apply(v); s.apply(v); } }
control ThenDouble(inout bit<8> v)(step_t s) { apply { s.apply(v); v = v << 1; } }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    AddK(3) add3;
    FlipInc() flip;
    Twice(add3) twice_add;
    Twice(flip) twice_flip;
    ThenDouble(add3) add_double;
    apply {
        twice_add.apply(hdr.h.a);
        twice_flip.apply(hdr.h.b);
        add_double.apply(hdr.h.c);
        sm.egress_spec = 1;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;

/* The invalid header expression (P4_16 1.2.4), written (H){#} as p4c requires: assigned (the
 * destination becomes invalid, BMv2 assign_header), compared (== holds when the other side
 * is invalid), isValid() of it, and (U){#} for a header union (every member invalid). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> r; }
header g_t { bit<8> b; }
header_union u_t { h_t h; g_t g; }
struct headers_t { h_t h; g_t g; }
struct metadata_t { }
parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); pk.extract(hdr.g); transition accept; }
}
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        u_t u;
        u.g = hdr.g;
        if (hdr.h.a == 1) { hdr.g = (g_t){#}; }
        if (hdr.g == (g_t){#}) { hdr.h.r = 0x10; }
        if (!((h_t){#}).isValid()) { hdr.h.r = hdr.h.r + 1; }
        if (hdr.h.a == 2) { u = (u_t){#}; }
        if (!u.isValid()) { hdr.h.r = hdr.h.r + 0x20; }
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;

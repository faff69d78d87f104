/* Arrays of non-header types, continued (arrays.p4 has the basics): arrays of enums, serializable
 * enums (in a header) and error values; a run-time index in a parser (out of range:
 * StackOutOfBounds, ingress still runs) and in a table key (out of range: the key is 0, as
 * for header stacks). */
#include <core.p4>
#include <v1model.p4>

enum color_t { RED, GREEN, BLUE }
enum bit<8> kind_t { A = 1, B = 2 }
header data_t { bit<8> i; bit<8> k; bit<8> r; kind_t[2] kinds; }
struct headers_t { data_t d; }
struct metadata_t { bit<8>[2] m; color_t[3] colors; error[2] errs; }

parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.d);
        meta.m[hdr.d.i] = 7;   // out of range in a parser: StackOutOfBounds
        transition accept;
    }
}

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action set(bit<8> r) { hdr.d.r = r; }
    table t {
        key = { meta.m[hdr.d.k] : exact; }
        actions = { set; NoAction; }
        const entries = { 0 : set(0x10); 7 : set(0x20); }
    }
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.StackOutOfBounds) { hdr.d.r = 0xff; return; }
        meta.colors[1] = color_t.BLUE;
        meta.errs[0] = error.NoMatch;
        t.apply();
        if (meta.colors[hdr.d.k] == color_t.BLUE) { hdr.d.r = hdr.d.r + 1; }
        if (meta.errs[0] == error.NoMatch) { hdr.d.r = hdr.d.r + 2; }
        if (hdr.d.kinds[1] == kind_t.B) { hdr.d.kinds[0] = kind_t.B; }
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;

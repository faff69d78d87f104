/* Header assignment and comparison with p4c + BMv2 semantics: assignment copies fields and
 * validity, an invalid source only invalidates the destination (BMv2 assign_header keeps the
 * destination's fields); assignment through ?:, a function returning a header, a struct built
 * from a list expression, struct expressions {f = x} and (H){f = x}, out header parameters
 * of actions and functions (invalid unless made valid); == / != on headers,
 * structs and stacks (two invalid headers are equal, valid vs invalid unequal, fields
 * compared only when both are valid). */
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> op; bit<8> r; }
header h_t { bit<8> a; bit<8> b; }
struct pair_t { h_t x; bit<8> m; }
struct headers_t { tag_t tag; h_t h1; h_t h2; h_t[2] st; }
struct metadata_t { }

h_t pick(in h_t a) { return a; }
void clear(out h_t x) { }

parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.tag);
        transition select(hdr.tag.op) { 1: two; 2: one; 4: one; default: accept; }
    }
    state two { pk.extract(hdr.h1); pk.extract(hdr.h2); transition accept; }
    state one { pk.extract(hdr.h1); transition accept; }
}

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action maybe_fill(out h_t o, bit<8> x) { if (x == 1) { o.setValid(); o.a = 0x77; o.b = x; } }
    apply {
        sm.egress_spec = 1;
        bit<8> r = 0;
        h_t loc;
        if (hdr.tag.op == 1) {
            if (hdr.h1 == hdr.h2) { r = r | 0x01; }
            if (loc == hdr.st[0]) { r = r | 0x02; }
            hdr.h2 = loc;
            if (!hdr.h2.isValid()) { r = r | 0x04; }
            if (hdr.h1 != hdr.h2) { r = r | 0x08; }
            hdr.st[0] = hdr.tag.r == 0 ? hdr.h1 : loc;
            hdr.st[1] = pick(hdr.h1);
            hdr.st[1].b = 0x99;
            pair_t p = { hdr.h1, 7 };
            hdr.h1.a = p.x.a + p.m;
            pair_t q = p;
            q.x = loc;
            if (q != p) { r = r | 0x10; }
            if (hdr.h1 == { 8w0x17, 8w0x20 }) { r = r | 0x20; }
        } else if (hdr.tag.op == 2) {
            hdr.h2.setValid();
            hdr.h2.a = 5;
            hdr.h2.b = 6;
            h_t gone = hdr.h1;
            gone.setInvalid();
            hdr.h2 = gone;
            if (hdr.h2.a == 5) { r = r | 0x01; }
            hdr.st[0] = hdr.h2;
            hdr.h2.setValid();
            if (hdr.h2.a == 0) { r = r | 0x02; }
        } else if (hdr.tag.op == 3) {
            hdr.h2 = (h_t){ b = 0x22, a = 0x11 };
            h_t k = { a = 0x33, b = 0x44 };
            hdr.st[1] = k;
            maybe_fill(hdr.h2, 0);  // an out header the action leaves alone ends up invalid
            maybe_fill(hdr.st[0], 1);
        } else if (hdr.tag.op == 4) {
            clear(hdr.h1);  // a function's out header it never sets: invalid, fields kept (BMv2)
            r = hdr.h1.a;
        } else {
            h_t[2] mine;
            if (mine == hdr.st) { r = r | 0x01; }
            mine[1].setValid();
            if (mine != hdr.st) { r = r | 0x02; }
            hdr.st = mine;
        }
        hdr.tag.r = r;
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;

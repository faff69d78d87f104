/* header_union: parsing into a member, isValid() of the union, a member's setValid()
 * invalidating the other members, setInvalid() of a union, union assignment and ==,
 * stacks of unions (constant index and .next), a member passed to an action by reference,
 * and emit (the valid member only).
 * base.r collects the validity bits and comparison results the STF checks. */
#include <core.p4>
#include <v1model.p4>

header base_t { bit<8> t; bit<8> r; }
header one_t { bit<8> data; }
header two_t { bit<16> data; }
header_union either_t { one_t byte; two_t short; }

struct headers_t {
    base_t      base;
    either_t    u;
    either_t    u2;
    either_t[2] us;
}

struct metadata_t { }

parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.base);
        transition select(hdr.base.t) { 1: p_byte; 2: p_short; 3: p_stack; 4: p_next; 5: p_byte; default: accept; }
    }
    state p_byte { pk.extract(hdr.u.byte); transition accept; }
    state p_short { pk.extract(hdr.u.short); transition accept; }
    state p_stack { pk.extract(hdr.us[0].short); pk.extract(hdr.us[1].byte); transition accept; }
    state p_next { pk.extract(hdr.us.next.byte); pk.extract(hdr.us.next.short); transition accept; }
}

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action make_short(inout two_t s) { s.setValid(); s.data = 0xabcd; }
    apply {
        sm.egress_spec = 1;
        bit<8> r = 0;
        if (hdr.u.isValid()) { r = r | 0x01; }
        if (hdr.u.byte.isValid()) { r = r | 0x02; }
        if (hdr.u.short.isValid()) { r = r | 0x04; }
        if (hdr.us[0].isValid()) { r = r | 0x08; }
        if (hdr.us[1].isValid()) { r = r | 0x10; }
        if (hdr.base.t == 1) {
            hdr.u2 = hdr.u;
            if (hdr.u2 == hdr.u) { r = r | 0x20; }
            hdr.u.short.setValid();
            hdr.u.short.data = 0x1234;
        } else if (hdr.base.t == 2) {
            bit<8> hi = hdr.u.short.data[15:8];
            hdr.u.byte.setValid();
            hdr.u.byte.data = hi;
        } else if (hdr.base.t == 3) {
            hdr.us[1] = hdr.us[0];
            if (hdr.us[0] == hdr.us[1]) { r = r | 0x20; }
        } else if (hdr.base.t == 4) {
            hdr.us[0].setInvalid();
            if (hdr.us[0] == hdr.u) { r = r | 0x40; }
        } else if (hdr.base.t == 5) {
            make_short(hdr.u.short);  // a member made valid by reference: u.byte becomes invalid
        } else if (hdr.u == hdr.u2) {
            r = r | 0x20;
        }
        hdr.base.r = r;
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;

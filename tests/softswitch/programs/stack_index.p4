/* Run-time header stack indexes out of range in a control, as p4c lowers them (each access
 * becomes "if (i == 0) ... else if (i == 1) ..."): a write is ignored, a statement reading an
 * out-of-range element has no effect, an if condition reading one is false.  The stack's
 * fields also feed a hash (a header stack in a field list: its valid elements). */
#include <core.p4>
#include <v1model.p4>

header idx_t { bit<8> i; bit<8> r; }
header h_t { bit<8> a; }
header sum_t { bit<16> c; }
struct headers_t { idx_t idx; h_t[2] s; sum_t sum; }
struct metadata_t { }

parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.idx); pk.extract(hdr.s.next); pk.extract(hdr.s.next); transition accept; }
}

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> v = 0x55;
        v = hdr.s[hdr.idx.i].a;
        hdr.s[hdr.idx.i].a = 0xee;
        if (hdr.s[hdr.idx.i].isValid()) { hdr.idx.r = v; } else { hdr.idx.r = v + 1; }
        switch (hdr.s[hdr.idx.i].a) {  // out of range: no case runs, not even default
            0xee: { hdr.idx.r = hdr.idx.r | 0x40; }
            default: { hdr.idx.r = hdr.idx.r | 0x80; }
        }
        if (hdr.idx.i == 7) {  // BMv2 push_front swaps: the new invalid s[0] holds the old s[1]
            hdr.s.push_front(1);
            hdr.idx.r = hdr.s[0].a;
        }
        hdr.sum.setValid();
        hash(hdr.sum.c, HashAlgorithm.csum16, 16w0, { hdr.s }, 32w65536);  // a stack in a field list
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;

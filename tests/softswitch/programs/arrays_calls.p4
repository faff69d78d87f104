/* Arrays of non-header types through calls: an array parameter of a function (in and out), a
 * generic function whose T is an array type, .size of a nested array, == with a list
 * expression, a nested array in a hash field list, a nested element at a run-time index
 * assigned whole (out of range: no effect); p4c's C-style declarators (`bit<8> f[2];`). */
#include <core.p4>
#include <v1model.p4>

header data_t { bit<8> i; bit<8> r; bit<16> h; bit<8>[2] pair; }
struct headers_t { data_t d; }
struct metadata_t { bit<8> g[2][2]; }  // p4c's C-style declarator: bit<8>[2][2]

bit<8> total(in bit<8>[2] a) { return a[0] + a[1]; }
T id<T>(in T x) { return x; }
void fill(out bit<8>[2] a, in bit<8> v) { a[0] = v; }

parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.d); transition accept; }
}

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        meta.g[1] = hdr.d.pair;
        meta.g[0] = id(meta.g[1]);
        meta.g[0][0] = meta.g[0][0] + 1;
        hdr.d.r = total(meta.g[0]) + (bit<8>)meta.g.size;
        bit<8> f[2];
        fill(f, hdr.d.i);
        if (f == { hdr.d.i, 8w0 }) { hdr.d.r = hdr.d.r + 0x40; }
        hash(hdr.d.h, HashAlgorithm.csum16, 16w0, { meta.g }, 32w65536);
        hdr.d.pair = meta.g[hdr.d.i];
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;

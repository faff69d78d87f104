/* Arrays of non-header types (P4 spec "Arrays", p4c since 2025): bit<8>[4] in a header (wire
 * order: element 0 first), in metadata and as locals, bool[2], an array of structs, a nested
 * array, list initialisers, .size, whole-array assignment and ==, constant and run-time
 * indexes.  A run-time index out of range behaves as for header stacks (p4c's lowering, see
 * stack_index.p4): a write is ignored, a statement reading it has no effect, a condition
 * reading it is false. */
#include <core.p4>
#include <v1model.p4>

struct pair_t { bit<8> lo; bit<8> hi; }
header data_t { bit<8> i; bit<8> r; bit<8>[4] arr; bit<8> s; bit<8> eq; }
struct headers_t { data_t d; }
struct metadata_t { bit<8>[4] copy; pair_t[2] pairs; bool[2] flags; }

parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.d); transition accept; }
}

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action bump(inout bit<8>[4] a, in bit<8> k) { a[0] = a[0] + k; a[3] = a[3] + k; }
    apply {
        sm.egress_spec = 1;
        bit<8>[4] local = { 1, 2, 3, 4 };
        bit<8>[2][2] grid = { { 10, 11 }, { 12, 13 } };
        meta.copy = hdr.d.arr;                       // whole-array assignment
        meta.pairs[1] = { 0x30, 0x31 };
        meta.flags[0] = hdr.d.i < 4;
        bit<8> v = 0x55;
        v = hdr.d.arr[hdr.d.i];                      // run-time read (no-op when out of range)
        hdr.d.arr[hdr.d.i] = 0xee;                   // run-time write (ignored when out of range)
        if (meta.copy[hdr.d.i] == 0) { v = v + 1; } // false when out of range
        hdr.d.r = v;
        hdr.d.s = (bit<8>)hdr.d.arr.size + local[3] + grid[1][hdr.d.i[0:0]]
                  + meta.pairs[hdr.d.i[0:0]].lo;
        local[hdr.d.i[1:0]][7:4] = 0xf;              // slice of an element at a run-time index
        hdr.d.eq = (meta.copy == hdr.d.arr ? 8w1 : 8w0) | (local == { 1, 2, 3, 4 } ? 8w2 : 8w0)
                   | (meta.flags[0] ? 8w4 : 8w0) | (meta.flags[1] ? 8w8 : 8w0);
        if (hdr.d.i == 9) { bump(hdr.d.arr, local[0]); }
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;

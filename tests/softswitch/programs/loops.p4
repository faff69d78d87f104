// P4_16 1.2.5 for loops (softswitch/loops.py): three-clause and range loops with run-time
// bounds, break/continue, several init and update items, loops in actions, functions and apply
// blocks, return and exit inside a loop, a condition that calls a function with an inout
// argument (run before every test), a range whose end is the largest value of its type.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  n;
    bit<8>  lo;
    bit<8>  hi;
    bit<16> s1;
    bit<16> cnt;
    bit<8>  last;
    bit<8>  fb;
    bit<8>  nest;
    bit<8>  calls;
    bit<8>  x;
    bit<8>  tail;
}
struct headers_t { h_t h; }
struct meta_t {}

bit<8> first_bit(in bit<8> v) {
    bit<8> w = v;
    for (bit<8> b = 0; b < 8; b = b + 1) {
        if (w[0:0] == 1) {
            return b;
        }
        w = w >> 1;
    }
    return 8;
}

bool step(inout bit<8> c) {
    c = c + 1;
    return c < 5;
}

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action sums() {
        hdr.h.s1 = 0;
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
            if (i == 7) {
                continue;
            }
            if (i == 12) {
                break;
            }
            hdr.h.s1 = hdr.h.s1 + (bit<16>)i;
        }
    }
    table t {
        key = { hdr.h.tail : exact; }
        actions = { sums; NoAction; }
        const default_action = sums;
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        for (bit<8> k in hdr.h.lo .. hdr.h.hi) {
            hdr.h.cnt = hdr.h.cnt + 1;
            hdr.h.last = k;
            k = 0;
        }
        hdr.h.fb = first_bit(hdr.h.n);
        for (bit<8> i = 0, bit<8> j = 3; i < j; i = i + 1, j = j - 1) {
            for (bit<8> q = 0; q < 3; q = q + 1) {
                hdr.h.nest = hdr.h.nest + 1;
            }
        }
        for (; step(hdr.h.x); ) {
            hdr.h.calls = hdr.h.calls + 1;
        }
        for (bit<8> z = 0; ; z = z + 1) {
            if (z == hdr.h.n) {
                if (z == 99) {
                    exit;
                }
                break;
            }
        }
        hdr.h.tail = 0xee;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

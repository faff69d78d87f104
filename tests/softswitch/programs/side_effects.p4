/* Calls with side effects inside expressions (p4c's SideEffectOrdering): left to right,
 * copy-in at the call, copy-out when it returns, operands read before a call are saved,
 * && and || short-circuit; compound assignment; named, default and don't-care arguments.
 * The expected packets come from side_effects_out() in gen_stf_lang.py. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header in_t {
    bit<8> a;
    bit<8> b;
}

header out_t {
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
    bit<8> r7;
    bit<8> r8;
    bit<8> r9;
    bit<8> r10;
    bit<8> r11;
    bit<8> r12;
    bit<8> r13;
    bit<8> r14;
    bit<8> r15;
}

struct headers_t {
    ethernet_t ethernet;
    in_t       i;
    out_t      o;
}

struct metadata_t { }

bit<8> bump(inout bit<8> x, in bit<8> by) {
    x = x + by;
    return x;
}

bit<8> twice(out bit<8> y, in bit<8> v) {
    y = v * 2;
    return v + 1;
}

bool is_big(inout bit<8> calls, in bit<8> v) {
    calls = calls + 1;
    return v > 100;
}

bit<8> addk(in bit<8> v, in bit<8> k = 7) {
    return v + k;
}

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.i);
        packet.extract(hdr.o);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        bit<8> x = hdr.i.a;
        hdr.o.r1 = x + bump(x, 1);              // x is read before bump changes it
        hdr.o.r2 = x;
        bit<8> c = 0;
        hdr.o.r3 = bump(c, hdr.i.b) - bump(c, 1);
        hdr.o.r4 = c;
        bit<8> n = 0;
        if (hdr.i.a > 10 && is_big(n, hdr.i.b)) { hdr.o.r5 = 1; } else { hdr.o.r5 = 2; }
        if (hdr.i.a > 10 || is_big(n, hdr.i.b)) { hdr.o.r6 = 1; } else { hdr.o.r6 = 2; }
        hdr.o.r7 = n;
        bit<8> y;
        hdr.o.r8 = twice(y, hdr.i.a) + y;       // y is read after twice wrote it
        bit<8> z = hdr.i.a;
        z += hdr.i.b;
        z <<= 1;
        z |= 1;
        z ^= 0x0f;
        z -= 3;
        z |+|= 200;
        hdr.o.r9 = z;
        bit<8> w = hdr.i.b;
        w |-|= hdr.i.a;
        w *= 3;
        w &= 0xfe;
        w >>= 1;
        w %= 32;
        hdr.o.r10 = w;
        hdr.o.r11 = bump(hdr.o.r11, hdr.i.a);   // copy-out, then the assignment
        bit<8> q = hdr.i.b;
        hdr.o.r12 = bump(by = 3, x = q) + q;
        hdr.o.r13 = twice(_, hdr.i.b) + addk(hdr.i.a) + addk(k = 1, v = hdr.i.b);
        bit<8> s = 5;
        switch (bump(s, hdr.i.a & 3)) {
            5: { hdr.o.r14 = 50; }
            6: { hdr.o.r14 = 60; }
            default: { hdr.o.r14 = s; }
        }
        bool t = is_big(s, hdr.i.a) ? true : false;
        hdr.o.r15 = t ? s : s + 100;
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.i);
        packet.emit(hdr.o);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

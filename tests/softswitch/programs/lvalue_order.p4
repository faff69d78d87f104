/* The target of an assignment is evaluated before its right side (p4c's SideEffectOrdering):
 * a stack index is read before a call on the right changes it, and a call with an inout
 * parameter may sit in the index of the target (called once, also for a compound
 * assignment); an inout argument's index is read before a later argument's call changes it.
 * Top-level declarations end with an empty ';' as p4c allows.  Expected packets worked out
 * by hand in lvalue_order.stf. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header idx_t {
    bit<8> v;
    bit<8> w;
}

header e_t {
    bit<8> a;
}

struct headers_t {
    ethernet_t ethernet;
    idx_t      i;
    e_t[4]     s;
};

struct metadata_t { };

bit<2> low(in bit<8> v) {
    return v[1:0];
}

bit<8> reset(inout bit<8> v) {
    v = 0;
    return 7;
}

bit<2> pick(inout bit<8> x) {
    x = x + 1;
    return 2;
}

bit<8> bump(inout bit<8> x) {
    x = x + 1;
    return 9;
}

void two(inout bit<8> a, in bit<8> b) {
    a = b;
}

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.i);
        packet.extract(hdr.s.next);
        packet.extract(hdr.s.next);
        packet.extract(hdr.s.next);
        packet.extract(hdr.s.next);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.s[low(hdr.i.v)].a = reset(hdr.i.v);
        hdr.s[pick(hdr.s[low(hdr.i.w)].a)].a = hdr.i.w;
        hdr.s[pick(hdr.s[0].a)].a += 5;
        two(hdr.s[low(hdr.i.w)].a, bump(hdr.i.w));
        standard_metadata.egress_spec = 1;
    }
};

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

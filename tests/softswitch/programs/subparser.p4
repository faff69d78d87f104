/* A parser applying a sub-parser instance (p4c inlines it): the sub-parser's own states,
 * select, local variable and inout scalar parameter; its accept continues with the
 * statements after the apply, its reject ends parsing.  Expected packets:
 * subparser_out() in gen_stf_lang.py. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8> kind;
    bit<8> val;
}

header out_t {
    bit<8> seen;
    bit<8> after;
}

struct headers_t {
    ethernet_t ethernet;
    tag_t      t1;
    tag_t      t2;
    out_t      o;
}

struct metadata_t {
    bit<8> seen;
    bit<8> after;
}

parser Tags(packet_in pk, inout headers_t hdr, inout bit<8> seen) {
    bit<8> extra = 0;
    state start {
        pk.extract(hdr.t1);
        seen = seen + 1;
        transition select(hdr.t1.kind) {
            1: second;
            0xff: reject;
            default: accept;
        }
    }
    state second {
        pk.extract(hdr.t2);
        extra = hdr.t2.val;
        seen = seen + extra;
        transition accept;
    }
}

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    Tags() tags;
    state start {
        packet.extract(hdr.ethernet);
        meta.seen = 0x10;
        tags.apply(packet, hdr, meta.seen);
        meta.after = 0x77;
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
        hdr.o.seen = meta.seen;
        hdr.o.after = meta.after;
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
        packet.emit(hdr.t1);
        packet.emit(hdr.t2);
        packet.emit(hdr.o);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

/* Parser select on a tuple with masks, ranges, don't-care and default; the path taken is reported. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<16> kind;
    bit<8>  sub;
    bit<8>  path;
}

struct headers_t {
    ethernet_t ethernet;
    tag_t      tag;
}

struct metadata_t {
    bit<8> path;
}

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.tag);
        transition select(hdr.tag.kind, hdr.tag.sub) {
            (0x0800 &&& 0xff00, _): masked;
            (0x1000 .. 0x10ff, 0x01): ranged_one;
            (0x1000 .. 0x10ff, _): ranged;
            (_, 0xa0 &&& 0xf0): sub_masked;
            default: other;
        }
    }
    state masked {
        meta.path = 1;
        transition accept;
    }
    state ranged_one {
        meta.path = 2;
        transition accept;
    }
    state ranged {
        meta.path = 3;
        transition accept;
    }
    state sub_masked {
        meta.path = 4;
        transition accept;
    }
    state other {
        meta.path = 5;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.tag.path = meta.path;
        standard_metadata.egress_spec = 9w1;
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.tag);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

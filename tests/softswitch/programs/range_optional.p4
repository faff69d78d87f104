/* A table with range and optional keys and priorities; the class of the winning entry is written out. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header l4_t {
    bit<8>  proto;
    bit<16> port;
    bit<8>  cls;
}

struct headers_t {
    ethernet_t ethernet;
    l4_t       l4;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.l4);
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
    action set_class(bit<8> cls) {
        hdr.l4.cls = cls;
    }
    table classify {
        key = {
            hdr.l4.port  : range;
            hdr.l4.proto : optional;
        }
        actions = { set_class; }
        default_action = set_class(8w0xee);
    }
    apply {
        classify.apply();
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
        packet.emit(hdr.l4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

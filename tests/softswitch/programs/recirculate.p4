/* Recirculation preserving one metadata field list: only the annotated field survives. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8> passes;
    bit<8> kept;
    bit<8> lost;
}

struct headers_t {
    ethernet_t ethernet;
    tag_t      tag;
}

struct metadata_t {
    @field_list(1)
    bit<8> kept;
    bit<8> lost;
}

const bit<32> INSTANCE_NORMAL = 0;
const bit<32> INSTANCE_RECIRC = 4;

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.tag);
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
        standard_metadata.egress_spec = 1;
        if (standard_metadata.instance_type == INSTANCE_NORMAL) {
            meta.kept = hdr.tag.passes + 8w0x40;
            meta.lost = 8w0x77;
        }
        hdr.tag.passes = hdr.tag.passes + 1;
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == INSTANCE_NORMAL) {
            recirculate_preserving_field_list(1);
        } else if (standard_metadata.instance_type == INSTANCE_RECIRC) {
            hdr.tag.kept = meta.kept;
            hdr.tag.lost = meta.lost;
        }
    }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.tag);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

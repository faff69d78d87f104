/* Ingress-to-egress clone to a mirror session; egress marks the clone by its instance_type. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers_t {
    ethernet_t ethernet;
}

struct metadata_t { }

const bit<32> INSTANCE_NORMAL = 0;
const bit<32> INSTANCE_INGRESS_CLONE = 1;

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
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
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action forward_and_mirror(bit<9> port, bit<32> session) {
        standard_metadata.egress_spec = port;
        clone(CloneType.I2E, session);
    }
    table port_map {
        key = { standard_metadata.ingress_port: exact; }
        actions = { forward; forward_and_mirror; }
        default_action = forward(9w1);
    }
    apply {
        port_map.apply();
        // changed after the clone() call: I2E clones carry the packet as parsed, not this edit
        hdr.ethernet.dstAddr = 0x0000000000ee;
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == INSTANCE_INGRESS_CLONE) {
            hdr.ethernet.etherType = 0xc10e;
        } else if (standard_metadata.instance_type == INSTANCE_NORMAL) {
            hdr.ethernet.etherType = 0x0001;
        }
    }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

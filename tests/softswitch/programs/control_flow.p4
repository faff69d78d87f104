/* Control flow: const entries (exact and ternary, order = priority), switch on action_run,
 * hit/miss, exit from an action, drop in egress, egress-to-egress clone. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8> key;
    bit<8> path;
    bit<8> hits;
    bit<8> after;
    bit<8> eg;
}

struct headers_t {
    ethernet_t ethernet;
    tag_t      tag;
}

struct metadata_t { }

const bit<32> INSTANCE_NORMAL = 0;
const bit<32> INSTANCE_EGRESS_CLONE = 2;

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

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action set_path(bit<8> p) {
        hdr.tag.path = p;
    }
    action finish() {
        hdr.tag.path = 8w0xee;
        exit;
    }
    table first {
        key = { hdr.tag.key: exact; }
        actions = { set_path; finish; NoAction; }
        default_action = NoAction();
        const entries = {
            8w1 : set_path(8w10);
            8w2 : finish();
        }
    }
    table second {
        key = { hdr.tag.key: ternary; }
        actions = { set_path; NoAction; }
        default_action = NoAction();
        const entries = {
            8w0x30 &&& 8w0xf0 : set_path(8w0x30);
            8w0x31 : set_path(8w0x31);
        }
    }
    apply {
        standard_metadata.egress_spec = 9w1;
        switch (first.apply().action_run) {
            set_path: {
                hdr.tag.hits = 8w1;
            }
            NoAction: {
                if (second.apply().hit) {
                    hdr.tag.hits = 8w2;
                } else {
                    hdr.tag.hits = 8w3;
                }
            }
        }
        hdr.tag.after = 8w0x55;
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == INSTANCE_NORMAL) {
            hdr.tag.eg = hdr.tag.eg + 8w1;
            if (hdr.tag.key == 8w0x66) {
                mark_to_drop(standard_metadata);
            } else if (hdr.tag.key == 8w0x77) {
                clone(CloneType.E2E, 32w7);
            }
        } else if (standard_metadata.instance_type == INSTANCE_EGRESS_CLONE) {
            hdr.tag.eg = hdr.tag.eg + 8w0x10;
        }
    }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
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

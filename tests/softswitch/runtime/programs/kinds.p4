/* Every match kind in one table, plus an exact-only table: for read-back tests. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers_t { ethernet_t ethernet; }
struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }
control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action fwd(bit<9> port) { standard_metadata.egress_spec = port; }
    action drop() { mark_to_drop(standard_metadata); }
    table all_kinds {
        key = {
            hdr.ethernet.dstAddr: exact;
            hdr.ethernet.srcAddr: lpm;
            hdr.ethernet.etherType: ternary;
            standard_metadata.ingress_port: range;
            standard_metadata.instance_type: optional;
        }
        actions = { fwd; drop; }
        default_action = drop();
    }
    table by_type {
        key = { hdr.ethernet.etherType: exact; }
        actions = { fwd; drop; @defaultonly NoAction; }
        default_action = NoAction();
    }
    apply {
        all_kinds.apply();
        by_type.apply();
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

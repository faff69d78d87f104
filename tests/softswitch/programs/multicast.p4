/* Multicast with replication ids: ingress picks a group, egress rewrites per egress_rid. */
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
    action set_mgrp(bit<16> grp) {
        standard_metadata.mcast_grp = grp;
    }
    action unicast(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    table dmac {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { set_mgrp; unicast; }
        default_action = unicast(9w4);
    }
    apply {
        dmac.apply();
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    action set_src(bit<48> smac) {
        hdr.ethernet.srcAddr = smac;
    }
    table rid_rewrite {
        key = { standard_metadata.egress_rid: exact; }
        actions = { set_src; NoAction; }
        default_action = NoAction();
    }
    apply {
        rid_rewrite.apply();
        // the low byte of the type field shows which port the replica left on
        hdr.ethernet.etherType = hdr.ethernet.etherType[15:8] ++ (bit<8>)standard_metadata.egress_port;
    }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

/* Header stack: MPLS-like labels pushed, swapped and popped with push_front/pop_front. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header mpls_t {
    bit<20> label;
    bit<3>  tc;
    bit<1>  bos;
    bit<8>  ttl;
}

struct headers_t {
    ethernet_t ethernet;
    mpls_t[3]  mpls;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x8847: parse_mpls;
            default: accept;
        }
    }
    state parse_mpls {
        packet.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) {
            1w0: parse_mpls;
            1w1: accept;
        }
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
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action push_label(bit<20> label, bit<9> port) {
        hdr.mpls.push_front(1);
        hdr.mpls[0].setValid();
        hdr.mpls[0].label = label;
        hdr.mpls[0].tc = 3w0;
        hdr.mpls[0].bos = hdr.mpls[1].isValid() ? 1w0 : 1w1;
        hdr.mpls[0].ttl = 8w64;
        hdr.ethernet.etherType = 0x8847;
        standard_metadata.egress_spec = port;
    }
    action swap_label(bit<20> label, bit<9> port) {
        hdr.mpls[0].label = label;
        hdr.mpls[0].ttl = hdr.mpls[0].ttl - 1;
        standard_metadata.egress_spec = port;
    }
    action pop_label(bit<9> port) {
        hdr.mpls.pop_front(1);
        hdr.ethernet.etherType = hdr.mpls[0].isValid() ? 16w0x8847 : 16w0x0800;
        standard_metadata.egress_spec = port;
    }
    table mpls_op {
        key = { standard_metadata.ingress_port: exact; }
        actions = { push_label; swap_label; pop_label; drop; }
        default_action = drop();
    }
    apply {
        mpls_op.apply();
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.mpls);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

/* Control-plane names from @name annotations (absolute with a leading dot, relative without;
 * on tables, keys, actions and action parameters), and a table with no default_action
 * (the spec's default is NoAction; p4c adds it as a default-only action).  Structured
 * annotations (`@a[k = "v", n = 3]`, P4_16 1.2.0) are accepted and ignored. */
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

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    @name("fwd") action set_port(@name("out_port") bit<9> p) {
        standard_metadata.egress_spec = p;
    }
    action set_type(bit<16> t) {
        hdr.ethernet.etherType = t;
    }
    @layout[mode = "sram", ways = 4] @notes["x", 2]
    @name(".l2_table") table dmac {
        key = { hdr.ethernet.dstAddr: exact @name("dmac"); }
        actions = { set_port; }
        default_action = set_port(9w1);
    }
    @name("type_table") table types {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { set_type; }
    }
    apply {
        dmac.apply();
        types.apply();
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
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

/* Identifiers that are legal in P4 but reserved words or special names in other languages
 * (fields, action parameters, locals, instances); a target must not trip over them. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header kw_t {
    bit<8> not;
    bit<8> pass;
    bit<8> class;
    bit<8> lambda;
    bit<8> from;
    bit<8> self;
    bit<8> None;
    bit<8> def;
}

struct headers_t {
    ethernet_t ethernet;
    kw_t       kw;
}

struct metadata_t {
    bit<8> import;
}

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.kw);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    register<bit<8>>(4) print;

    action global(bit<8> lambda, bit<8> yield) {
        hdr.kw.lambda = lambda;
        hdr.kw.def = yield;
    }
    table while {
        key = { hdr.kw.class: exact; }
        actions = { global; NoAction; }
        default_action = NoAction();
    }
    apply {
        bit<8> async = hdr.kw.not;
        meta.import = async + 1;
        hdr.kw.pass = meta.import;
        hdr.kw.self = hdr.kw.None;
        print.write(0, hdr.kw.from);
        while.apply();
        standard_metadata.egress_spec = 9w1;
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
        packet.emit(hdr.kw);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

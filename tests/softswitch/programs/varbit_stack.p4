/* Two-argument extract into the next element of a header stack whose element has a varbit
 * field: the size argument sets that element's varbit length, and emit writes it back.
 * Expected packets worked out by hand in varbit_stack.stf. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header opt_t {
    bit<8>     len;
    varbit<32> data;
}

header result_t {
    bit<8> same;
}

struct headers_t {
    ethernet_t ethernet;
    opt_t[2]   o;
    result_t   r;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition opt;
    }
    state opt {
        packet.extract(hdr.o.next, (bit<32>)packet.lookahead<bit<8>>() * 8);
        transition select(hdr.o.lastIndex) {
            0: opt;
            default: accept;
        }
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.r.setValid();
        hdr.r.same = hdr.o[0] == hdr.o[1] ? 8w1 : 8w0;
        standard_metadata.egress_spec = 1;
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
        packet.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

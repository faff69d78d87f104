/* hash(): crc16, crc32, csum16 and a bounded bucket (base + h % max) written into header fields. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header hash_t {
    bit<32> a;
    bit<16> b;
    bit<8>  c;
    bit<16> crc16;
    bit<32> crc32;
    bit<16> csum;
    bit<16> bucket;
}

struct headers_t {
    ethernet_t ethernet;
    hash_t     h;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.h);
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
        hash(hdr.h.crc16, HashAlgorithm.crc16, 16w0, { hdr.h.a, hdr.h.b, hdr.h.c }, 32w65536);
        hash(hdr.h.crc32, HashAlgorithm.crc32, 32w0, { hdr.h.a, hdr.h.b, hdr.h.c }, 64w4294967296);
        hash(hdr.h.csum, HashAlgorithm.csum16, 16w0, { hdr.h.a, hdr.h.b }, 32w65536);
        hash(hdr.h.bucket, HashAlgorithm.crc32, 16w100, { hdr.h.a }, 32w10);
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
        packet.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

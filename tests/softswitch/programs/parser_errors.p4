/* lookahead, verify and parser errors: the error reaches ingress as standard_metadata.parser_error. */
#include <core.p4>
#include <v1model.p4>

error { BadLength }

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8> kind;
    bit<8> result;
}

header body_t {
    bit<8> len;
    bit<8> val;
}

header big_t {
    bit<64> data;
}

struct headers_t {
    ethernet_t ethernet;
    tag_t      tag;
    body_t     body;
    big_t      big;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.tag);
        transition select(packet.lookahead<bit<8>>()) {
            0x80 &&& 0x80: parse_big;
            default: parse_body;
        }
    }
    state parse_body {
        packet.extract(hdr.body);
        verify(hdr.body.len >= 2, error.BadLength);
        transition accept;
    }
    state parse_big {
        packet.extract(hdr.big);
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
        if (standard_metadata.parser_error == error.NoError) {
            hdr.tag.result = 8w0;
        } else if (standard_metadata.parser_error == error.PacketTooShort) {
            hdr.tag.result = 8w1;
        } else if (standard_metadata.parser_error == error.BadLength) {
            hdr.tag.result = 8w2;
        } else {
            hdr.tag.result = 8w0xff;
        }
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
        packet.emit(hdr.tag);
        packet.emit(hdr.body);
        packet.emit(hdr.big);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

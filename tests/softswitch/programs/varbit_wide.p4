/* A varbit field wider than 128 bits (the native backend keeps it as a byte array): extract
 * with a run-time size, == on the fields and on the headers, assignment to another header
 * (value and length), emit, and a checksum over a field list holding it.
 * Expected packets: varbit_wide.stf (the checksums computed by gen_stf_varbit_wide.py). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header opt_t {
    bit<8>      len;
    varbit<256> data;
}

header result_t {
    bit<8>  flags;
    bit<16> csum;
}

struct headers_t {
    ethernet_t ethernet;
    opt_t      a;
    opt_t      b;
    opt_t      c;
    result_t   r;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.a, (bit<32>)packet.lookahead<bit<8>>() * 8);
        packet.extract(hdr.b, (bit<32>)packet.lookahead<bit<8>>() * 8);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.r.setValid();
        hdr.r.flags = 0;
        if (hdr.a.data == hdr.b.data) {
            hdr.r.flags = hdr.r.flags | 1;
        }
        if (hdr.a == hdr.b) {
            hdr.r.flags = hdr.r.flags | 2;
        }
        if (hdr.a.data != hdr.b.data) {
            hdr.r.flags = hdr.r.flags | 4;
        }
        hdr.c.setValid();
        hdr.c.len = hdr.b.len;
        hdr.c.data = hdr.b.data;
        standard_metadata.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.r.isValid(), { hdr.a.len, hdr.a.data, hdr.b.len },
                        hdr.r.csum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

/* Arithmetic semantics: wraparound, saturation (unsigned and signed), shifts (logical,
 * arithmetic, by >= width), concatenation, slices (read and write), casts with zero and
 * sign extension, negation, signed comparison.  Each result goes to its own field. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header in_t {
    bit<8> a;
    bit<8> b;
    int<8> sa;
    int<8> sb;
}

header out_t {
    bit<8>  add;
    bit<8>  sub;
    bit<8>  sat_add;
    bit<8>  sat_sub;
    int<8>  ssat_add;
    int<8>  ssat_sub;
    bit<8>  mul;
    bit<8>  shl;
    bit<8>  shr;
    int<8>  sshr;
    bit<8>  shl_wide;
    bit<16> cat;
    bit<8>  slice;
    bit<16> sext;
    bit<16> zext;
    bit<8>  bnot;
    bit<8>  neg;
    bit<8>  xor;
    bit<8>  slice_write;
    bit<8>  scmp;
    bit<8>  ucmp;
    bit<32> wide_add;
}

struct headers_t {
    ethernet_t ethernet;
    in_t       i;
    out_t      o;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.i);
        packet.extract(hdr.o);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        bit<8> a = hdr.i.a;
        bit<8> b = hdr.i.b;
        int<8> sa = hdr.i.sa;
        int<8> sb = hdr.i.sb;
        hdr.o.add = a + b;
        hdr.o.sub = b - a;
        hdr.o.sat_add = a |+| b;
        hdr.o.sat_sub = b |-| a;
        hdr.o.ssat_add = sa |+| sb;
        hdr.o.ssat_sub = sa |-| sb;
        hdr.o.mul = a * b;
        hdr.o.shl = a << 3;
        hdr.o.shr = a >> 2;
        hdr.o.sshr = sa >> 2;
        hdr.o.shl_wide = a << b;
        hdr.o.cat = a ++ b;
        hdr.o.slice = (bit<8>)a[7:4];
        hdr.o.sext = (bit<16>)(int<16>)sa;
        hdr.o.zext = (bit<16>)a;
        hdr.o.bnot = ~a;
        hdr.o.neg = -a;
        hdr.o.xor = a ^ b;
        bit<8> x = 8w0;
        x[7:4] = b[3:0];
        x[3:0] = a[7:4];
        hdr.o.slice_write = x;
        hdr.o.scmp = (sa < sb) ? 8w1 : 8w0;
        hdr.o.ucmp = (a < b) ? 8w1 : 8w0;
        hdr.o.wide_add = 32w0xffffffff + (bit<32>)a;
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
        packet.emit(hdr.i);
        packet.emit(hdr.o);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

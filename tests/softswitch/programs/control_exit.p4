/* exit inside an action run by a table inside a nested control ends the whole ingress
 * (egress still runs); a table applied in a branch of ?: runs only when that branch is
 * chosen; a table with no actions property runs NoAction; a serializable enum compares
 * with bit<8> and assigns to its underlying type.  Expected packets: control_exit_out()
 * in gen_stf_lang.py. */
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
}

header out_t {
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
    bit<8> r7;
    bit<8> r8;
}

struct headers_t {
    ethernet_t ethernet;
    in_t       i;
    out_t      o;
}

struct metadata_t { }

enum bit<8> Kind {
    LOW  = 1,
    HIGH = 200
}

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

control Sub(inout headers_t hdr) {
    action stop() {
        hdr.o.r2 = 0x22;
        exit;
    }
    table stop_t {
        key = { hdr.i.a: exact; }
        actions = { stop; NoAction; }
        default_action = NoAction;
    }
    apply {
        stop_t.apply();
        hdr.o.r3 = 0x33;
    }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    Sub() sub;

    action mark() {
        hdr.o.r1 = hdr.o.r1 + 1;
    }
    table count_t {
        key = { hdr.i.b: exact; }
        actions = { mark; }
    }
    table bare_t {
        key = { hdr.i.a: exact; }
    }
    apply {
        standard_metadata.egress_spec = 1;
        bare_t.apply();
        hdr.o.r4 = hdr.i.a == 4 ? (count_t.apply().hit ? 8w1 : 8w2) : 8w3;
        if (hdr.i.b == Kind.HIGH) {
            hdr.o.r7 = 1;
        } else {
            hdr.o.r7 = 2;
        }
        hdr.o.r8 = Kind.HIGH;
        sub.apply(hdr);
        hdr.o.r5 = 0x55;
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { hdr.o.r6 = 0x66; }
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

/* Benchmark program: 32 register read-modify-writes per packet (one per lane),
 * the shape of a DHC aggregation step.  Used by bench/softswitch/softswitch.py. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header slot_t {
    bit<32> index;
}

header lanes_t {
    bit<32> l0;
    bit<32> l1;
    bit<32> l2;
    bit<32> l3;
    bit<32> l4;
    bit<32> l5;
    bit<32> l6;
    bit<32> l7;
    bit<32> l8;
    bit<32> l9;
    bit<32> l10;
    bit<32> l11;
    bit<32> l12;
    bit<32> l13;
    bit<32> l14;
    bit<32> l15;
    bit<32> l16;
    bit<32> l17;
    bit<32> l18;
    bit<32> l19;
    bit<32> l20;
    bit<32> l21;
    bit<32> l22;
    bit<32> l23;
    bit<32> l24;
    bit<32> l25;
    bit<32> l26;
    bit<32> l27;
    bit<32> l28;
    bit<32> l29;
    bit<32> l30;
    bit<32> l31;
}

struct headers_t {
    ethernet_t ethernet;
    slot_t     slot;
    lanes_t    lanes;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.slot);
        packet.extract(hdr.lanes);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    register<bit<32>>(1024) r0;
    register<bit<32>>(1024) r1;
    register<bit<32>>(1024) r2;
    register<bit<32>>(1024) r3;
    register<bit<32>>(1024) r4;
    register<bit<32>>(1024) r5;
    register<bit<32>>(1024) r6;
    register<bit<32>>(1024) r7;
    register<bit<32>>(1024) r8;
    register<bit<32>>(1024) r9;
    register<bit<32>>(1024) r10;
    register<bit<32>>(1024) r11;
    register<bit<32>>(1024) r12;
    register<bit<32>>(1024) r13;
    register<bit<32>>(1024) r14;
    register<bit<32>>(1024) r15;
    register<bit<32>>(1024) r16;
    register<bit<32>>(1024) r17;
    register<bit<32>>(1024) r18;
    register<bit<32>>(1024) r19;
    register<bit<32>>(1024) r20;
    register<bit<32>>(1024) r21;
    register<bit<32>>(1024) r22;
    register<bit<32>>(1024) r23;
    register<bit<32>>(1024) r24;
    register<bit<32>>(1024) r25;
    register<bit<32>>(1024) r26;
    register<bit<32>>(1024) r27;
    register<bit<32>>(1024) r28;
    register<bit<32>>(1024) r29;
    register<bit<32>>(1024) r30;
    register<bit<32>>(1024) r31;

    apply {
        bit<32> v;
        r0.read(v, hdr.slot.index);
        v = v + hdr.lanes.l0;
        r0.write(hdr.slot.index, v);
        hdr.lanes.l0 = v;
        r1.read(v, hdr.slot.index);
        v = v + hdr.lanes.l1;
        r1.write(hdr.slot.index, v);
        hdr.lanes.l1 = v;
        r2.read(v, hdr.slot.index);
        v = v + hdr.lanes.l2;
        r2.write(hdr.slot.index, v);
        hdr.lanes.l2 = v;
        r3.read(v, hdr.slot.index);
        v = v + hdr.lanes.l3;
        r3.write(hdr.slot.index, v);
        hdr.lanes.l3 = v;
        r4.read(v, hdr.slot.index);
        v = v + hdr.lanes.l4;
        r4.write(hdr.slot.index, v);
        hdr.lanes.l4 = v;
        r5.read(v, hdr.slot.index);
        v = v + hdr.lanes.l5;
        r5.write(hdr.slot.index, v);
        hdr.lanes.l5 = v;
        r6.read(v, hdr.slot.index);
        v = v + hdr.lanes.l6;
        r6.write(hdr.slot.index, v);
        hdr.lanes.l6 = v;
        r7.read(v, hdr.slot.index);
        v = v + hdr.lanes.l7;
        r7.write(hdr.slot.index, v);
        hdr.lanes.l7 = v;
        r8.read(v, hdr.slot.index);
        v = v + hdr.lanes.l8;
        r8.write(hdr.slot.index, v);
        hdr.lanes.l8 = v;
        r9.read(v, hdr.slot.index);
        v = v + hdr.lanes.l9;
        r9.write(hdr.slot.index, v);
        hdr.lanes.l9 = v;
        r10.read(v, hdr.slot.index);
        v = v + hdr.lanes.l10;
        r10.write(hdr.slot.index, v);
        hdr.lanes.l10 = v;
        r11.read(v, hdr.slot.index);
        v = v + hdr.lanes.l11;
        r11.write(hdr.slot.index, v);
        hdr.lanes.l11 = v;
        r12.read(v, hdr.slot.index);
        v = v + hdr.lanes.l12;
        r12.write(hdr.slot.index, v);
        hdr.lanes.l12 = v;
        r13.read(v, hdr.slot.index);
        v = v + hdr.lanes.l13;
        r13.write(hdr.slot.index, v);
        hdr.lanes.l13 = v;
        r14.read(v, hdr.slot.index);
        v = v + hdr.lanes.l14;
        r14.write(hdr.slot.index, v);
        hdr.lanes.l14 = v;
        r15.read(v, hdr.slot.index);
        v = v + hdr.lanes.l15;
        r15.write(hdr.slot.index, v);
        hdr.lanes.l15 = v;
        r16.read(v, hdr.slot.index);
        v = v + hdr.lanes.l16;
        r16.write(hdr.slot.index, v);
        hdr.lanes.l16 = v;
        r17.read(v, hdr.slot.index);
        v = v + hdr.lanes.l17;
        r17.write(hdr.slot.index, v);
        hdr.lanes.l17 = v;
        r18.read(v, hdr.slot.index);
        v = v + hdr.lanes.l18;
        r18.write(hdr.slot.index, v);
        hdr.lanes.l18 = v;
        r19.read(v, hdr.slot.index);
        v = v + hdr.lanes.l19;
        r19.write(hdr.slot.index, v);
        hdr.lanes.l19 = v;
        r20.read(v, hdr.slot.index);
        v = v + hdr.lanes.l20;
        r20.write(hdr.slot.index, v);
        hdr.lanes.l20 = v;
        r21.read(v, hdr.slot.index);
        v = v + hdr.lanes.l21;
        r21.write(hdr.slot.index, v);
        hdr.lanes.l21 = v;
        r22.read(v, hdr.slot.index);
        v = v + hdr.lanes.l22;
        r22.write(hdr.slot.index, v);
        hdr.lanes.l22 = v;
        r23.read(v, hdr.slot.index);
        v = v + hdr.lanes.l23;
        r23.write(hdr.slot.index, v);
        hdr.lanes.l23 = v;
        r24.read(v, hdr.slot.index);
        v = v + hdr.lanes.l24;
        r24.write(hdr.slot.index, v);
        hdr.lanes.l24 = v;
        r25.read(v, hdr.slot.index);
        v = v + hdr.lanes.l25;
        r25.write(hdr.slot.index, v);
        hdr.lanes.l25 = v;
        r26.read(v, hdr.slot.index);
        v = v + hdr.lanes.l26;
        r26.write(hdr.slot.index, v);
        hdr.lanes.l26 = v;
        r27.read(v, hdr.slot.index);
        v = v + hdr.lanes.l27;
        r27.write(hdr.slot.index, v);
        hdr.lanes.l27 = v;
        r28.read(v, hdr.slot.index);
        v = v + hdr.lanes.l28;
        r28.write(hdr.slot.index, v);
        hdr.lanes.l28 = v;
        r29.read(v, hdr.slot.index);
        v = v + hdr.lanes.l29;
        r29.write(hdr.slot.index, v);
        hdr.lanes.l29 = v;
        r30.read(v, hdr.slot.index);
        v = v + hdr.lanes.l30;
        r30.write(hdr.slot.index, v);
        hdr.lanes.l30 = v;
        r31.read(v, hdr.slot.index);
        v = v + hdr.lanes.l31;
        r31.write(hdr.slot.index, v);
        hdr.lanes.l31 = v;
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
        packet.emit(hdr.slot);
        packet.emit(hdr.lanes);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

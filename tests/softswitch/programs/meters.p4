/* Indirect meters configured by the STF file (meter_set_rates / meter_array_set_rates, as p4c's
 * BMv2 runner forwards them to simple_switch_CLI): a packet meter and a byte meter indexed by
 * the EtherType; the colours go into the source MAC (packet meter * 16 + byte meter).  Rates
 * are 0, so buckets never refill and the colours do not depend on time. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers_t { eth_t eth; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    meter<bit<16>>(4, MeterType.packets) mp;
    meter<bit<16>>(4, MeterType.bytes) mb;
    apply {
        bit<32> c1 = 0;
        bit<32> c2 = 0;
        mp.execute_meter(hdr.eth.etype, c1);
        mb.execute_meter(hdr.eth.etype, c2);
        hdr.eth.src = (bit<48>)(c1 * 16 + c2);
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

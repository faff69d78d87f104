/* A two-port wire: every frame from port 1 leaves on port 2 and back, bytes unchanged. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}
struct headers_t { ethernet_t ethernet; }
struct metadata_t { }

parser WireParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start { packet.extract(hdr.ethernet); transition accept; }
}
control WireVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }
control WireIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = standard_metadata.ingress_port == 1 ? 9w2 : 9w1;
    }
}
control WireEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    apply { }
}
control WireCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }
control WireDeparser(packet_out packet, in headers_t hdr) { apply { packet.emit(hdr.ethernet); } }
V1Switch(WireParser(), WireVerify(), WireIngress(), WireEgress(), WireCompute(), WireDeparser()) main;

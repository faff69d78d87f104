/* Runtime test program: an indirect packet meter indexed by the ingress port and a direct byte
 * meter on an exact table; the colours go into the Ethernet source address (low bits) so a test
 * sees them in the emitted frame. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers_t { ethernet_t ethernet; }
struct metadata_t { bit<32> port_color; bit<32> flow_color; }

parser MyParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t std) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}

control MyVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    meter<bit<9>>(512, MeterType.packets) port_meter;
    direct_meter<bit<32>>(MeterType.bytes) flow_meter;

    action mark() { flow_meter.read(meta.flow_color); }
    table flows {
        key = { hdr.ethernet.etherType: exact; }
        actions = { mark; NoAction; }
        meters = flow_meter;
        default_action = NoAction();
    }
    apply {
        meta.flow_color = 7;
        port_meter.execute_meter(std.ingress_port, meta.port_color);
        flows.apply();
        hdr.ethernet.srcAddr = (bit<48>)(meta.port_color * 16 + meta.flow_color);
        std.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) { apply { } }
control MyCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

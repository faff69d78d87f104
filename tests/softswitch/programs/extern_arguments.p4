// A register and a counter of the ingress control passed as constructor arguments of a
// sub-control (subparsers.hoist_extern_arguments): one object, used by both controls, with the
// control-plane names p4c gives them (MyIngress.acc, MyIngress.hits).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t {}

control Accumulate(inout h_t h)(register<bit<8>> r, counter<bit<32>> c) {
    apply {
        bit<8> v;
        r.read(v, 0);
        v = v + h.a;
        r.write(0, v);
        h.b = v;
        c.count(1);
    }
}

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<8>>(2) acc;
    counter<bit<32>>(4, CounterType.packets) hits;
    Accumulate(acc, hits) sum;
    apply {
        sum.apply(hdr.h);
        acc.write(1, hdr.h.a);
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

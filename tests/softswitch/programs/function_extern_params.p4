// Functions with parameters of extern types (externparams.py): a generic function writing and
// reading a register it is given (T inferred from register<bit<16>>), a plain function given
// a counter and a register that calls those, all on instances of the calling control.
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers_t { eth_t eth; }
struct meta_t {}

void put<T>(register<T> r, in bit<32> i, in T t) { r.write(i, t); }
T get<T>(register<T> r, in bit<32> i) {
    T v;
    r.read(v, i);
    return v;
}
void bump(counter<bit<32>> c, register<bit<16>> r) {
    c.count(0);
    put(r, 1, get(r, 1) + 1);
}

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<16>>(2) r16;
    counter<bit<32>>(1, CounterType.packets) hits;
    apply {
        bit<16> old = get(r16, 0);
        put(r16, 0, hdr.eth.etype);
        bump(hits, r16);
        hdr.eth.etype = old;
        hdr.eth.src[15:0] = get(r16, 1);
        sm.egress_spec = 2;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

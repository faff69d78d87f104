// `in` parameters of type varbit<W> (actions, functions, directionless function parameters, an
// action bound in a table's action list): the argument's current length travels with its value,
// so the callee copies exactly the bytes the caller's varbit holds.  len gains 1 (put's result).
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> bytes; }
header vb_t { varbit<32> v; }
struct headers_t { len_t len; vb_t v; vb_t c1; vb_t c2; vb_t c3; vb_t c4; }
struct meta_t { bit<8> a; }

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.len);
        pk.extract(hdr.v, (bit<32>)hdr.len.bytes * 8);
        transition accept;
    }
}

bit<8> put(in varbit<32> x, inout vb_t h) {
    h.setValid();
    h.v = x;
    return 1;
}

void put_plain(varbit<32> x, inout vb_t h) {
    h.setValid();
    h.v = x;
}

control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action to_c1(in varbit<32> x) {
        hdr.c1.setValid();
        hdr.c1.v = x;
    }
    action to_c4(in varbit<32> x) {
        hdr.c4.setValid();
        hdr.c4.v = x;
    }
    table t {
        actions = { to_c4(hdr.v.v); }
        default_action = to_c4(hdr.v.v);
    }
    apply {
        to_c1(hdr.v.v);
        m.a = put(hdr.v.v, hdr.c2);
        put_plain(hdr.v.v, hdr.c3);
        t.apply();
        hdr.len.bytes = hdr.len.bytes + m.a;
        sm.egress_spec = 2;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply {
        pk.emit(hdr.len); pk.emit(hdr.v); pk.emit(hdr.c1); pk.emit(hdr.c2); pk.emit(hdr.c3);
        pk.emit(hdr.c4);
    }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

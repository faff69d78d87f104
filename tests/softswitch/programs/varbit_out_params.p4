// `out`/`inout` parameters of type varbit<W> of functions and of a directly called action: p4c
// inlines the calls, so the argument's current length flows in and the callee's flows back out
// (swap exchanges two varbits of different lengths; get and cp copy one at its length).  When
// the second length byte is 3, the parser swaps v and c1 first (a call in a parser state).
// Table t's action gets c5 and c1 bound in its action list (c5 = c1).
// cp_exit exits after setting its `inout` parameter: the copy back still happens (p4c's
// RemoveActionParameters copies out before the exit), so c4 = v.
#include <core.p4>
#include <v1model.p4>
header len_t { bit<8> bytes; bit<8> other; }
header vb_t { varbit<32> v; }
struct headers_t { len_t len; vb_t v; vb_t c1; vb_t c2; vb_t c3; vb_t c4; vb_t c5; }
struct meta_t { bit<8> a; }
parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.len);
        pk.extract(hdr.v, (bit<32>)hdr.len.bytes * 8);
        pk.extract(hdr.c1, (bit<32>)hdr.len.other * 8);
        transition select(hdr.len.other) { 3: more; default: accept; }
    }
    state more {
        swap(hdr.v.v, hdr.c1.v);
        transition accept;
    }
}
void swap(inout varbit<32> x, inout varbit<32> y) {
    varbit<32> t = x;
    x = y;
    y = t;
}
bit<8> get(out varbit<32> x, in varbit<32> y) {
    x = y;
    return 1;
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action cp(out varbit<32> d, in varbit<32> s) { d = s; }
    action cp_t(inout varbit<32> d, in varbit<32> s) { d = s; }
    table t {
        actions = { cp_t(hdr.c5.v, hdr.c1.v); }
        default_action = cp_t(hdr.c5.v, hdr.c1.v);
    }
    action cp_exit(inout varbit<32> d, in varbit<32> s) {
        d = s;
        exit;
    }
    apply {
        swap(hdr.v.v, hdr.c1.v);
        hdr.c2.setValid();
        m.a = get(hdr.c2.v, hdr.v.v);
        hdr.c3.setValid();
        cp(hdr.c3.v, hdr.c1.v);
        sm.egress_spec = 2;
        hdr.c5.setValid();
        t.apply();
        hdr.c4.setValid();
        cp_exit(hdr.c4.v, hdr.v.v);
        hdr.c4.setInvalid();
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply { pk.emit(hdr.len); pk.emit(hdr.v); pk.emit(hdr.c1); pk.emit(hdr.c2); pk.emit(hdr.c3);
            pk.emit(hdr.c4); pk.emit(hdr.c5); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

// List expressions as arguments of functions called inside expressions (the native backend
// builds a temporary for them): a struct holding a header, a bare header (valid when built
// from a list), and a struct, each passed to a directionless or `in` parameter; a function
// with a local header stack.
#include <core.p4>
#include <v1model.p4>

header e_t { bit<16> a; bit<16> b; bit<8> c; }
struct wrap_t { e_t e; }
struct pair_t { bit<8> x; bit<8> y; }
struct headers_t { e_t e; }
struct meta_t {}

bit<16> sum_wrapped(wrap_t w) {
    return w.e.a + w.e.b + (bit<16>)w.e.c;
}
bit<8> valid_and(in e_t h, in bit<8> v) {
    return h.isValid() ? v : 8w0xff;
}
bit<8> mix(in pair_t p) {
    return p.x ^ p.y;
}
bit<8> stack_local(in bit<8> v) {  // a stack type no struct holds (native: declared on its own)
    e_t[2] s;
    s[1].setValid();
    s[1].c = v;
    s[0] = s[1];
    return s[0].isValid() ? s[0].c : 8w0;
}

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.e); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 3;
        hdr.e.a = sum_wrapped({ { hdr.e.a, 16w1, 8w2 } }) + 1;
        hdr.e.b = valid_and({ 1, 2, 3 }, hdr.e.c) ++ mix({ hdr.e.c, 0x0f });
        hdr.e.c = mix({ x = 1, y = hdr.e.c }) + valid_and(hdr.e, 1) + (stack_local(7) - 7);
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.e); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

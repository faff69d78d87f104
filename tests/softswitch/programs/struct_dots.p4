// '...' in struct expressions (P4_16 1.2.4): the fields left out take default values (0, false,
// structs of those), in an assignment to metadata, an initialiser, a nested struct and a header
// (which becomes valid).  The second assignment to m.s resets i and b that the first set.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct in_t { bit<8> p; bool q; }
struct s_t { bit<8> a; in_t i; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { s_t s; }
parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        m.s = { a = hdr.h.a, i = { p = 7, q = true }, b = 9 };
        s_t t = { b = hdr.h.b, ... };
        m.s = { a = m.s.a + 1, ... };
        hdr.h.a = m.s.a;
        hdr.h.b = t.b + t.a + t.i.p + m.s.i.p + m.s.b + (t.i.q ? 8w100 : 8w0);
        h_t x = { c = 5, ... };
        if (x.isValid()) { hdr.h.c = x.c + x.a; }
        sm.egress_spec = 1;
    }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

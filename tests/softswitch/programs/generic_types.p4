// Generic structs, headers and header unions (P4_16 1.2.2), specialised per use as p4c does
// (generictypes.py): a generic header in a stack through a typedef, a generic header inside a
// generic union, a generic struct nested in another (W<T> holds S<T>; P<S<bit<4>>, bit<4>>), two type
// parameters, a constant and a cast struct expression of a generic type, and a generic function
// whose parameter is S<T> (T inferred from a specialised struct).
#include <core.p4>
#include <v1model.p4>

header H<T> { T f; bit<8> g; }
header X { bit<8> v; }
header_union U<T> { X x; H<T> h; }
struct S<T> { T a; bit<4> b; }
struct W<T> { S<T> inner; T c; }
struct P<A, B> { A x; B y; }
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
typedef H<bit<8>>[2] Stk;
struct headers_t { eth_t eth; Stk st; H<bit<16>> w; }
struct meta_t { W<bit<8>> w; P<S<bit<4>>, bit<4>> n; P<bit<8>, bool> p; }
const S<bit<8>> K = { a = 5, b = 1 };

T first<T>(in S<T> s) { return s.a; }

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.eth);
        pk.extract(hdr.st.next);
        pk.extract(hdr.st.next);
        pk.extract(hdr.w);
        transition accept;
    }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        U<bit<16>> u;
        u.h = { f = 16w9, g = 1 };
        m.w = { inner = { a = hdr.st[0].f, b = 2 }, c = hdr.st[1].f };
        hdr.st[0].f = first(m.w.inner) + K.a + (bit<8>)u.h.f;
        hdr.st[1].g = first<bit<8>>((S<bit<8>>){ a = m.w.c, b = 0 });
        m.n = { { 4w2, 4w3 }, 4w1 };
        m.p = (P<bit<8>, bool>){ x = 7, y = hdr.w.g == 0xff };
        if (m.p.y) {
            hdr.w.f = hdr.w.f + (bit<16>)m.n.x.a + (bit<16>)m.p.x;
        }
        hdr.w.g = (bit<8>)m.n.x.b;
        sm.egress_spec = 2;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

// `...` assigned to a header stack in a parser: p4c assigns the default element by element (its
// CopyStructures pass), so every element becomes invalid and nextIndex stays where it was; the
// next extract fills the element after the two extracted before.  `...` for a struct holding a
// stack in the control invalidates its elements too (flags: which of m.st's elements are valid).
// A list expression for a stack (p4c's HeaderStackExpression, `{x, ...}` or cast) assigns each
// element: pair holds the third byte once, or twice when it is 7.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers_t { h_t[3] st; h_t flags; h_t[2] pair; }
struct s_t { h_t[2] st; bit<8> n; }
struct meta_t { s_t s; }

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.st.next);
        pk.extract(hdr.st.next);
        hdr.st = ...;
        pk.extract(hdr.st.next);
        transition accept;
    }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        m.s.st[0] = hdr.st[2];
        m.s.st[1] = hdr.st[2];
        m.s.n = 5;
        if (hdr.st[2].a == 1) {
            m.s = ...;
        }
        hdr.flags.setValid();
        hdr.flags.a = (m.s.st[0].isValid() ? 8w1 : 8w0) + (m.s.st[1].isValid() ? 8w2 : 8w0) + m.s.n;
        hdr.pair = { hdr.st[2], ... };
        if (hdr.st[2].a == 7) {
            hdr.pair = (h_t[2]){ hdr.st[2], hdr.pair[0] };
        }
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply { pk.emit(hdr.st); pk.emit(hdr.flags); pk.emit(hdr.pair); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

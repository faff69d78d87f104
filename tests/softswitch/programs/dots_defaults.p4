// Default values (P4_16 "default values", `...`): the fields a struct expression
// `{a = x, ...}` or a list expression `{x, ...}` leaves out, and `...` alone, take the default of
// their type -- a header invalid, a header_union with no valid member, a stack of invalid headers,
// 0, false, the first enum member, error.NoError, structs and tuples of those.  `(h_t){...}` is a
// valid header with every field 0; a header holding a varbit takes only `...` alone
// (p4c has no default varbit).  m.s starts fully valid (flags 0x3f) and each branch resets it;
// hdr.res reports m.s.a + m.s.i.c and the flags after.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header v_t { bit<8> len; varbit<16> v; }
header_union u_t { h_t x; h_t y; }
struct in_t { h_t h; bit<8> c; }
struct s_t { bit<8> a; h_t h; u_t u; h_t[2] st; in_t i; bool q; }
enum color_t { RED, GREEN }
struct headers_t { h_t h; h_t res; v_t v; }
struct meta_t { s_t s; }
const in_t KI = { c = 4, ... };

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        pk.extract(hdr.v, (bit<32>)hdr.h.b * 8);
        transition accept;
    }
}

bit<8> flags(in s_t s) {
    return (s.h.isValid() ? 8w1 : 0) | (s.u.isValid() ? 8w2 : 0) | (s.st[0].isValid() ? 8w4 : 0)
         | (s.st[1].isValid() ? 8w8 : 0) | (s.i.h.isValid() ? 8w16 : 0) | (s.q ? 8w32 : 0);
}

control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        m.s.h = hdr.h;
        m.s.u.x = hdr.h;
        m.s.st[0] = hdr.h;
        m.s.st[1] = hdr.h;
        m.s.i.h = hdr.h;
        m.s.i.c = 9;
        m.s.q = true;
        m.s.a = 1;
        bit<8> before = flags(m.s);
        if (hdr.h.a == 0) {
            m.s = { a = hdr.h.b, ... };
        } else if (hdr.h.a == 1) {
            m.s = ...;
        } else if (hdr.h.a == 2) {
            m.s = { hdr.h.b, hdr.h, ... };
        } else {
            m.s = { i = KI, q = true, ... };
        }
        hdr.res = (h_t){ ... };
        hdr.res.a = m.s.a + m.s.i.c;
        hdr.res.b = flags(m.s);
        hdr.h.b = before;
        tuple<bit<8>, bool, h_t> tp = { 5, ... };
        h_t none = ...;
        color_t col = ...;
        error e = ...;
        bit<8> z = ...;
        if (col == color_t.RED && e == error.NoError && !tp[1] && !tp[2].isValid() && !none.isValid()) {
            hdr.h.a = hdr.h.a + tp[0] + z + KI.h.a;
        }
        if (hdr.v.len == 9) {
            hdr.v = ...;
        }
        sm.egress_spec = 1;
    }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply { pk.emit(hdr.h); pk.emit(hdr.res); pk.emit(hdr.v); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

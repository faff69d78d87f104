// {#}, the invalid header or union (P4_16 1.2.2; invalidhdr.py): assigned (the header becomes
// invalid), as an initialiser, cast ((h_t){#}), and compared with == and != on either side
// (BMv2's header equality: invalid equals invalid).  f collects 1+2+4+8+16 when all hold.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header g_t { bit<16> c; }
header_union hu_t { h_t h; g_t g; }
struct headers_t { h_t h; h_t h2; }
struct meta_t { h_t mh; bit<8> f; }
parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); pk.extract(hdr.h2); transition accept; }
}
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action a() {
        if (m.mh == {#}) { m.f = 1; }
        m.mh = hdr.h;
        if (m.mh != {#}) { m.f = m.f + 2; }
        h_t hcast = (h_t){#};
        if (hcast == (h_t){#}) { m.f = m.f + 4; }
        hu_t u;
        if (u == {#}) { m.f = m.f + 8; }
        u.h = hdr.h;
        if ({#} != u) { m.f = m.f + 16; }
    }
    apply {
        a();
        hdr.h.b = m.f;
        if (hdr.h.a == 1) { hdr.h2 = {#}; }
        sm.egress_spec = 1;
    }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.h2); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

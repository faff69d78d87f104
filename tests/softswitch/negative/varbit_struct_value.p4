// expect-error: varbit field v outside a header
// a value of a struct with a varbit field: p4c accepts it, this target does not (only a
// header keeps a varbit's current length); see programs/varbit_struct.p4 for the type alone
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> bytes; }
header vb_t { varbit<32> v; }
struct S { bit<8> a; varbit<32> v; }
typedef tuple<bit<4>, bit<4>, varbit<56>> unused_t;
struct headers_t { len_t len; vb_t v; vb_t copy; }
struct meta_t { S s; }

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.len);
        pk.extract(hdr.v, (bit<32>)hdr.len.bytes * 8);
        transition accept;
    }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        m.s.v = hdr.v.v;
        m.s.a = hdr.len.bytes;
        hdr.copy.setValid();
        hdr.copy.v = m.s.v;
        hdr.len.bytes = m.s.a + 0x10;
        sm.egress_spec = 2;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply { pk.emit(hdr.len); pk.emit(hdr.v); pk.emit(hdr.copy); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

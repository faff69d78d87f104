// varbit<W> in a struct and a tuple type: P4_16's type nesting rules allow both and p4c accepts
// them; declaring them is fine here (a value of such a struct is refused: negative/
// varbit_struct_value.p4).  A varbit field assigned from another header's varbit field takes
// its current length too (BMv2's assign_VL), so the copy is emitted at the source's length.
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> bytes; }
header vb_t { varbit<32> v; }
struct S { bit<8> a; varbit<32> v; }
typedef tuple<bit<4>, bit<4>, varbit<56>> unused_t;
struct headers_t { len_t len; vb_t v; vb_t copy; }
struct meta_t { bit<8> a; }

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
        m.a = hdr.len.bytes;
        hdr.copy.setValid();
        hdr.copy.v = hdr.v.v;
        hdr.len.bytes = m.a + 0x10;
        sm.egress_spec = 2;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply { pk.emit(hdr.len); pk.emit(hdr.v); pk.emit(hdr.copy); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

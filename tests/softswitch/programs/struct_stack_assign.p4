// A struct expression holding a header stack assigned to a struct: p4c's CopyStructures assigns
// it field by field, a stack left out by `...` or given as a list expression element by element,
// so the destination stack keeps its nextIndex; a stack value is BMv2's stack assignment, which
// copies the source's nextIndex.  The parser extracts two elements of hdr.s.st and one of
// hdr.t.st; after `hdr.s = {st = ..., ...}` the next extract fills s.st[2], after
// `hdr.t = {st = {x, x, ...}, ...}` t.st[1]; cnt reports the nextIndex values.  An expression
// that reads the struct it is assigned to goes through a temporary (p4c's RemoveAliases), whose
// stack is then assigned whole: v.st's nextIndex becomes the temporary's, 0.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
header n_t { bit<8> n; bit<8> m; bit<8> k; bit<8> j; }
struct s_t { h_t[3] st; h_t tag; }
struct headers_t { n_t cnt; h_t one; s_t s; s_t t; s_t u; s_t v; }
struct meta_t { bit<8> a; }

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.cnt);
        pk.extract(hdr.one);
        pk.extract(hdr.s.st.next);
        pk.extract(hdr.s.st.next);
        pk.extract(hdr.t.st.next);
        hdr.s = { st = ..., tag = hdr.one };
        h_t x = hdr.t.st[0];
        hdr.t = { st = { x, x, ... }, tag = hdr.one };
        pk.extract(hdr.s.st.next);
        pk.extract(hdr.t.st.next);
        hdr.u = { st = hdr.s.st, tag = hdr.one };
        hdr.cnt.n = (bit<8>)hdr.s.st.nextIndex;
        hdr.cnt.m = (bit<8>)hdr.t.st.nextIndex;
        hdr.cnt.k = (bit<8>)hdr.u.st.nextIndex;
        pk.extract(hdr.v.st.next);
        hdr.v = { st = ..., tag = hdr.v.st[0] };
        hdr.cnt.j = (bit<8>)hdr.v.st.nextIndex;
        transition accept;
    }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) {
    apply {
        pk.emit(hdr.cnt); pk.emit(hdr.s.st); pk.emit(hdr.s.tag); pk.emit(hdr.t.st); pk.emit(hdr.t.tag);
        pk.emit(hdr.u.st); pk.emit(hdr.u.tag); pk.emit(hdr.v.st); pk.emit(hdr.v.tag);
    }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

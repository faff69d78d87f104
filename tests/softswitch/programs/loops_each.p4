// P4_16 1.2.5 for-in loops over a list expression (items evaluated once, before the first
// iteration, even when the body changes a variable an item reads) and over a header stack
// (each element in index order, invalid ones included).  The deparser gives emit a stack
// type argument (`emit<e_t[3]>`).
#include <core.p4>
#include <v1model.p4>

header n_t { bit<8> count; bit<8> sum; bit<8> m; bit<8> hits; bit<8> last; }
header e_t { bit<8> v; }
struct headers_t { n_t n; e_t[3] st; }
struct meta_t {}

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.n);
        transition select(hdr.n.count) { 0: accept; default: more; }
    }
    state more {
        pk.extract(hdr.st.next);
        transition select(hdr.st.lastIndex + 1 == (bit<32>)hdr.n.count) { true: accept; false: more; }
    }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action add_list() {
        bit<8> mm = hdr.n.m;
        for (bit<8> i in (list<bit<8>>) {1, mm, 3 * mm}) {
            hdr.n.sum = hdr.n.sum + i;
            mm = mm + 100;
            if (i == 0) {
                break;
            }
        }
        hdr.n.m = mm;
    }
    apply {
        sm.egress_spec = 1;
        add_list();
        for (e_t e in hdr.st) {
            if (!e.isValid()) {
                continue;
            }
            hdr.n.hits = hdr.n.hits + 1;
            hdr.n.last = e.v;
        }
        for (bit<8> unused in {}) {
            hdr.n.sum = 0xee;
        }
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit<n_t>(hdr.n); pk.emit<e_t[3]>(hdr.st); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

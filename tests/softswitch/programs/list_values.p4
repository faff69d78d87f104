// Values of type list<T> (P4_16 1.2.5) besides a for-in collection: a top-level constant, a
// control-level variable and locals, initialised from list expressions (cast to list<T> or
// not), assigned a list of the same length, compared with ==, and iterated by for-in (the
// elements read once, before the first iteration, so assigning the list in the body does not
// change the iteration).  res.s = a + b (l) + 7 (WEIGHTS) + b + 1 (l reassigned) + 30 (cl);
// res.c = 1 when k == l after the reassignment (a == b == 1).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
header res_t { bit<8> s; bit<8> c; }
struct headers_t { h_t h; res_t res; }
struct meta_t { bit<8> z; }

const list<bit<8>> WEIGHTS = {1, 2, 4};

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    list<bit<8>> cl = {8w10, 8w20};
    apply {
        list<bit<8>> l = {hdr.h.a, hdr.h.b};
        bit<8> s = 0;
        for (bit<8> x in l) {
            l = {8w0, 8w0};
            s = s + x;
        }
        for (bit<8> w in WEIGHTS) {
            s = s + w;
        }
        l = {hdr.h.b, 8w1};
        for (bit<8> x in l) {
            s = s + x;
        }
        list<bit<8>> k = (list<bit<8>>){hdr.h.a, hdr.h.b};
        for (bit<8> x in cl) {
            s = s + x;
        }
        hdr.res.setValid();
        hdr.res.s = s;
        hdr.res.c = k == l ? 8w1 : 8w0;
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.res); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

// static_assert of core.p4, evaluated at compile time (p4c's StaticAssert): as a constant's
// value, as a statement in a function, an action and an apply block, nested, and inside a
// condition (it is `true` there, so the branch runs); sizes of types and values
// (`T.minSizeInBits()`, `x.maxSizeInBytes()`, P4_16 1.2.4) as compile-time constants.
#include <core.p4>
#include <v1model.p4>

const bit<8> K = 3;
const bool version_ok = static_assert(V1MODEL_VERSION == 20180101, "p4c's default version");

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t {}
typedef bit<12> w_t;
const bit<8> WB = (bit<8>)w_t.maxSizeInBytes();

void checks() {
    static_assert(static_assert(K == 3, "K changed"));
    static_assert(h_t.minSizeInBits() == 16 && headers_t.maxSizeInBytes() == 2
                  && w_t.minSizeInBits() == 12 && WB == 2, "sizes");
}

parser MyParser(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t m) { apply {} }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action bump() {
        static_assert(K < 8);
        hdr.h.a = hdr.h.a + K + WB - (bit<8>)hdr.h.minSizeInBytes();
    }
    apply {
        checks();
        bump();
        if (version_ok && static_assert(true) && hdr.h.b != 0) {
            hdr.h.b = 0xaa;
        }
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control MyCompute(inout headers_t hdr, inout meta_t m) { apply {} }
control MyDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;

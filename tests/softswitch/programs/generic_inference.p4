/* Type arguments of generic functions that only an argument without a declared type decides,
 * as p4c infers them: a list expression gives a tuple of its items' types (alone, or fitting
 * the tuple another argument decided), an untyped literal gives int, for an in parameter
 * only (a compile-time constant; one copy per literal).  A const int local of a block stays
 * a constant until it meets a width.  A call returning a tuple passed to another call;
 * tuple<>. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<16> b; bit<16> c; }
struct headers_t { h_t h; }
struct metadata_t { }

void put<T>(in T x, out T y) { y = x; }
void fold<T>(in T x, inout bit<16> acc) { hash(acc, HashAlgorithm.csum16, 16w0, x, 32w65536); }
const int FIVE = 5;
void count<T>(in T x, inout bit<16> acc) { acc = acc + 1; }
T id<T>(in T x) { return x; }

parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        const int k = 3;
        tuple<bit<8>, bit<16>> t;
        put({ hdr.h.a, hdr.h.b }, t);            // T = the tuple type of t
        fold({ hdr.h.a, 8w0, hdr.h.b }, hdr.h.c); // T = tuple<bit<8>, bit<8>, bit<16>>
        count(5, hdr.h.b);                       // T = int (x = 5)
        count(7, hdr.h.b);                       // another int copy (x = 7)
        count(FIVE, hdr.h.b);                    // a top-level int constant
        count(8w7, hdr.h.b);                     // T = bit<8>
        t = id(id(t));                           // a struct-valued call as an argument
        hdr.h.a = t[0] + k;
        tuple<> none = {};                       // the empty tuple (p4c's grammar allows tuple<>)
        tuple<> other;
        other = id(none);
        if (other == none) { hdr.h.c = hdr.h.c ^ 0x0100; }
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;

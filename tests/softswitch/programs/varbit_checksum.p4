/* varbit fields in checksum and hash field lists: the field contributes its current length
 * in bits (BMv2), so the same header gives different field lists for different lengths. */
#include <core.p4>
#include <v1model.p4>

header fix_t { bit<8> len; }
header var_t { bit<16> csum; varbit<64> opt; }
header res_t { bit<16> h; }

struct headers_t { fix_t fix; var_t v; res_t res; }
struct metadata_t { }

parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.fix);
        pk.extract(hdr.v, (bit<32>)hdr.fix.len << 3);
        transition accept;
    }
}

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        hash(hdr.res.h, HashAlgorithm.crc16, 16w0, { hdr.v.opt, hdr.fix.len }, 32w65536);
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) {
    apply { update_checksum(true, { hdr.v.opt, hdr.fix.len }, hdr.v.csum, HashAlgorithm.csum16); }
}
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;

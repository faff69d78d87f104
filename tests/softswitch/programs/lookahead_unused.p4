// A lookahead whose value is unused still needs the bits: a short packet is
// PacketTooShort (the parser stops; ingress sees parser_error), as in BMv2.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct pair_t { bit<8> x; bit<16> y; }
struct headers_t { h_t h; }
struct meta_t {}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            1: bits;
            default: pair;
        }
    }
    state bits {
        pkt.lookahead<bit<24>>();
        transition accept;
    }
    state pair {
        pkt.lookahead<pair_t>();
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.PacketTooShort) {
            hdr.h.a = 0xEE;
        }
        sm.egress_spec = 1;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;

// Action profiles and action selectors (v1model): a selector over header and metadata fields
// (a field of an invalid header is left out of the hash, as BMv2 does), a profile shared by two
// tables, a selector constructed in place with @name, misses and empty groups (no action runs).
#include <core.p4>
#include <v1model.p4>

header eth_t {
    bit<8>  kind;
    bit<8>  flags;
    bit<16> f1;
    bit<32> f2;
    bit<8>  res;
    bit<8>  mark;
}

header opt_t {
    bit<16> o;
}

struct headers_t {
    eth_t e;
    opt_t opt;
}

struct meta_t {
    bit<8> m;
}

parser P(packet_in pk, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.e);
        transition select(hdr.e.flags[0:0]) {
            1: with_opt;
            default: accept;
        }
    }
    state with_opt {
        pk.extract(hdr.opt);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<9> port, bit<8> v) {
        sm.egress_spec = port;
        hdr.e.res = v;
    }
    action mark(bit<8> v) {
        hdr.e.mark = hdr.e.mark + v;
    }
    action_selector(HashAlgorithm.crc16, 32w16, 32w16) sel;
    action_profile(32w8) shared;

    table lb {
        key = {
            hdr.e.kind : exact;
            hdr.e.f1   : selector;
            hdr.e.f2   : selector;
            hdr.opt.o  : selector;
            meta.m     : selector;
        }
        actions = { set; }
        implementation = sel;
        default_action = set(7, 0xEE);  // p4c's BMv2 back end drops it: a miss runs nothing
    }
    table ap1 {
        key = { hdr.e.kind : exact; }
        actions = { mark; }
        implementation = shared;
    }
    table ap2 {
        key = { hdr.e.flags : ternary; }
        actions = { mark; }
        implementation = shared;
    }
    table idsel {
        key = {
            hdr.e.kind : exact;
            hdr.e.f2   : selector;
        }
        actions = { set; }
        @name("id_sel") implementation = action_selector(HashAlgorithm.identity, 32w8, 32w8);
    }

    apply {
        meta.m = hdr.e.flags;
        if (hdr.e.kind == 3) {
            if (idsel.apply().hit) {
                hdr.e.mark = hdr.e.mark + 1;
            }
        } else {
            if (lb.apply().hit) {
                hdr.e.mark = hdr.e.mark | 0x80;
            }
            ap1.apply();
            ap2.apply();
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pk, in headers_t hdr) {
    apply {
        pk.emit(hdr.e);
        pk.emit(hdr.opt);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;

/* Overlapping ternary entries whose order is set by priorities, three ways:
 *  t_const: const entries with @priority(N) (BMv2: the smaller number wins; an entry without
 *           the annotation has its 1-based position as priority);
 *  t_init:  P4_16 1.2.4 initial entries with priority = N (the larger wins), continued by
 *           -priority_delta for entries without one; the control plane may add more;
 *  t_small: largest_priority_wins = false, priority_delta = 5 (the smaller wins, +5 steps).
 * The winning entry writes its tag into h.res; h.sel picks the table. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  sel;
    bit<16> t;
    bit<8>  res;
}

struct headers_t {
    h_t h;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action set(bit<8> tag) {
        hdr.h.res = tag;
        standard_metadata.egress_spec = 1;
    }

    table t_const {
        key = { hdr.h.t : ternary; }
        actions = { set; NoAction; }
        const entries = {
            16w0x0001 &&& 16w0x000f : set(1) @priority(30);
            16w0x1001               : set(2);
            16w0x1000 &&& 16w0xf000 : set(3) @priority(1);
            _                       : set(4) @priority(40);
        }
    }

    table t_init {
        key = { hdr.h.t : ternary; }
        actions = { set; NoAction; }
        entries = {
            priority = 10: 16w0x00ff &&& 16w0x00ff : set(11);
                           _                       : set(12);
            priority = 20: 16w0x0f00 &&& 16w0x0f00 : set(13);
        }
    }

    table t_small {
        key = { hdr.h.t : ternary; }
        actions = { set; NoAction; }
        largest_priority_wins = false;
        priority_delta = 5;
        entries = {
            priority = 10: 16w0x00ff &&& 16w0x00ff : set(21);
                           _                       : set(22);
            priority = 3:  16w0x0f00 &&& 16w0x0f00 : set(23);
        }
    }

    apply {
        standard_metadata.egress_spec = 2;
        if (hdr.h.sel == 1) {
            t_const.apply();
        } else if (hdr.h.sel == 2) {
            t_init.apply();
        } else {
            t_small.apply();
        }
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;

/*
 * DHC data plane (egress): per-replica rewrite of RESULT packets.
 *
 * A multicast replica carries the egress_rid of its replica node; the
 * controller allocates rids (>= 1, unique per switch) and installs one
 * result_rewrite entry per rid with the child's addresses.  Rid 0 means "not
 * a DHC replica" (unicast packets have egress_rid 0).  A RESULT replica
 * without an entry is dropped and counted in egress_drop_counter.
 */
#ifndef _DHC_REWRITE_P4_
#define _DHC_REWRITE_P4_

control DhcResultRewrite(inout headers_t hdr,
                         inout standard_metadata_t standard_metadata) {

    counter(DHC_DROP_REASONS, CounterType.packets_and_bytes) egress_drop_counter;

    /* dport: the child's UDP port: the job's worker port for a worker (so
     * one host can be a worker of several jobs), DHC_UDP_PORT for a switch */
    action rewrite(bit<48> dmac, bit<32> dip, bit<48> smac, bit<32> sip, bit<16> dport) {
        hdr.ethernet.dstAddr = dmac;
        hdr.ethernet.srcAddr = smac;
        hdr.ipv4.dstAddr = dip;
        hdr.ipv4.srcAddr = sip;
        hdr.udp.dstPort = dport;
        hdr.udp.checksum = 0;
    }

    action rewrite_miss() {
        egress_drop_counter.count((bit<32>)DROP_NO_REWRITE);
        mark_to_drop(standard_metadata);
    }

    table result_rewrite {
        key = { standard_metadata.egress_rid : exact @name("egress_rid"); }
        actions = { rewrite; @defaultonly rewrite_miss; }
        const default_action = rewrite_miss();
        size = RESULT_REWRITE_TABLE_SIZE;
    }

    apply {
        if (standard_metadata.egress_rid != 0 && hdr.dhc.isValid()) {
            if (hdr.dhc.pkt_type == DHC_TYPE_RESULT) {
                result_rewrite.apply();
            }
        }
    }
}

#endif /* _DHC_REWRITE_P4_ */

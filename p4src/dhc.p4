/*
 * DHC: in-network aggregation of lane vectors (HG-Sketch levels) on v1model.
 *
 * Pipeline (p4src/README.md has the stage-by-stage description and the
 * control-plane contract):
 *   parser -> DhcIngress: lookups -> verdict + slot session -> chunk check -> bitmaps -> counter
 *          -> completion -> forwarding + per-job counters -> drops; lanes
 *          (applied last: they depend only on the counter's kind)
 *   -> DhcEgress: per-replica RESULT rewrite -> IPv4 checksum -> deparser
 *
 * Build: p4c --target bmv2 --arch v1model --p4runtime-files build/dhc.p4info.txtpb p4src/dhc.p4
 * Knobs: -DDHC_LANES=<1|2|4|8|16|32> -DDHC_POOL_SIZE=<even> -DDHC_MAX_JOBS=<n>
 *        (Tofino: p4c --target tofino --arch v1model p4src/dhc.p4, K = 16 by default;
 *         10 of 12 stages, p4src/README.md "Tofino")
 */
#include <core.p4>
#include <v1model.p4>

#include "include/define.p4"
#if defined(DHC_TAG_REGISTER_ACTION)
#include <tofino/stateful_alu.p4>   /* RegisterAction: the tag check (index.p4) */
#endif
#include "include/size.p4"
#include "include/headers.p4"
#include "include/parser.p4"
#include "include/checksum.p4"
#include "include/control/index.p4"
#include "include/control/shadow.p4"
#include "include/control/lanes.p4"
#include "include/control/completion.p4"
#include "include/control/forwarding.p4"
#include "include/control/stats.p4"
#include "include/control/drops.p4"
#include "include/control/rewrite.p4"

control DhcIngress(inout headers_t hdr,
                   inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {

    DhcIndex() dhc_index;
    DhcShadow() shadow;
    DhcLanes() lanes;
    DhcCompletion() completion;
    DhcForwarding() forwarding;
    DhcStats() stats;
    DhcDrops() drops;

    apply {
        /* Tofino 1 stages (K = 16): 0-1 lookups and verdict (register slot_session) */
        dhc_index.apply(hdr, standard_metadata.ingress_port, standard_metadata.checksum_error, meta.dhc);
        if (meta.dhc.aggregate == 1) {
            /* 2: chunk check (register slot_chunk); 3: bitmaps; 4: counter; 5: gap */
            shadow.apply(hdr.dhc, meta.dhc);
        }
        if (meta.dhc.aggregate == 1 || meta.dhc.result_in == 1) {
            /* 6 */
            completion.apply(hdr, meta.dhc, standard_metadata.ingress_port,
                             standard_metadata.egress_spec, standard_metadata.mcast_grp);
        }
        /* 7: ARP answer or routing; per-job counters */
        forwarding.apply(hdr, meta.dhc, standard_metadata.ingress_port, standard_metadata.egress_spec);
        stats.apply(meta.dhc.outcome, meta.dhc.stats_idx);
        /* 8 */
        drops.apply(meta.dhc.drop, meta.dhc.drop_reason, meta.dhc.consume, standard_metadata);
        /* 5-8: lane updates, 6-9: their results.  Last in the program (Tofino
         * places no table that follows them before the last of them) and under
         * no `if` (with `if (aggregate == 1)` around them p4c-tofino placed
         * decide in stage 8, 11 stages): their tables act only for kind
         * FIRST/ADD/DUP, which only an accepted DATA gets. */
        lanes.apply(hdr.lanes, meta.old, meta.dhc);
    }
}

control DhcEgress(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {

    DhcResultRewrite() rewrite;

    apply {
        rewrite.apply(hdr, standard_metadata);
    }
}

V1Switch(DhcParser(),
         DhcVerifyChecksum(),
         DhcIngress(),
         DhcEgress(),
         DhcComputeChecksum(),
         DhcDeparser()) main;

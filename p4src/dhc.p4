/*
 * DHC: in-network aggregation of lane vectors (HG-Sketch levels) on v1model.
 *
 * Pipeline (p4src/README.md has the stage-by-stage description and the
 * control-plane contract):
 *   parser -> DhcIngress: index tables -> shadow bitmaps/counters -> lanes
 *          -> completion -> forwarding -> per-job counters -> drops
 *   -> DhcEgress: per-replica RESULT rewrite -> IPv4 checksum -> deparser
 *
 * Build: p4c --target bmv2 --arch v1model --p4runtime-files build/dhc.p4info.txtpb p4src/dhc.p4
 * Knobs: -DDHC_LANES=<1|2|4|8|16|32> -DDHC_POOL_SIZE=<even> -DDHC_MAX_JOBS=<n>
 */
#include <core.p4>
#include <v1model.p4>

#include "include/define.p4"
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
        meta.dhc.drop = 0;
        meta.dhc.drop_reason = DROP_NONE;
        meta.dhc.consume = 0;
        meta.dhc.route = 0;
        meta.dhc.aggregate = 0;
        meta.dhc.result_in = 0;
        meta.dhc.outcome = OUTCOME_NONE;
        meta.dhc.is_root = 0;
        meta.dhc.is_new = 0;
        meta.dhc.is_first = 0;
        meta.dhc.complete = 0;
        meta.dhc.stats_idx = 0;

        if (standard_metadata.parser_error != error.NoError || meta.dhc.hdr_bad == 1) {
            meta.dhc.drop = 1;
            meta.dhc.drop_reason = DROP_MALFORMED;
        } else if (hdr.ipv4.isValid()) {
            dhc_index.apply(hdr.ipv4, hdr.dhc, standard_metadata.ingress_port, meta.dhc);
            if (meta.dhc.aggregate == 1) {
                shadow.apply(meta.dhc.shadow_set, meta.dhc.bm_idx, meta.dhc.reg_idx,
                             meta.dhc.child_mask, meta.dhc.fan_in,
                             meta.dhc.is_new, meta.dhc.is_first, meta.dhc.complete, meta.dhc.cnt);
                lanes.apply(hdr.lanes, meta.dhc.reg_idx, meta.dhc.is_new, meta.dhc.is_first, meta.dhc.op);
            }
            if (meta.dhc.aggregate == 1 || meta.dhc.result_in == 1) {
                completion.apply(hdr, meta.dhc, standard_metadata.ingress_port,
                                 standard_metadata.egress_spec, standard_metadata.mcast_grp);
            }
        } else if (!hdr.arp.isValid()) {
            meta.dhc.drop = 1;
            meta.dhc.drop_reason = DROP_UNSUPPORTED;
        }
        if (meta.dhc.drop == 0) {
            forwarding.apply(hdr, meta.dhc, standard_metadata.ingress_port, standard_metadata.egress_spec);
        }
        if (meta.dhc.outcome != OUTCOME_NONE) {
            stats.apply(meta.dhc.outcome, meta.dhc.stats_idx);
        }
        drops.apply(meta.dhc.drop, meta.dhc.drop_reason, meta.dhc.consume, standard_metadata);
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

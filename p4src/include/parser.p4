/*
 * DHC data plane: parser and deparser.
 *
 * The parser never drops and never relies on standard_metadata.parser_error
 * (Tofino's v1model has none).  It records what it could not accept in
 * metadata flags and lets ingress drop and count it:
 *   - complete: set to 1 only in `parsed`, the one state every complete parse
 *     passes through (metadata starts at 0); a packet that ends inside a header
 *     stops the parser before `parsed`, so the flag stays 0.  (Setting a
 *     `truncated` flag in `start` and clearing it in `parsed` does not work on
 *     BMv2: p4c removes the first store as overwritten on every path to accept,
 *     not seeing the path a parser error takes into ingress.)
 *   - hdr_bad: IPv4 with options or not version 4;
 *   - dhc_bad: dhc_h with a bad version, an unknown type or num_lanes !=
 *     DHC_LANES, or a UDP length that is not exactly that of a DATA/RESULT
 *     (trailing payload) -- only matters if the packet is addressed to this
 *     switch; a transit packet is routed as plain IPv4.
 * UDP is parsed only in an unfragmented packet: fragment offset 0 *and* the
 * "more fragments" flag clear.  A first fragment to this switch is therefore
 * not DHC (dropped as local_not_dhc); a transit fragment is routed.
 * ARP format (htype/ptype/hlen/plen) is checked in ingress (arp_check): a
 * select on all four would need more match registers than a Tofino parser
 * state has (1x16b + 2x8b).  Every select here fits that budget.
 */
#ifndef _DHC_PARSER_P4_
#define _DHC_PARSER_P4_

parser DhcParser(packet_in packet,
                 out headers_t hdr,
                 inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {

    state start {
        meta.dhc.hdr_bad = 0;
        meta.dhc.is_ipv4 = 0;
        meta.dhc.is_arp = 0;
        meta.dhc.is_dhc = 0;
        meta.dhc.dhc_bad = 0;
        meta.dhc.slot_idx = 0;
        meta.dhc.slot_31 = 0;
        meta.dhc.shadow_set = 0;
        /* read by later stages whether or not a table wrote them */
        meta.dhc.local = 0;
        meta.dhc.job_ok = 0;
        meta.dhc.epoch_ok = 0;
        meta.dhc.child_ok = 0;
        meta.dhc.level_ok = 0;
        meta.dhc.arp_ok = 0;
        meta.dhc.host_port = 0;
        meta.dhc.src_ok = 0;
        meta.dhc.drop = 0;
        meta.dhc.drop_reason = DROP_NONE;
        meta.dhc.route = 0;
        meta.dhc.aggregate = 0;
        meta.dhc.result_in = 0;
        meta.dhc.arp_req = 0;
        meta.dhc.same_session = 0;
        meta.dhc.fresh = 0;
        meta.dhc.seen0 = 0;
        meta.dhc.seen1 = 0;
        meta.dhc.kind = KIND_NONE;
        meta.dhc.cnt_old = 0;
        meta.dhc.consume = 0;
        meta.dhc.outcome = OUTCOME_NONE;
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_ARP: parse_arp;
            default: parsed;
        }
    }

    state parse_arp {
        packet.extract(hdr.arp);
        meta.dhc.is_arp = 1;
        transition parsed;
    }

    /* select: version+ihl (8b), flags+fragOffset (16b), protocol (8b) */
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        meta.dhc.is_ipv4 = 1;
        transition select(hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.flags, hdr.ipv4.fragOffset,
                          hdr.ipv4.protocol) {
            (4w4, 4w5, 3w0 &&& 3w1, 13w0, IP_PROTO_UDP): parse_udp;   /* MF clear, offset 0 */
            (4w4, 4w5, _, _, _): parsed;
            default: header_bad;
        }
    }

    state header_bad {
        meta.dhc.hdr_bad = 1;
        transition parsed;
    }

    /* select: dstPort (16b), len as two bytes (8b + 8b).  A Tofino parser selects on
     * bytes still in its window, so the length of a DHC packet is checked here, on the
     * UDP header, not later on the IPv4 header it has shifted past. */
    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dstPort, hdr.udp.len[15:8], hdr.udp.len[7:0]) {
            (DHC_UDP_PORT, DHC_UDP_BYTES_HI, DHC_UDP_BYTES_LO): parse_dhc;
            (DHC_UDP_PORT, _, _): dhc_len_bad;
            default: parsed;
        }
    }

    /* not exactly one DATA/RESULT long (trailing payload, or too short): parsed on as
     * DHC, flagged bad (malformed if it is for this switch) */
    state dhc_len_bad {
        meta.dhc.dhc_bad = 1;
        transition parse_dhc;
    }

    /* select: version+pkt_type (8b), num_lanes (8b) */
    state parse_dhc {
        packet.extract(hdr.dhc);
        meta.dhc.is_dhc = 1;
        meta.dhc.slot_idx = (bit<16>)hdr.dhc.slot[14:0];
        meta.dhc.shadow_set = hdr.dhc.slot[15:15];
        meta.dhc.slot_31 = (bit<31>)hdr.dhc.slot[14:0];
        transition select(hdr.dhc.version, hdr.dhc.pkt_type, hdr.dhc.num_lanes) {
            (DHC_VERSION, DHC_TYPE_DATA, DHC_NUM_LANES): parse_lanes;
            (DHC_VERSION, DHC_TYPE_RESULT, DHC_NUM_LANES): parse_lanes;
            default: dhc_bad;
        }
    }

    state dhc_bad {
        meta.dhc.dhc_bad = 1;
        transition parsed;
    }

    state parse_lanes {
        packet.extract(hdr.lanes);
        transition parsed;
    }

    state parsed {
        meta.dhc.complete = 1;
        transition accept;
    }
}

control DhcDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.arp);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.dhc);
        packet.emit(hdr.lanes);
    }
}

#endif /* _DHC_PARSER_P4_ */

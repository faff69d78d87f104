/*
 * DHC data plane: parser and deparser.
 *
 * The parser never drops.  It records what it could not accept and lets
 * ingress drop and count it:
 *   - a parser error (e.g. PacketTooShort) -> standard_metadata.parser_error;
 *   - IPv4 with options / not version 4, ARP that is not IPv4-over-Ethernet
 *     -> meta.dhc.hdr_bad;
 *   - dhc_h with a bad version, an unknown type or num_lanes != DHC_LANES
 *     -> meta.dhc.dhc_bad (only matters if the packet is addressed to this
 *     switch; a transit packet is routed as plain IPv4).
 */
#ifndef _DHC_PARSER_P4_
#define _DHC_PARSER_P4_

parser DhcParser(packet_in packet,
                 out headers_t hdr,
                 inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {

    state start {
        meta.dhc.hdr_bad = 0;
        meta.dhc.dhc_bad = 0;
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_ARP: parse_arp;
            default: accept;
        }
    }

    state parse_arp {
        packet.extract(hdr.arp);
        transition select(hdr.arp.htype, hdr.arp.ptype, hdr.arp.hlen, hdr.arp.plen) {
            (ARP_HTYPE_ETHERNET, ETHERTYPE_IPV4, 8w6, 8w4): accept;
            default: header_bad;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (4w4, 4w5, 13w0, IP_PROTO_UDP): parse_udp;
            (4w4, 4w5, _, _): accept;
            default: header_bad;
        }
    }

    state header_bad {
        meta.dhc.hdr_bad = 1;
        transition accept;
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            DHC_UDP_PORT: parse_dhc;
            default: accept;
        }
    }

    state parse_dhc {
        packet.extract(hdr.dhc);
        transition select(hdr.dhc.version, hdr.dhc.pkt_type, hdr.dhc.num_lanes) {
            (DHC_VERSION, DHC_TYPE_DATA, DHC_NUM_LANES): parse_lanes;
            (DHC_VERSION, DHC_TYPE_RESULT, DHC_NUM_LANES): parse_lanes;
            default: dhc_bad;
        }
    }

    state dhc_bad {
        meta.dhc.dhc_bad = 1;
        transition accept;
    }

    state parse_lanes {
        packet.extract(hdr.lanes);
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

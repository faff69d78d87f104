/*
 * DHC data plane: headers and metadata.
 *
 * All headers are whole bytes long.  dhc_h must equal dhc/wire.py
 * DHC_HEADER_FIELDS field by field (tests/p4src/test_header_matches_wire.py).
 */
#ifndef _DHC_HEADERS_P4_
#define _DHC_HEADERS_P4_

header ethernet_h {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

/* ARP for IPv4 over Ethernet only (htype 1, ptype 0x0800, hlen 6, plen 4). */
header arp_h {
    bit<16> htype;
    bit<16> ptype;
    bit<8>  hlen;
    bit<8>  plen;
    bit<16> oper;
    bit<48> sha;
    bit<32> spa;
    bit<48> tha;
    bit<32> tpa;
}

header ipv4_h {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

header udp_h {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> len;
    bit<16> checksum;
}

/* 14 bytes; see dhc/wire.py. */
header dhc_h {
    bit<4>  version;
    bit<4>  pkt_type;
    bit<8>  level;
    bit<16> job_id;
    bit<8>  child_id;
    bit<8>  flags;
    bit<8>  num_lanes;
    bit<8>  epoch;          /* job session (p4src/README.md, "Epochs") */
    bit<32> chunk;
    bit<16> slot;
}

/* K x bit<32> lanes, one field per lane: lane_0 ... lane_{K-1}. */
#define DHC_LANE_FIELD(i) bit<32> lane_##i;
header dhc_lanes_h {
    DHC_FOR_EACH_LANE(DHC_LANE_FIELD)
}

struct headers_t {
    ethernet_h  ethernet;
    arp_h       arp;
    ipv4_h      ipv4;
    udp_h       udp;
    dhc_h       dhc;
    dhc_lanes_h lanes;
}

/* Per-packet state of the DHC pipeline.  Flags are bit<1>, set to 0 at the
 * start of ingress (parser-set flags at the start of the parser). */
struct dhc_meta_t {
    /* parser verdicts */
    bit<1>  hdr_bad;        /* ARP or IPv4 the switch does not handle (IP options, non-IPv4 ARP) */
    bit<1>  dhc_bad;        /* dhc_h with bad version, type or lane count */
    /* dispositions */
    bit<1>  drop;           /* drop and count drop_counter[drop_reason] */
    bit<8>  drop_reason;
    bit<1>  consume;        /* drop without counting: an absorbed contribution */
    bit<1>  route;          /* forward through ipv4_lpm */
    bit<1>  aggregate;      /* a DATA packet that passed job/level/child checks */
    bit<1>  result_in;      /* a RESULT from this switch's parent */
    bit<8>  outcome;        /* OUTCOME_*: key of the per-job counters */
    bit<48> switch_mac;
    /* slot and register indexes (index control) */
    bit<16> slot_idx;       /* dhc.slot[14:0] */
    bit<1>  shadow_set;     /* dhc.slot[15:15] */
    bit<32> slot_off;       /* slot_idx * 2 + set */
    bit<16> slot_check;     /* slot_idx - window: bit 15 set iff slot_idx < window */
    bit<32> reg_idx;        /* base + slot_idx * 2 + set: count and lane registers */
    bit<32> bm_idx;         /* reg_idx / 2: bitmap registers */
    /* job_table */
    bit<32> fan_in;
    bit<16> mcast_grp;
    bit<1>  is_root;
    bit<8>  parent_child_id;
    bit<32> own_addr;
    bit<32> parent_addr;
    bit<32> stats_idx;
    bit<9>  port_diff;      /* ingress_port ^ uplink_port */
    bit<32> parent_diff;    /* ipv4.srcAddr ^ parent_addr */
    /* level_table, child_table */
    bit<8>  op;
    bit<32> child_mask;
    /* shadow registers */
    bit<1>  is_new;
    bit<1>  is_first;
    bit<1>  complete;
    bit<32> cnt;
}

struct metadata_t {
    dhc_meta_t dhc;
}

#endif /* _DHC_HEADERS_P4_ */

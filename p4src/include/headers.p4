/*
 * DHC data plane: headers and metadata.
 *
 * All headers are whole bytes long.  dhc_h must equal dhcwire/header.py
 * DHC_HEADER_FIELDS field by field (tests/dhcwire/test_header_matches_p4.py).
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

/* 14 bytes; see dhcwire/header.py. */
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

/* Per-packet state of the DHC pipeline, grouped by the stage that writes it
 * (p4src/README.md, "Pipeline").  The parser's start state sets every field
 * that a later stage may read without having written it; each other field is
 * written by exactly one table (or one action) before it is read. */
struct dhc_meta_t {
    /* parser */
    bit<1>  complete;       /* set only in the parser's final state: 0 = the packet ended inside a header */
    bit<1>  hdr_bad;        /* IPv4 with options / not version 4 */
    bit<1>  is_ipv4;
    bit<1>  is_arp;
    bit<1>  is_dhc;         /* dhc_h extracted (local or transit) */
    bit<1>  dhc_bad;        /* dhc_h with bad version, type or lane count */
    bit<16> slot_idx;       /* dhc.slot[14:0] */
    bit<1>  shadow_set;     /* dhc.slot[15:15] */
    bit<31> slot_31;        /* dhc.slot[14:0] again, as wide as slot (Tofino's ALU adds equal widths) */
    bit<32> session;        /* 0 ++ dhc.job_id ++ dhc.epoch (set_job): the session a DATA belongs to, as wide as the chunk
                               (the tag check compares 32-bit words; the job makes a region handed to
                               another job a new session even in the same epoch) */
    /* stage 0: lookups on packet fields only */
    bit<1>  local;          /* local_addr hit */
    bit<1>  job_ok;         /* job_table hit */
    bit<1>  epoch_ok;       /* epoch_table hit: the frame's epoch is the job's current one */
    bit<1>  child_ok;       /* child_table hit */
    bit<1>  level_ok;       /* level_table hit */
    bit<1>  arp_ok;         /* arp_check: IPv4-over-Ethernet ARP */
    bit<1>  host_port;      /* host_port hit: the ingress port is a host's (anti-spoofing applies) */
    bit<1>  src_ok;         /* host_source hit: the source address is that host's */
    bit<48> switch_mac;
    bit<31> slot;           /* base/2 + slot: index of the per-slot bitmaps; the cell of (slot, set) is slot ++ shadow_set */
    bit<16> slot_check;     /* window - slot_idx: 1..0x7fff iff slot_idx < window */
    bit<32> fan_in;
    bit<16> mcast_grp;
    bit<1>  is_root;
    bit<8>  parent_child_id;
    bit<32> own_addr;
    bit<32> parent_addr;
    bit<32> stats_idx;
    bit<9>  port_diff;      /* ingress_port ^ uplink_port */
    bit<32> parent_diff;    /* ipv4.srcAddr ^ parent_addr */
    bit<8>  op;
    bit<32> child_mask;
    /* stage 1: verdict */
    bit<1>  drop;           /* drop and count drop_counter[drop_reason] */
    bit<8>  drop_reason;
    bit<1>  route;          /* forward through ipv4_lpm */
    bit<1>  aggregate;      /* a DATA packet that passed every check */
    bit<1>  result_in;      /* a RESULT from this switch's parent */
    bit<1>  arp_req;        /* an ARP request to answer */
    bit<4>  same_session;   /* SESSION_*: slot_session held this frame's session (accepted DATA only) */
    /* stage 2: chunk check */
    bit<4>  fresh;          /* FRESH_*: this chunk against the cell's (slot_chunk; accepted DATA only) */
    /* stages 2..4: shadow state */
    bit<32> seen0;          /* bitmap_set0 before this packet (own set 0, same epoch only; else 0) */
    bit<32> seen1;          /* bitmap_set1 before this packet (own set 1, same epoch only; else 0) */
    bit<2>  kind;           /* KIND_*: what the counter did */
    bit<32> cnt_old;        /* slot_count before this packet (0 for a first writer) */
    bit<32> gap;            /* fan_in - cnt_old: 1 completes a new contribution, 0 a duplicate */
    /* stage 7: completion */
    bit<1>  consume;        /* drop without counting: an absorbed contribution */
    bit<8>  outcome;        /* OUTCOME_*: key of the per-job counters */
}

/* Register values before this packet, one per lane (lanes control). */
#define DHC_LANE_OLD_FIELD(i) bit<32> lane_##i;
struct lane_old_t {
    DHC_FOR_EACH_LANE(DHC_LANE_OLD_FIELD)
}

struct metadata_t {
    dhc_meta_t dhc;
    lane_old_t old;
}

#endif /* _DHC_HEADERS_P4_ */

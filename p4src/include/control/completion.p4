/*
 * DHC data plane: what happens to a DHC packet after aggregation.
 *
 * One const-entry table on (pkt_type, kind, gap, is_root) picks the
 * disposition; see the table in p4src/README.md.  Completion comes from the
 * counter's register action: gap = fan_in - (count before this packet), so a
 * new contribution (kind FIRST or ADD) completes the slot iff gap == 1 and a
 * duplicate (kind DUP) finds it complete iff gap == 0.  Entries are in
 * priority order (first match wins).  Packets the switch
 * originates (results, partials, answers) get TTL DHC_TTL, UDP ports
 * DHC_UDP_PORT -> DHC_UDP_PORT (an answer goes to the sender's source port)
 * and UDP checksum 0.
 */
#ifndef _DHC_COMPLETION_P4_
#define _DHC_COMPLETION_P4_

#define DHC_ORIGINATE \
    hdr.ipv4.ttl = DHC_TTL; \
    hdr.udp.srcPort = DHC_UDP_PORT; \
    hdr.udp.dstPort = DHC_UDP_PORT; \
    hdr.udp.checksum = 0;

/* The stored (partial) aggregate goes to the parent as this switch's DATA,
 * routed by ipv4_lpm towards parent_addr. */
#define DHC_PARTIAL_UP \
    DHC_ORIGINATE \
    hdr.ipv4.srcAddr = m.own_addr; \
    hdr.ipv4.dstAddr = m.parent_addr; \
    hdr.dhc.pkt_type = DHC_TYPE_DATA; \
    hdr.dhc.child_id = m.parent_child_id; \
    m.route = 1;

control DhcCompletion(inout headers_t hdr,
                      inout dhc_meta_t m,
                      in bit<9> ingress_port,
                      inout bit<9> egress_spec,
                      inout bit<16> mcast_grp) {

    /* new contribution, slot not complete: absorbed */
    action consume() {
        m.consume = 1;
        m.outcome = OUTCOME_CONSUMED;
    }

    /* root, slot complete: the packet (carrying the aggregate) becomes the
     * RESULT, replicated to the job's group; egress rewrites each replica. */
    action result_multicast() {
        DHC_ORIGINATE
        hdr.dhc.pkt_type = DHC_TYPE_RESULT;
        hdr.dhc.child_id = 0;
        mcast_grp = m.mcast_grp;
        m.outcome = OUTCOME_COMPLETE_ROOT;
    }

    /* non-root, slot complete: partial up to the parent */
    action complete_up() {
        DHC_PARTIAL_UP
        m.outcome = OUTCOME_COMPLETE_UP;
    }

    /* root, duplicate of a complete slot: stored RESULT back to the sender,
     * to the UDP port it sent from (its job's worker port) */
    action answer_unicast() {
        bit<48> mac = hdr.ethernet.dstAddr;
        bit<32> addr = hdr.ipv4.dstAddr;
        bit<16> sender_port = hdr.udp.srcPort;
        DHC_ORIGINATE
        hdr.udp.dstPort = sender_port;
        hdr.ethernet.dstAddr = hdr.ethernet.srcAddr;
        hdr.ethernet.srcAddr = mac;
        hdr.ipv4.dstAddr = hdr.ipv4.srcAddr;
        hdr.ipv4.srcAddr = addr;
        hdr.dhc.pkt_type = DHC_TYPE_RESULT;
        hdr.dhc.child_id = 0;
        egress_spec = ingress_port;
        m.outcome = OUTCOME_DUP_ANSWER;
    }

    /* non-root, duplicate of a complete slot: the parent will answer */
    action dup_up() {
        DHC_PARTIAL_UP
        m.outcome = OUTCOME_DUP_UP;
    }

    /* duplicate of an incomplete slot */
    action dup_pending() {
        m.drop = 1;
        m.drop_reason = DROP_DUP_PENDING;
        m.outcome = OUTCOME_DUP_PENDING;
    }

    /* non-root, RESULT from the parent: down to the children */
    action result_down() {
        DHC_ORIGINATE
        mcast_grp = m.mcast_grp;
        m.outcome = OUTCOME_RESULT_DOWN;
    }

    /* DATA of this epoch for a chunk older than its cell's (a replay, a
     * delayed duplicate): the tag check marked it stale and the shadow tables
     * left every register alone (kind NONE) */
    action stale_chunk() {
        m.drop = 1;
        m.drop_reason = DROP_STALE_CHUNK;
    }

    action unexpected() {
        m.drop = 1;
        m.drop_reason = DROP_UNAUTHORISED;
    }

    table decide {
        key = {
            hdr.dhc.pkt_type : ternary @name("pkt_type");
            m.kind           : ternary @name("kind");
            m.gap            : ternary @name("gap");
            m.is_root        : ternary @name("is_root");
        }
        actions = {
            consume; result_multicast; complete_up; answer_unicast; dup_up; dup_pending; result_down;
            stale_chunk; unexpected;
        }
        CONST_ENTRIES_SIZE(11)
        const entries = {
            (DHC_TYPE_RESULT, KIND_NONE,  _, 0) : result_down();
            (DHC_TYPE_DATA,   KIND_FIRST, 1, 1) : result_multicast();
            (DHC_TYPE_DATA,   KIND_FIRST, 1, 0) : complete_up();
            (DHC_TYPE_DATA,   KIND_FIRST, _, _) : consume();
            (DHC_TYPE_DATA,   KIND_ADD,   1, 1) : result_multicast();
            (DHC_TYPE_DATA,   KIND_ADD,   1, 0) : complete_up();
            (DHC_TYPE_DATA,   KIND_ADD,   _, _) : consume();
            (DHC_TYPE_DATA,   KIND_DUP,   0, 1) : answer_unicast();
            (DHC_TYPE_DATA,   KIND_DUP,   0, 0) : dup_up();
            (DHC_TYPE_DATA,   KIND_DUP,   _, _) : dup_pending();
            (DHC_TYPE_DATA,   KIND_NONE,  _, _) : stale_chunk();
        }
        const default_action = unexpected();
    }

    apply {
        decide.apply();
    }
}

#endif /* _DHC_COMPLETION_P4_ */

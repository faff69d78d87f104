/*
 * DHC data plane: multi-level index tables.
 *
 * local_addr decides whether a packet is for this switch.  For a DHC packet
 * addressed here, job_table -> (level_table, child_table) resolve everything
 * the register stages need: the register index (base + slot*2 + set), the
 * fan-in, the op, and the sender's child bit.  No register is touched here.
 *
 * Output (fields of dhc_meta_t): exactly one of
 *   drop = 1 (with drop_reason), route = 1 (transit IPv4),
 *   aggregate = 1 (DATA from an authorised child), result_in = 1 (RESULT
 *   from this switch's parent).
 */
#ifndef _DHC_INDEX_P4_
#define _DHC_INDEX_P4_

control DhcIndex(in ipv4_h ipv4,
                 in dhc_h dhc,
                 in bit<9> ingress_port,
                 inout dhc_meta_t m) {

    action drop_as(bit<8> reason) {
        m.drop = 1;
        m.drop_reason = reason;
    }

    /* ---- local_addr: exact dst IP -> "this switch" ---- */
    action set_local() { }

    table local_addr {
        key = { ipv4.dstAddr : exact @name("dst_addr"); }
        actions = { set_local; @defaultonly NoAction; }
        const default_action = NoAction();
        size = LOCAL_ADDR_TABLE_SIZE;
    }

    /* ---- job_table: job -> region and tree position ---- */
    action set_job(bit<32> base,
                   bit<16> window,
                   bit<8>  fan_in,
                   bit<16> mcast_grp,
                   bit<1>  is_root,
                   bit<9>  uplink_port,
                   bit<8>  parent_child_id,
                   bit<32> own_addr,
                   bit<32> parent_addr,
                   bit<16> stats_idx) {
        m.reg_idx = base + m.slot_off;
        m.slot_check = m.slot_idx - window;
        m.fan_in = (bit<32>)fan_in;
        m.mcast_grp = mcast_grp;
        m.is_root = is_root;
        m.parent_child_id = parent_child_id;
        m.own_addr = own_addr;
        m.parent_addr = parent_addr;
        m.stats_idx = (bit<32>)stats_idx;
        m.port_diff = ingress_port ^ uplink_port;
        m.parent_diff = ipv4.srcAddr ^ parent_addr;
    }

    action job_miss() {
        m.drop = 1;
        m.drop_reason = DROP_NO_JOB;
    }

    table job_table {
        key = { dhc.job_id : exact @name("job_id"); }
        actions = { set_job; @defaultonly job_miss; }
        const default_action = job_miss();
        size = JOB_TABLE_SIZE;
    }

    /* ---- level_table: (job, level) -> op ---- */
    action set_op(bit<8> op) {
        m.op = op;
    }

    action level_miss() {
        m.drop = 1;
        m.drop_reason = DROP_NO_LEVEL;
    }

    table level_table {
        key = {
            dhc.job_id : exact @name("job_id");
            dhc.level  : exact @name("level");
        }
        actions = { set_op; @defaultonly level_miss; }
        const default_action = level_miss();
        size = LEVEL_TABLE_SIZE;
    }

    /* ---- child_table: (job, port, source, child id) -> child bit ---- */
    action set_child(bit<32> child_mask) {
        m.child_mask = child_mask;
    }

    action child_miss() {
        m.drop = 1;
        m.drop_reason = DROP_UNAUTHORISED;
    }

    table child_table {
        key = {
            dhc.job_id   : exact @name("job_id");
            ingress_port : exact @name("ingress_port");
            ipv4.srcAddr : exact @name("src_addr");
            dhc.child_id : exact @name("child_id");
        }
        actions = { set_child; @defaultonly child_miss; }
        const default_action = child_miss();
        size = CHILD_TABLE_SIZE;
    }

    apply {
        if (!local_addr.apply().hit) {
            m.route = 1;
        } else if (!dhc.isValid()) {
            drop_as(DROP_LOCAL_NOT_DHC);
        } else if (m.dhc_bad == 1) {
            drop_as(DROP_MALFORMED);
        } else {
            m.slot_idx = (bit<16>)dhc.slot[14:0];
            m.shadow_set = dhc.slot[15:15];
            m.slot_off = (bit<32>)(dhc.slot[14:0] ++ dhc.slot[15:15]);
            job_table.apply();
            if (m.drop == 0) {
                m.bm_idx = m.reg_idx >> 1;
                if (m.slot_check[15:15] == 0) {
                    drop_as(DROP_MALFORMED);            /* slot >= window */
                } else if (dhc.pkt_type == DHC_TYPE_DATA) {
                    child_table.apply();
                    if (m.drop == 0) {
                        level_table.apply();
                    }
                    if (m.drop == 0 && m.op > DHC_OP_OR) {
                        drop_as(DROP_NO_LEVEL);
                    }
                    if (m.drop == 0) {
                        m.aggregate = 1;
                    }
                } else {
                    /* RESULT: only from the parent, on the uplink, at a non-root. */
                    if (m.is_root == 1 || m.port_diff != 0 || m.parent_diff != 0) {
                        drop_as(DROP_UNAUTHORISED);
                    } else {
                        m.result_in = 1;
                    }
                }
            }
        }
    }
}

#endif /* _DHC_INDEX_P4_ */

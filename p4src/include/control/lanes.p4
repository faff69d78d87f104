/*
 * DHC data plane: the K lane registers.
 *
 * lane_<i>[reg_idx] holds lane i of (slot, set); reg_idx = base + slot*2 + set.
 * Four update shapes, chosen by a const-entry table on (is_new, is_first, op);
 * each reads-modifies-writes every lane register once at reg_idx and leaves
 * the register's new value in the packet, so a packet that completes a slot
 * carries the aggregate, and a duplicate carries the stored value:
 *   write: reg = pkt               (first contribution to the set)
 *   sum:   reg = reg + pkt (wraps) (later contribution, op SUM)
 *   or:    reg = reg | pkt         (later contribution, op OR)
 *   read:  pkt = reg               (duplicate)
 * Lanes are unrolled by DHC_FOR_EACH_LANE (define.p4).
 */
#ifndef _DHC_LANES_P4_
#define _DHC_LANES_P4_

#define DHC_LANE_REGISTER(i) register<bit<32>>(DHC_POOL_SIZE) lane_##i;
#define DHC_LANE_WRITE(i) lane_##i.write(reg_idx, lanes.lane_##i);
#define DHC_LANE_SUM(i) \
    bit<32> v_##i; \
    lane_##i.read(v_##i, reg_idx); \
    v_##i = v_##i + lanes.lane_##i; \
    lane_##i.write(reg_idx, v_##i); \
    lanes.lane_##i = v_##i;
#define DHC_LANE_OR(i) \
    bit<32> v_##i; \
    lane_##i.read(v_##i, reg_idx); \
    v_##i = v_##i | lanes.lane_##i; \
    lane_##i.write(reg_idx, v_##i); \
    lanes.lane_##i = v_##i;
#define DHC_LANE_READ(i) lane_##i.read(lanes.lane_##i, reg_idx);

control DhcLanes(inout dhc_lanes_h lanes,
                 in bit<32> reg_idx,
                 in bit<1> is_new,
                 in bit<1> is_first,
                 in bit<8> op) {

    DHC_FOR_EACH_LANE(DHC_LANE_REGISTER)

    action lanes_write() {
        DHC_FOR_EACH_LANE(DHC_LANE_WRITE)
    }

    action lanes_sum() {
        DHC_FOR_EACH_LANE(DHC_LANE_SUM)
    }

    action lanes_or() {
        DHC_FOR_EACH_LANE(DHC_LANE_OR)
    }

    action lanes_read() {
        DHC_FOR_EACH_LANE(DHC_LANE_READ)
    }

    table lane_update {
        key = {
            is_new   : exact @name("is_new");
            is_first : exact @name("is_first");
            op       : exact @name("op");
        }
        actions = { lanes_write; lanes_sum; lanes_or; lanes_read; @defaultonly NoAction; }
        const entries = {
            (1, 1, DHC_OP_SUM) : lanes_write();
            (1, 1, DHC_OP_OR)  : lanes_write();
            (1, 0, DHC_OP_SUM) : lanes_sum();
            (1, 0, DHC_OP_OR)  : lanes_or();
            (0, 0, DHC_OP_SUM) : lanes_read();
            (0, 0, DHC_OP_OR)  : lanes_read();
        }
        const default_action = NoAction();
        size = 8;
    }

    apply {
        lane_update.apply();
    }
}

#endif /* _DHC_LANES_P4_ */

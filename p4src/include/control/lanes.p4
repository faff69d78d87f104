/*
 * DHC data plane: the K lane registers, one register + two tables per lane.
 *
 * lane_<i>[cell] holds lane i of (slot, set); cell = base + slot*2 + set.
 * Table lane_<i>_update (const entries on the counter's kind and the op) picks
 * one of four register actions, each touching only lane_<i>, once, at cell:
 *   write: reg = pkt                     (first contribution to the set)
 *   sum:   old = reg; reg = old + pkt    (later contribution, op SUM, wraps)
 *   or:    old = reg; reg = old | pkt    (later contribution, op OR)
 *   read:  old = reg                     (duplicate)
 * A register action on v1model returns only the value before the update (p4c's
 * Tofino back end turns read + write into one stateful ALU instruction whose
 * output is the read), so the packet gets its lane afterwards from
 * lane_<i>_result, one plain ALU operation in the stage after the update:
 * pkt = pkt + old / pkt | old / old.  So a packet that completes a slot
 * carries the aggregate, and a duplicate carries the stored value.  The lanes
 * do not depend on each other: p4c spreads them over the stages after the
 * counter, four lanes (stateful ALUs) per stage, each result one stage after
 * its update.  Everything per lane is unrolled by DHC_FOR_EACH_LANE (define.p4).
 */
#ifndef _DHC_LANES_P4_
#define _DHC_LANES_P4_

#define DHC_LANE_UNIT(i) \
    register<bit<32>>(DHC_POOL_SIZE) lane_##i; \
    action lane_##i##_write() { \
        lane_##i.write(DHC_CELL(m), lanes.lane_##i); \
    } \
    action lane_##i##_sum() { \
        lane_##i.read(old.lane_##i, DHC_CELL(m)); \
        lane_##i.write(DHC_CELL(m), old.lane_##i + lanes.lane_##i); \
    } \
    action lane_##i##_or() { \
        lane_##i.read(old.lane_##i, DHC_CELL(m)); \
        lane_##i.write(DHC_CELL(m), old.lane_##i | lanes.lane_##i); \
    } \
    action lane_##i##_read() { \
        lane_##i.read(old.lane_##i, DHC_CELL(m)); \
    } \
    table lane_##i##_update { \
        key = { \
            m.kind : exact @name("kind"); \
            m.op   : exact @name("op"); \
        } \
        actions = { lane_##i##_write; lane_##i##_sum; lane_##i##_or; lane_##i##_read; @defaultonly NoAction; } \
        CONST_ENTRIES_SIZE(6) \
        const entries = { \
            (KIND_FIRST, DHC_OP_SUM) : lane_##i##_write(); \
            (KIND_FIRST, DHC_OP_OR)  : lane_##i##_write(); \
            (KIND_ADD, DHC_OP_SUM)   : lane_##i##_sum(); \
            (KIND_ADD, DHC_OP_OR)    : lane_##i##_or(); \
            (KIND_DUP, DHC_OP_SUM)   : lane_##i##_read(); \
            (KIND_DUP, DHC_OP_OR)    : lane_##i##_read(); \
        } \
        const default_action = NoAction(); \
    } \
    action lane_##i##_add() { \
        lanes.lane_##i = lanes.lane_##i + old.lane_##i; \
    } \
    action lane_##i##_or_in() { \
        lanes.lane_##i = lanes.lane_##i | old.lane_##i; \
    } \
    action lane_##i##_copy() { \
        lanes.lane_##i = old.lane_##i; \
    } \
    table lane_##i##_result { \
        key = { \
            m.kind : exact @name("kind"); \
            m.op   : exact @name("op"); \
        } \
        actions = { lane_##i##_add; lane_##i##_or_in; lane_##i##_copy; @defaultonly NoAction; } \
        CONST_ENTRIES_SIZE(4) \
        const entries = { \
            (KIND_ADD, DHC_OP_SUM) : lane_##i##_add(); \
            (KIND_ADD, DHC_OP_OR)  : lane_##i##_or_in(); \
            (KIND_DUP, DHC_OP_SUM) : lane_##i##_copy(); \
            (KIND_DUP, DHC_OP_OR)  : lane_##i##_copy(); \
        } \
        const default_action = NoAction(); \
    }

#define DHC_LANE_APPLY(i) lane_##i##_update.apply();
#define DHC_LANE_RESULT(i) lane_##i##_result.apply();

control DhcLanes(inout dhc_lanes_h lanes,
                 inout lane_old_t old,
                 in dhc_meta_t m) {

    DHC_FOR_EACH_LANE(DHC_LANE_UNIT)

    apply {
        DHC_FOR_EACH_LANE(DHC_LANE_APPLY)
        DHC_FOR_EACH_LANE(DHC_LANE_RESULT)
    }
}

#endif /* _DHC_LANES_P4_ */

/*
 * DHC data plane: the one place ingress drops a packet.
 *
 * Every stage only records drop/drop_reason (or consume for an absorbed
 * contribution); this control counts drop_counter[drop_reason] and marks the
 * packet, so the counter is touched by a single action.
 */
#ifndef _DHC_DROPS_P4_
#define _DHC_DROPS_P4_

control DhcDrops(in bit<1> drop,
                 in bit<8> drop_reason,
                 in bit<1> consume,
                 inout standard_metadata_t standard_metadata) {

    counter(DHC_DROP_REASONS, CounterType.packets_and_bytes) drop_counter;

    action count_drop() {
        drop_counter.count((bit<32>)drop_reason);
        mark_to_drop(standard_metadata);
    }

    action absorb() {
        mark_to_drop(standard_metadata);
    }

    apply {
        if (drop == 1) {
            count_drop();
        } else if (consume == 1) {
            absorb();
        }
    }
}

#endif /* _DHC_DROPS_P4_ */

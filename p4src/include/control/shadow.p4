/*
 * DHC data plane: worker bitmaps and contribution counters (SwitchML-style
 * shadow sets), shared by all lanes and all levels of a slot.
 *
 * Registers (each read-modified-written at most once per packet, in one
 * action, at one index, with the shape chosen by a const-entry table):
 *   bitmap_set0[bm_idx], bitmap_set1[bm_idx]  bm_idx = reg_idx / 2 = base/2 + slot
 *       the packet's own set:   old = bm; bm = old | mask   (old tells duplicate)
 *       the other set:          bm = bm & ~mask              (the sender has moved on)
 *   slot_count[reg_idx]                        reg_idx = base + slot*2 + set
 *       first contribution:     cnt = 1
 *       later contribution:     cnt = cnt + 1
 *       duplicate:              read
 *
 * A set is reused (chunk c+2W) only after its previous chunk completed and
 * every worker has moved on to chunk c+W (self-clocking), and each worker's
 * first packet of chunk c+W cleared its bit in chunk c's set.  So the own
 * set's bitmap is empty exactly for the first contribution of a chunk: that
 * is "first writer", whatever the counter holds (stale counts of an earlier
 * job with another fan-in in the same region do not matter).
 */
#ifndef _DHC_SHADOW_P4_
#define _DHC_SHADOW_P4_

control DhcShadow(in bit<1> shadow_set,
                  in bit<32> bm_idx,
                  in bit<32> reg_idx,
                  in bit<32> child_mask,
                  in bit<32> fan_in,
                  out bit<1> is_new,
                  out bit<1> is_first,
                  out bit<1> complete,
                  out bit<32> cnt) {

    register<bit<32>>(DHC_POOL_SLOTS) bitmap_set0;
    register<bit<32>>(DHC_POOL_SLOTS) bitmap_set1;
    register<bit<32>>(DHC_POOL_SIZE) slot_count;

    bit<32> seen;   /* own set's bitmap before this packet */

    action mark_set0() {
        bit<32> b;
        bitmap_set0.read(b, bm_idx);
        bitmap_set0.write(bm_idx, b | child_mask);
        seen = b;
    }

    action clear_set0() {
        bit<32> b;
        bitmap_set0.read(b, bm_idx);
        bitmap_set0.write(bm_idx, b & ~child_mask);
    }

    action mark_set1() {
        bit<32> b;
        bitmap_set1.read(b, bm_idx);
        bitmap_set1.write(bm_idx, b | child_mask);
        seen = b;
    }

    action clear_set1() {
        bit<32> b;
        bitmap_set1.read(b, bm_idx);
        bitmap_set1.write(bm_idx, b & ~child_mask);
    }

    table bitmap_set0_update {
        key = { shadow_set : exact @name("shadow_set"); }
        actions = { mark_set0; clear_set0; @defaultonly NoAction; }
        const entries = {
            0 : mark_set0();
            1 : clear_set0();
        }
        const default_action = NoAction();
        size = 2;
    }

    table bitmap_set1_update {
        key = { shadow_set : exact @name("shadow_set"); }
        actions = { mark_set1; clear_set1; @defaultonly NoAction; }
        const entries = {
            0 : clear_set1();
            1 : mark_set1();
        }
        const default_action = NoAction();
        size = 2;
    }

    action count_first() {
        slot_count.write(reg_idx, 32w1);
        cnt = 32w1;
    }

    action count_add() {
        bit<32> c;
        slot_count.read(c, reg_idx);
        c = c + 32w1;
        slot_count.write(reg_idx, c);
        cnt = c;
    }

    action count_read() {
        slot_count.read(cnt, reg_idx);
    }

    table count_update {
        key = {
            is_new   : exact @name("is_new");
            is_first : exact @name("is_first");
        }
        actions = { count_first; count_add; count_read; @defaultonly NoAction; }
        const entries = {
            (1, 1) : count_first();
            (1, 0) : count_add();
            (0, 0) : count_read();
        }
        const default_action = NoAction();
        size = 4;
    }

    apply {
        seen = 0;
        cnt = 0;
        bitmap_set0_update.apply();
        bitmap_set1_update.apply();
        if ((seen & child_mask) == 0) {
            is_new = 1;
        } else {
            is_new = 0;
        }
        if (seen == 0) {
            is_first = 1;
        } else {
            is_first = 0;
        }
        count_update.apply();
        if (cnt == fan_in) {
            complete = 1;
        } else {
            complete = 0;
        }
    }
}

#endif /* _DHC_SHADOW_P4_ */

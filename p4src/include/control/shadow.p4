/*
 * DHC data plane: per-slot state shared by all lanes (SwitchML-style shadow
 * sets), stages 2..6 of an accepted DATA packet.
 *
 *   stage 2  compare_epoch   epoch_diff = old_epoch ^ dhc.epoch  (action, no table)
 *   stage 3  bitmap_set0_update, bitmap_set1_update   (one register each)
 *   stage 4  own_set         seen = own set's old bitmap; dup = seen & mask
 *   stage 5  count_update    slot_count (one register); sets kind
 *   stage 6  compute_gap     gap = fan_in - cnt_old              (action, no table)
 *
 * Every register is touched by the actions of one table only, once per
 * packet, at one index (bm_idx for the bitmaps, cell = bm_idx ++ set for the
 * counter), and every register action has the shape p4c's Tofino back end
 * turns into one stateful ALU instruction: read the old value into metadata
 * and write an expression of that old value, packet/metadata fields and
 * constants.  A register action only returns the old value, so each decision
 * taken from state is made by a table keyed on that value (or on one ALU
 * result of it) in the next stage, never by an `if` on two fields.
 *
 * Rules (p4src/README.md, "Shadow sets and epochs"):
 *   - the packet's own set: old = bm; bm = old | mask  (old tells duplicate)
 *   - the other set:        bm = bm & ~mask            (the sender has moved on)
 *   - a cell whose stored epoch differs from the frame's holds an old
 *     session's data: the frame is its first writer (bm = mask, count = 1,
 *     lanes = the frame's lanes), whatever the registers hold.
 *   - otherwise the own set's bitmap is empty exactly for the first
 *     contribution of a chunk (a set is reused, chunk c+2W, only after every
 *     worker's first packet of chunk c+W cleared its bit).
 * complete = (gap == 1) for a new contribution, (gap == 0) for a duplicate.
 */
#ifndef _DHC_SHADOW_P4_
#define _DHC_SHADOW_P4_

control DhcShadow(in dhc_h dhc, inout dhc_meta_t m) {

    register<bit<32>>(DHC_POOL_SLOTS) bitmap_set0;
    register<bit<32>>(DHC_POOL_SLOTS) bitmap_set1;
    register<bit<32>>(DHC_POOL_SIZE) slot_count;

    /* ---- stage 2 ---- */
    action compare_epoch() {
        m.epoch_diff = m.old_epoch ^ dhc.epoch;
    }

    /* ---- stage 3: bitmaps ---- */
    action mark_set0() {
        bitmap_set0.read(m.seen0, DHC_SLOT(m));
        bitmap_set0.write(DHC_SLOT(m), m.seen0 | m.child_mask);
    }

    action reset_set0() {
        bitmap_set0.write(DHC_SLOT(m), m.child_mask);
    }

    action clear_set0() {
        bitmap_set0.read(m.other0, DHC_SLOT(m));
        bitmap_set0.write(DHC_SLOT(m), m.other0 & ~m.child_mask);
    }

    table bitmap_set0_update {
        key = {
            m.shadow_set : ternary @name("shadow_set");
            m.epoch_diff : ternary @name("epoch_diff");
        }
        actions = { mark_set0; reset_set0; clear_set0; @defaultonly NoAction; }
        const entries = {
            (0, 0) : mark_set0();
            (0, _) : reset_set0();
            (1, _) : clear_set0();
        }
        const default_action = NoAction();
    }

    action mark_set1() {
        bitmap_set1.read(m.seen1, DHC_SLOT(m));
        bitmap_set1.write(DHC_SLOT(m), m.seen1 | m.child_mask);
    }

    action reset_set1() {
        bitmap_set1.write(DHC_SLOT(m), m.child_mask);
    }

    action clear_set1() {
        bitmap_set1.read(m.other1, DHC_SLOT(m));
        bitmap_set1.write(DHC_SLOT(m), m.other1 & ~m.child_mask);
    }

    table bitmap_set1_update {
        key = {
            m.shadow_set : ternary @name("shadow_set");
            m.epoch_diff : ternary @name("epoch_diff");
        }
        actions = { mark_set1; reset_set1; clear_set1; @defaultonly NoAction; }
        const entries = {
            (1, 0) : mark_set1();
            (1, _) : reset_set1();
            (0, _) : clear_set1();
        }
        const default_action = NoAction();
    }

    /* ---- stage 4: the own set's old bitmap and the sender's bit in it ---- */
    action own_set0() {
        m.seen = m.seen0;
        m.dup = m.seen0 & m.child_mask;
    }

    action own_set1() {
        m.seen = m.seen1;
        m.dup = m.seen1 & m.child_mask;
    }

    table own_set {
        key = { m.shadow_set : exact @name("shadow_set"); }
        actions = { own_set0; own_set1; }
        const entries = {
            0 : own_set0();
            1 : own_set1();
        }
        const default_action = own_set0();
    }

    /* ---- stage 5: counter ---- */
    action count_first() {
        slot_count.write(DHC_CELL(m), 32w1);
        m.kind = KIND_FIRST;
    }

    action count_add() {
        slot_count.read(m.cnt_old, DHC_CELL(m));
        slot_count.write(DHC_CELL(m), m.cnt_old + 32w1);
        m.kind = KIND_ADD;
    }

    action count_read() {
        slot_count.read(m.cnt_old, DHC_CELL(m));
        m.kind = KIND_DUP;
    }

    table count_update {
        key = {
            m.epoch_diff : ternary @name("epoch_diff");
            m.seen       : ternary @name("seen");
            m.dup        : ternary @name("dup");
        }
        actions = { count_first; count_add; count_read; @defaultonly NoAction; }
        const entries = {
            (0, 0, _) : count_first();      /* this epoch, own set empty */
            (0, _, 0) : count_add();        /* this epoch, sender's bit was clear */
            (0, _, _) : count_read();       /* this epoch, sender's bit was set */
            (_, _, _) : count_first();      /* cell of an older epoch */
        }
        const default_action = NoAction();
    }

    /* ---- stage 6: distance to completion ---- */
    action compute_gap() {
        m.gap = m.fan_in - m.cnt_old;
    }

    apply {
        compare_epoch();
        bitmap_set0_update.apply();
        bitmap_set1_update.apply();
        own_set.apply();
        count_update.apply();
        compute_gap();
    }
}

#endif /* _DHC_SHADOW_P4_ */

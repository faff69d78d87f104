/*
 * DHC data plane: per-slot state shared by all lanes (SwitchML-style shadow
 * sets), stages 2..4 of an accepted DATA packet.
 *
 *   stage 2  bitmap_set0_update, bitmap_set1_update   (one register each)
 *   stage 3  count_update    slot_count (one register); sets kind
 *   stage 4  compute_gap     gap = fan_in - cnt_old              (action, no table)
 *
 * Every register is touched by the actions of one table only, once per
 * packet, at one index (the slot for the bitmaps, the cell for the counter),
 * and every register action has the shape p4c's Tofino back end turns into
 * one stateful ALU instruction: read the old value into metadata and write an
 * expression of that old value, packet/metadata fields and constants.  A
 * register action only returns the old value, so each decision taken from
 * state is made by a table keyed on that value in the next stage, never by
 * an `if` on two fields and never by an ALU step in between:
 *   - the epoch and staleness test is a key: the bitmap tables match the tag
 *     check's `fresh` (stage 1): FRESH_SAME = this epoch, FRESH_STALE = an
 *     older chunk of this epoch (no register touched), anything else = a
 *     cell of another epoch;
 *   - the duplicate test is a key: count_update matches the own set's old
 *     bitmap against the sender's child_mask with one entry per child bit
 *     (32 entries per set): the bit is set iff the sender already contributed.
 *
 * Rules (p4src/README.md, "Epochs" and "Pipeline"):
 *   - the packet's own set, this epoch: seen = bm; bm = seen | mask
 *   - the packet's own set, older epoch: bm = mask (seen stays 0: first writer)
 *   - stale (an older chunk of this epoch): nothing; count_update leaves kind
 *     NONE, so no lane acts, and decide drops it as DROP_STALE_CHUNK
 *   - the other set:        bm = bm & ~mask            (the sender has moved on)
 *   - the own set's bitmap is empty exactly for the first contribution of a
 *     chunk (a set is reused, chunk c+2W, only after every worker's first
 *     packet of chunk c+W cleared its bit), or for a cell of an older epoch.
 * complete = (gap == 1) for a new contribution, (gap == 0) for a duplicate.
 *
 * Default actions are NoAction: an action that addresses a register by a
 * computed index cannot be a table's default action on Tofino (it needs the
 * hash distribution unit), so every case is a const entry.
 */
#ifndef _DHC_SHADOW_P4_
#define _DHC_SHADOW_P4_

/* (fresh, set, seen0, seen1, child_mask): the sender's bit is set in its own set */
#define DHC_DUP_IN_SET0(c) (_, 0, 32w1 << c &&& 32w1 << c, _, 32w1 << c) : count_read();
#define DHC_DUP_IN_SET1(c) (_, 1, _, 32w1 << c &&& 32w1 << c, 32w1 << c) : count_read();

control DhcShadow(in dhc_h dhc, inout dhc_meta_t m) {

    register<bit<32>>(DHC_POOL_SLOTS) bitmap_set0;
    register<bit<32>>(DHC_POOL_SLOTS) bitmap_set1;
    register<bit<32>>(DHC_POOL_SIZE) slot_count;

    /* ---- stage 2: bitmaps ---- */
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
            m.fresh      : ternary @name("fresh");
        }
        actions = { mark_set0; reset_set0; clear_set0; NoAction; }
        const entries = {
            (_, FRESH_STALE) : NoAction();      /* stale: no register touched */
            (0, FRESH_SAME) : mark_set0();
            (0, _) : reset_set0();              /* other epoch: first writer */
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
            m.fresh      : ternary @name("fresh");
        }
        actions = { mark_set1; reset_set1; clear_set1; NoAction; }
        const entries = {
            (_, FRESH_STALE) : NoAction();      /* stale: no register touched */
            (1, FRESH_SAME) : mark_set1();
            (1, _) : reset_set1();              /* other epoch: first writer */
            (0, _) : clear_set1();
        }
        const default_action = NoAction();
    }

    /* ---- stage 3: counter ---- */
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
            m.fresh      : ternary @name("fresh");
            m.shadow_set : ternary @name("shadow_set");
            m.seen0      : ternary @name("seen0");
            m.seen1      : ternary @name("seen1");
            m.child_mask : ternary @name("child_mask");
        }
        actions = { count_first; count_add; count_read; NoAction; }
        const entries = {
            (FRESH_STALE, _, _, _, _) : NoAction();     /* stale: kind stays NONE, decide drops it */
            (_, 0, 0, _, _) : count_first();    /* own set empty (or an older epoch's cell) */
            (_, 1, _, 0, _) : count_first();
            DHC_SEQ_32(DHC_DUP_IN_SET0)         /* sender's bit was set: duplicate */
            DHC_SEQ_32(DHC_DUP_IN_SET1)
            (_, _, _, _, _) : count_add();         /* sender's bit was clear: new contribution */
        }
        const default_action = NoAction();
    }

    /* ---- stage 4: distance to completion ---- */
    action compute_gap() {
        m.gap = m.fan_in - m.cnt_old;
    }

    apply {
        bitmap_set0_update.apply();
        bitmap_set1_update.apply();
        count_update.apply();
        compute_gap();
    }
}

#endif /* _DHC_SHADOW_P4_ */

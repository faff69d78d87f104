/*
 * DHC data plane: per-slot state shared by all lanes (SwitchML-style shadow
 * sets), stages 2..4 of an accepted DATA packet.
 *
 *   stage 2  chunk_check     slot_chunk (one register); sets fresh
 *   stage 3  bitmap_set0_update, bitmap_set1_update   (one register each)
 *   stage 4  count_update    slot_count (one register); sets kind
 *   stage 5  compute_gap     gap = fan_in - cnt_old              (action, no table)
 *
 * Every register is touched by the actions of one table only, once per
 * packet, at one index (the slot for the bitmaps, the cell for the counter),
 * and every register action has the shape p4c's Tofino back end turns into
 * one stateful ALU instruction: read the old value into metadata and write an
 * expression of that old value, packet/metadata fields and constants.  A
 * register action only returns the old value, so each decision taken from
 * state is made by a table keyed on that value in the next stage, never by
 * an `if` on two fields and never by an ALU step in between:
 *   - the session and chunk tests are a key: the bitmap tables match the
 *     chunk check's `fresh`: FRESH_SAME = this session's data of this chunk,
 *     FRESH_STALE = an earlier chunk of this session (no register touched),
 *     FRESH_NEWER / FRESH_FIRST = a later chunk or another session (first
 *     writer);
 *   - the duplicate test is a key: count_update matches the own set's old
 *     bitmap against the sender's child_mask with one entry per child bit
 *     (32 entries per set): the bit is set iff the sender already contributed.
 *
 * Rules (p4src/README.md, "Epochs" and "Pipeline"):
 *   - the packet's own set, this epoch: seen = bm; bm = seen | mask
 *   - the packet's own set, first writer: bm = mask (seen stays 0)
 *   - stale (an older chunk of this epoch): nothing; count_update leaves kind
 *     NONE, so no lane acts, and decide drops it as DROP_STALE_CHUNK
 *   - the other set: untouched.  SwitchML clears the sender's bit there (the
 *     sender has moved on) so that an empty bitmap marks a set's reuse; here
 *     the chunk tag does that (chunk c+2W is FRESH_NEWER in c's cell: first
 *     writer), and a clear would let a delayed duplicate of chunk c, arriving
 *     after its sender contributed chunk c+W, wipe that contribution's bit in
 *     c+W's set, so the next worker's packet would be taken for a first
 *     writer and the sum lost.
 *   - the own set's bitmap is empty only before a cell's first writer.
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
    register<bit<32>>(DHC_POOL_SIZE) slot_chunk;

    /* ---- stage 2: chunk check (p4src/README.md, "Epochs and chunk tags") ----
     * slot_chunk holds the chunk of the data in the cell.  Same session: the
     * frame's chunk is compared with it as a 32-bit serial number (wraps):
     * earlier -> FRESH_STALE, the cell keeps its chunk; equal -> FRESH_SAME;
     * later -> FRESH_NEWER, the frame takes the cell over.  Other session: the
     * frame takes the cell over (FRESH_FIRST). */
#if defined(DHC_TAG_REGISTER_ACTION)
    /* Tofino: RegisterActions (p4c-tofino does not assemble the v1model form's
     * conditional write); the two comparators' predicate is the output. */
    RegisterAction<bit<32>, bit<32>, bit<4>>(slot_chunk) chunk_order = {
        void apply(inout bit<32> value, out bit<4> rv) {
            rv = this.predicate((int<32>)(dhc.chunk - value) < 0, dhc.chunk == value);
            if (!((int<32>)(dhc.chunk - value) < 0)) {
                value = dhc.chunk;
            }
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<4>>(slot_chunk) chunk_take = {
        void apply(inout bit<32> value) {
            value = dhc.chunk;
        }
    };

    action chunk_same_session() {
        m.fresh = chunk_order.execute((bit<32>)DHC_CELL(m));
    }

    action chunk_other_session() {
        chunk_take.execute((bit<32>)DHC_CELL(m));
        m.fresh = FRESH_FIRST;
    }
#else
    action chunk_same_session() {
        bit<32> old;
        slot_chunk.read(old, DHC_CELL(m));
        bool older = (int<32>)(dhc.chunk - old) < 0;
        m.fresh = older ? FRESH_STALE : (dhc.chunk == old ? FRESH_SAME : FRESH_NEWER);
        slot_chunk.write(DHC_CELL(m), older ? old : dhc.chunk);
    }

    action chunk_other_session() {
        slot_chunk.write(DHC_CELL(m), dhc.chunk);
        m.fresh = FRESH_FIRST;
    }
#endif

    table chunk_check {
        key = { m.same_session : exact @name("same_session"); }
        actions = { chunk_same_session; chunk_other_session; @defaultonly NoAction; }
        CONST_ENTRIES_SIZE(2)
        const entries = {
            SESSION_SAME  : chunk_same_session();
            SESSION_OTHER : chunk_other_session();
        }
        const default_action = NoAction();
    }

    /* ---- stage 3: bitmaps ---- */
    action mark_set0() {
        bitmap_set0.read(m.seen0, DHC_SLOT(m));
        bitmap_set0.write(DHC_SLOT(m), m.seen0 | m.child_mask);
    }

    action reset_set0() {
        bitmap_set0.write(DHC_SLOT(m), m.child_mask);
    }

    table bitmap_set0_update {
        key = {
            m.shadow_set : ternary @name("shadow_set");
            m.fresh      : ternary @name("fresh");
        }
        actions = { mark_set0; reset_set0; NoAction; }
        CONST_ENTRIES_SIZE(3)
        const entries = {
            (_, FRESH_STALE) : NoAction();      /* stale: no register touched */
            (0, FRESH_SAME) : mark_set0();
            (0, _) : reset_set0();              /* a later chunk, another session: first writer */
        }
        const default_action = NoAction();      /* the other set's packets: bitmap untouched */
    }

    action mark_set1() {
        bitmap_set1.read(m.seen1, DHC_SLOT(m));
        bitmap_set1.write(DHC_SLOT(m), m.seen1 | m.child_mask);
    }

    action reset_set1() {
        bitmap_set1.write(DHC_SLOT(m), m.child_mask);
    }

    table bitmap_set1_update {
        key = {
            m.shadow_set : ternary @name("shadow_set");
            m.fresh      : ternary @name("fresh");
        }
        actions = { mark_set1; reset_set1; NoAction; }
        CONST_ENTRIES_SIZE(3)
        const entries = {
            (_, FRESH_STALE) : NoAction();      /* stale: no register touched */
            (1, FRESH_SAME) : mark_set1();
            (1, _) : reset_set1();              /* a later chunk, another session: first writer */
        }
        const default_action = NoAction();      /* the other set's packets: bitmap untouched */
    }

    /* ---- stage 4: counter ---- */
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
        CONST_ENTRIES_SIZE(68)        /* 3 + 2 x 32 (DHC_SEQ_32) + 1 */
        const entries = {
            (FRESH_STALE, _, _, _, _) : NoAction();     /* stale: kind stays NONE, decide drops it */
            (_, 0, 0, _, _) : count_first();    /* own set empty (or a first writer) */
            (_, 1, _, 0, _) : count_first();
            DHC_SEQ_32(DHC_DUP_IN_SET0)         /* sender's bit was set: duplicate */
            DHC_SEQ_32(DHC_DUP_IN_SET1)
            (_, _, _, _, _) : count_add();         /* sender's bit was clear: new contribution */
        }
        const default_action = NoAction();
    }

    /* ---- stage 5: distance to completion ---- */
    action compute_gap() {
        m.gap = m.fan_in - m.cnt_old;
    }

    apply {
        chunk_check.apply();
        bitmap_set0_update.apply();
        bitmap_set1_update.apply();
        count_update.apply();
        compute_gap();
    }
}

#endif /* _DHC_SHADOW_P4_ */

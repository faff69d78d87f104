/*
 * DHC data plane: lookups (stage 0) and the verdict (stage 1).
 *
 * Stage 0: every table here is keyed on packet fields or parser metadata only
 * and writes its own metadata fields, so p4c can place all of them in one
 * stage: local_addr, job_table, epoch_table, level_table, child_table,
 * host_port, host_source and arp_check.  None of them drops; a miss leaves
 * its hit flag at 0.  host_port/host_source are the anti-spoofing check
 * (uRPF-style, installed from the topology): IPv4 entering a port a host
 * hangs on must come from that host's address, so a host can neither pose as
 * the switch (a forged RESULT from 10.0.0.254) nor as another worker.
 *
 * Stage 1: `verdict`, one const ternary table over those flags, decides in
 * one lookup what the packet is: dropped (with its reason), transit (route),
 * an ARP request, an accepted DATA (aggregate) or an accepted RESULT
 * (result_in).  Entries are in priority order (the first that matches wins),
 * so the order of the checks is the order of the entries.  The action that
 * accepts a DATA is also the one place that touches slot_session: the
 * session (job, epoch) of the data in the packet's (slot, set) cell.  It
 * stores the frame's and returns whether the cell already held it
 * (`same_session`); the chunk check (shadow.p4, next stage) orders chunks
 * within a session.
 */
#ifndef _DHC_INDEX_P4_
#define _DHC_INDEX_P4_

/* Register cell of (slot, set): base + slot*2 + set = slot ++ set, a bit
 * concatenation (the hash distribution unit forms it, no ALU).  slot = base/2 +
 * the packet's slot is one add in set_job: base[31:1] + slot_31, both 31 bits
 * wide (Tofino's ALU takes neither a widened slice of action data nor a
 * mixed-width add).  The per-slot bitmaps are indexed by slot. */
#define DHC_CELL(m) ((m).slot ++ (m).shadow_set)
#define DHC_SLOT(m) ((bit<32>)(m).slot)

control DhcIndex(in headers_t hdr,
                 in bit<9> ingress_port,
                 in bit<1> checksum_error,
                 inout dhc_meta_t m) {

    /* The session (0 ++ job ++ epoch) of the data in each (slot, set) cell.
     * accept_data stores the frame's and says whether it was already there
     * (SESSION_SAME) or not (SESSION_OTHER: the frame is the cell's first
     * writer).  The job in the word makes a region handed to another job a
     * new session even in the same epoch. */
    register<bit<32>>(DHC_POOL_SIZE) slot_session;
#if defined(DHC_TAG_REGISTER_ACTION)
    /* Tofino: p4c-tofino does not assemble the v1model form below when the
     * register's old value feeds a comparison (p4src/README.md, "Tofino"), so
     * the same rule is a RegisterAction: the comparator's predicate, one-hot
     * (bit 1 = equal), is the output. */
    RegisterAction<bit<32>, bit<32>, bit<4>>(slot_session) session_check = {
        void apply(inout bit<32> value, out bit<4> rv) {
            rv = this.predicate(value == m.session);
            value = m.session;
        }
    };
#endif

    /* ---- local_addr: exact dst IP -> "this switch" ---- */
    action set_local() {
        m.local = 1;
    }

    table local_addr {
        key = { hdr.ipv4.dstAddr : exact @name("dst_addr"); }
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
        m.job_ok = 1;
        m.slot = base[31:1] + m.slot_31;        /* 31 bits each; action data is the first operand */
        m.slot_check = window - m.slot_idx;     /* action data is the first operand */
        m.fan_in = (bit<32>)fan_in;
        m.mcast_grp = mcast_grp;
        m.is_root = is_root;
        m.parent_child_id = parent_child_id;
        m.own_addr = own_addr;
        m.parent_addr = parent_addr;
        m.stats_idx = (bit<32>)stats_idx;
        m.port_diff = ingress_port ^ uplink_port;
        m.parent_diff = hdr.ipv4.srcAddr ^ parent_addr;
        m.session = 8w0 ++ hdr.dhc.job_id ++ hdr.dhc.epoch;
    }

    action job_miss() {
        m.job_ok = 0;
    }

    table job_table {
        key = { hdr.dhc.job_id : exact @name("job_id"); }
        actions = { set_job; @defaultonly job_miss; }
        const default_action = job_miss();
        size = JOB_TABLE_SIZE;
    }

    /* ---- epoch_table: (job, epoch) hits only for the job's current epoch ---- */
    action current_epoch() {
        m.epoch_ok = 1;
    }

    table epoch_table {
        key = {
            hdr.dhc.job_id : exact @name("job_id");
            hdr.dhc.epoch  : exact @name("epoch");
        }
        actions = { current_epoch; @defaultonly NoAction; }
        const default_action = NoAction();
        size = EPOCH_TABLE_SIZE;
    }

    /* ---- level_table: (job, level) -> op ---- */
    action set_op(bit<8> op) {
        m.level_ok = 1;
        m.op = op;
    }

    action level_miss() {
        m.level_ok = 0;
    }

    table level_table {
        key = {
            hdr.dhc.job_id : exact @name("job_id");
            hdr.dhc.level  : exact @name("level");
        }
        actions = { set_op; @defaultonly level_miss; }
        const default_action = level_miss();
        size = LEVEL_TABLE_SIZE;
    }

    /* ---- child_table: (job, port, source, child id) -> child bit ---- */
    action set_child(bit<32> child_mask) {
        m.child_ok = 1;
        m.child_mask = child_mask;
    }

    action child_miss() {
        m.child_ok = 0;
    }

    table child_table {
        key = {
            hdr.dhc.job_id   : exact @name("job_id");
            ingress_port     : exact @name("ingress_port");
            hdr.ipv4.srcAddr : exact @name("src_addr");
            hdr.dhc.child_id : exact @name("child_id");
        }
        actions = { set_child; @defaultonly child_miss; }
        const default_action = child_miss();
        size = CHILD_TABLE_SIZE;
    }

    /* ---- anti-spoofing: on a port a host hangs on, only that host's source ---- */
    action host_port_hit() {
        m.host_port = 1;
    }

    table host_port {
        key = { ingress_port : exact @name("ingress_port"); }
        actions = { host_port_hit; @defaultonly NoAction; }
        const default_action = NoAction();
        size = HOST_PORT_TABLE_SIZE;
    }

    action host_source_ok() {
        m.src_ok = 1;
    }

    table host_source {
        key = {
            ingress_port     : exact @name("ingress_port");
            hdr.ipv4.srcAddr : exact @name("src_addr");
        }
        actions = { host_source_ok; @defaultonly NoAction; }
        const default_action = NoAction();
        size = HOST_SOURCE_TABLE_SIZE;
    }

    /* ---- arp_check: only IPv4-over-Ethernet ARP is handled ---- */
    action arp_format_ok() {
        m.arp_ok = 1;
    }

    table arp_check {
        key = {
            hdr.arp.htype : exact @name("htype");
            hdr.arp.ptype : exact @name("ptype");
            hdr.arp.hlen  : exact @name("hlen");
            hdr.arp.plen  : exact @name("plen");
        }
        actions = { arp_format_ok; @defaultonly NoAction; }
        CONST_ENTRIES_SIZE(1)
        const entries = {
            (ARP_HTYPE_ETHERNET, ETHERTYPE_IPV4, 6, 4) : arp_format_ok();
        }
        const default_action = NoAction();
    }

    /* ---- verdict ---- */
    action drop_as(bit<8> reason) {
        m.drop = 1;
        m.drop_reason = reason;
    }

    action transit() {
        m.route = 1;
    }

    action arp_request() {
        m.arp_req = 1;
    }

#if defined(DHC_TAG_REGISTER_ACTION)
    action accept_data() {
        m.aggregate = 1;
        m.same_session = session_check.execute((bit<32>)DHC_CELL(m));
    }
#else
    action accept_data() {
        m.aggregate = 1;
        bit<32> old;
        slot_session.read(old, DHC_CELL(m));
        slot_session.write(DHC_CELL(m), m.session);
        m.same_session = old == m.session ? SESSION_SAME : SESSION_OTHER;
    }
#endif

    action accept_result() {
        m.result_in = 1;
    }

    table verdict {
        key = {
            m.complete       : ternary @name("complete");
            m.hdr_bad        : ternary @name("hdr_bad");
            checksum_error   : ternary @name("checksum_error");
            m.is_ipv4        : ternary @name("is_ipv4");
            m.is_arp         : ternary @name("is_arp");
            m.arp_ok         : ternary @name("arp_ok");
            hdr.arp.oper     : ternary @name("arp_oper");
            m.local          : ternary @name("local");
            m.is_dhc         : ternary @name("is_dhc");
            m.dhc_bad        : ternary @name("dhc_bad");
            m.job_ok         : ternary @name("job_ok");
            m.epoch_ok       : ternary @name("epoch_ok");
            m.slot_check     : ternary @name("slot_check");
            hdr.dhc.pkt_type : ternary @name("pkt_type");
            m.child_ok       : ternary @name("child_ok");
            m.level_ok       : ternary @name("level_ok");
            m.op             : ternary @name("op");
            m.is_root        : ternary @name("is_root");
            m.port_diff      : ternary @name("port_diff");
            m.parent_diff    : ternary @name("parent_diff");
            m.host_port      : ternary @name("host_port");
            m.src_ok         : ternary @name("src_ok");
        }
        actions = { drop_as; transit; arp_request; accept_data; accept_result; }
        CONST_ENTRIES_SIZE(20)
        const entries = {
            /* cmpl  hdr  csum ipv4 arp  aok  oper           local dhc  bad  job  epoch slot_check              type             child lvl  op                 root pdiff parent_diff hport src_ok */
            (0,    _,   _,   _,   _,   _,   _,             _,    _,   _,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_MALFORMED);
            (_,    1,   _,   _,   _,   _,   _,             _,    _,   _,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_MALFORMED);
            (_,    _,   1,   _,   _,   _,   _,             _,    _,   _,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_BAD_CHECKSUM);
            (_,    _,   _,   1,   _,   _,   _,             _,    _,   _,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   1,   0) : drop_as(DROP_SPOOFED);
            (_,    _,   _,   0,   0,   _,   _,             _,    _,   _,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_UNSUPPORTED);
            (_,    _,   _,   0,   1,   0,   _,             _,    _,   _,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_MALFORMED);
            (_,    _,   _,   0,   1,   1,   ARP_OPER_REQUEST, _, _,   _,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : arp_request();
            (_,    _,   _,   0,   1,   1,   _,             _,    _,   _,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_ARP);
            (_,    _,   _,   1,   _,   _,   _,             0,    _,   _,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : transit();
            (_,    _,   _,   1,   _,   _,   _,             1,    0,   _,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_LOCAL_NOT_DHC);
            (_,    _,   _,   1,   _,   _,   _,             1,    1,   1,   _,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_MALFORMED);
            (_,    _,   _,   1,   _,   _,   _,             1,    1,   0,   0,   _,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_NO_JOB);
            (_,    _,   _,   1,   _,   _,   _,             1,    1,   0,   1,   0,    _,                      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_STALE_EPOCH);
            (_,    _,   _,   1,   _,   _,   _,             1,    1,   0,   1,   1,    0 &&& 0xffff,           _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_MALFORMED);
            (_,    _,   _,   1,   _,   _,   _,             1,    1,   0,   1,   1,    0x8000 &&& 0x8000,      _,               _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_MALFORMED);
            (_,    _,   _,   1,   _,   _,   _,             1,    1,   0,   1,   1,    _,                      DHC_TYPE_DATA,   0,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_UNAUTHORISED);
            (_,    _,   _,   1,   _,   _,   _,             1,    1,   0,   1,   1,    _,                      DHC_TYPE_DATA,   1,    0,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_NO_LEVEL);
            (_,    _,   _,   1,   _,   _,   _,             1,    1,   0,   1,   1,    _,                      DHC_TYPE_DATA,   1,    1,   0 &&& 0xfe,        _,   _,    _,   _,   _) : accept_data();
            (_,    _,   _,   1,   _,   _,   _,             1,    1,   0,   1,   1,    _,                      DHC_TYPE_DATA,   _,    _,   _,                 _,   _,    _,   _,   _) : drop_as(DROP_NO_LEVEL);
            (_,    _,   _,   1,   _,   _,   _,             1,    1,   0,   1,   1,    _,                      DHC_TYPE_RESULT, _,    _,   _,                 0,   0,    0,   _,   _) : accept_result();
        }
        /* a RESULT not from the parent on the uplink, or at a root */
        const default_action = drop_as(DROP_UNAUTHORISED);
    }

    apply {
        if (m.is_ipv4 == 1) {
            local_addr.apply();
            host_port.apply();
            host_source.apply();
        }
        if (m.is_dhc == 1) {
            job_table.apply();
            epoch_table.apply();
            level_table.apply();
            child_table.apply();
        }
        if (m.is_arp == 1) {
            arp_check.apply();
        }
        verdict.apply();
    }
}

#endif /* _DHC_INDEX_P4_ */

/*
 * DHC data plane: compile-time constants.
 *
 * Everything a build may want to change is a preprocessor macro guarded by
 * #ifndef, so `p4c -DDHC_LANES=4 -DDHC_POOL_SIZE=64 ...` overrides it.
 * Wire constants mirror dhcwire/header.py (the host-side source of truth).
 */
#ifndef _DHC_DEFINE_P4_
#define _DHC_DEFINE_P4_

/* ---- compile-time knobs ------------------------------------------------ */

/* Lanes (32-bit words) per packet: 1, 2, 4, 8, 16, 32, 64, 128 or 256.  Each lane is one
 * register = one stateful ALU on Tofino (4 per stage).  p4c's Tofino back end
 * (which defines __TARGET_TOFINO__) gets 16 by default: its egress parser
 * reads the lanes too, after 27 bytes of intrinsic metadata, and may read
 * at most 160 bytes, so K <= 19 there (p4src/README.md, "Tofino").  Hosts
 * put the switch's K in dhc_h.num_lanes (topology: jobs[].lanes); that field
 * has 8 bits, so K = 256 travels as 0.  256 lanes make a 1,080 B frame with
 * every header, under the 1,500 B Ethernet MTU. */
#ifndef DHC_LANES
#if defined(__TARGET_TOFINO__)
#define DHC_LANES 16
#else
#define DHC_LANES 32
#endif
#endif

/* The tag check (slot_tag, index.p4) is a RegisterAction on Tofino: p4c-tofino
 * does not assemble the plain v1model read-compare-write form of it
 * (p4src/README.md, "Tofino").  -DDHC_TAG_V1MODEL keeps the v1model form even
 * where __TARGET_TOFINO__ is defined (so the softswitch can run the Tofino
 * defaults, as tests do). */
#if defined(__TARGET_TOFINO__) && !defined(DHC_TAG_V1MODEL)
#define DHC_TAG_REGISTER_ACTION
#endif

/* Register cells per lane register = (slot, shadow set) pairs of all jobs.
 * A job with a window of W slots owns 2*W consecutive cells starting at an
 * even base.  Must be even. */
#ifndef DHC_POOL_SIZE
#define DHC_POOL_SIZE 4096
#endif

/* Per-job counter cells (job_table's stats_idx must be below this). */
#ifndef DHC_MAX_JOBS
#define DHC_MAX_JOBS 256
#endif

/* Bitmap registers hold one cell per slot (both sets share an index). */
#define DHC_POOL_SLOTS (DHC_POOL_SIZE / 2)

/* ---- unrolling -----------------------------------------------------------
 * DHC_SEQ_<n>(X) expands to X(0) X(1) ... X(n-1); DHC_FOR_EACH_LANE(X) is
 * DHC_SEQ_<DHC_LANES>.  P4 has no loops in controls, and Tofino wants every
 * lane as its own field and its own register, so lanes are unrolled by the
 * preprocessor; the same sequences write the per-child (32) and per-epoch
 * (256) const entries of the shadow tables. */
#define DHC_SEQ_1(X) X(0)
#define DHC_SEQ_2(X) DHC_SEQ_1(X) X(1)
#define DHC_SEQ_4(X) DHC_SEQ_2(X) X(2) X(3)
#define DHC_SEQ_8(X) DHC_SEQ_4(X) X(4) X(5) X(6) X(7)
#define DHC_SEQ_16(X) DHC_SEQ_8(X) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define DHC_SEQ_32(X) DHC_SEQ_16(X) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) \
    X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
#define DHC_SEQ_64(X) DHC_SEQ_32(X) X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) \
    X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47) X(48) X(49) X(50) X(51) X(52) X(53) X(54) \
    X(55) X(56) X(57) X(58) X(59) X(60) X(61) X(62) X(63)
#define DHC_SEQ_128(X) DHC_SEQ_64(X) X(64) X(65) X(66) X(67) X(68) X(69) X(70) X(71) \
    X(72) X(73) X(74) X(75) X(76) X(77) X(78) X(79) X(80) X(81) X(82) X(83) X(84) X(85) X(86) \
    X(87) X(88) X(89) X(90) X(91) X(92) X(93) X(94) X(95) X(96) X(97) X(98) X(99) X(100) X(101) \
    X(102) X(103) X(104) X(105) X(106) X(107) X(108) X(109) X(110) X(111) X(112) X(113) X(114) \
    X(115) X(116) X(117) X(118) X(119) X(120) X(121) X(122) X(123) X(124) X(125) X(126) X(127)
#define DHC_SEQ_256(X) DHC_SEQ_128(X) X(128) X(129) X(130) X(131) X(132) X(133) X(134) \
    X(135) X(136) X(137) X(138) X(139) X(140) X(141) X(142) X(143) X(144) X(145) X(146) \
    X(147) X(148) X(149) X(150) X(151) X(152) X(153) X(154) X(155) X(156) X(157) X(158) \
    X(159) X(160) X(161) X(162) X(163) X(164) X(165) X(166) X(167) X(168) X(169) X(170) \
    X(171) X(172) X(173) X(174) X(175) X(176) X(177) X(178) X(179) X(180) X(181) X(182) \
    X(183) X(184) X(185) X(186) X(187) X(188) X(189) X(190) X(191) X(192) X(193) X(194) \
    X(195) X(196) X(197) X(198) X(199) X(200) X(201) X(202) X(203) X(204) X(205) X(206) \
    X(207) X(208) X(209) X(210) X(211) X(212) X(213) X(214) X(215) X(216) X(217) X(218) \
    X(219) X(220) X(221) X(222) X(223) X(224) X(225) X(226) X(227) X(228) X(229) X(230) \
    X(231) X(232) X(233) X(234) X(235) X(236) X(237) X(238) X(239) X(240) X(241) X(242) \
    X(243) X(244) X(245) X(246) X(247) X(248) X(249) X(250) X(251) X(252) X(253) X(254) \
    X(255)

#if DHC_LANES == 1
#define DHC_FOR_EACH_LANE(X) DHC_SEQ_1(X)
#elif DHC_LANES == 2
#define DHC_FOR_EACH_LANE(X) DHC_SEQ_2(X)
#elif DHC_LANES == 4
#define DHC_FOR_EACH_LANE(X) DHC_SEQ_4(X)
#elif DHC_LANES == 8
#define DHC_FOR_EACH_LANE(X) DHC_SEQ_8(X)
#elif DHC_LANES == 16
#define DHC_FOR_EACH_LANE(X) DHC_SEQ_16(X)
#elif DHC_LANES == 32
#define DHC_FOR_EACH_LANE(X) DHC_SEQ_32(X)
#elif DHC_LANES == 64
#define DHC_FOR_EACH_LANE(X) DHC_SEQ_64(X)
#elif DHC_LANES == 128
#define DHC_FOR_EACH_LANE(X) DHC_SEQ_128(X)
#elif DHC_LANES == 256
#define DHC_FOR_EACH_LANE(X) DHC_SEQ_256(X)
#else
#error "DHC_LANES must be 1, 2, 4, 8, 16, 32, 64, 128 or 256"
#endif

/* dhc_h.num_lanes is 8 bits wide: K = 256 is sent as 0 (dhcwire.header.lanes_on_wire). */
#if DHC_LANES == 256
#define DHC_LANES_ON_WIRE 0
#else
#define DHC_LANES_ON_WIRE DHC_LANES
#endif

#if (DHC_POOL_SIZE % 2) != 0
#error "DHC_POOL_SIZE must be even (two shadow sets per slot)"
#endif

/* ---- wire constants (dhcwire/header.py) --------------------------------------- */

@noWarn("unused") const bit<16> ETHERTYPE_IPV4 = 0x0800;
@noWarn("unused") const bit<16> ETHERTYPE_ARP = 0x0806;
@noWarn("unused") const bit<8> IP_PROTO_UDP = 17;
@noWarn("unused") const bit<16> ARP_HTYPE_ETHERNET = 1;
@noWarn("unused") const bit<16> ARP_OPER_REQUEST = 1;
@noWarn("unused") const bit<16> ARP_OPER_REPLY = 2;

@noWarn("unused") const bit<16> DHC_UDP_PORT = 0x4448;        /* wire.DHC_UDP_PORT */
@noWarn("unused") const bit<4> DHC_VERSION = 1;               /* wire.DHC_VERSION */
@noWarn("unused") const bit<4> DHC_TYPE_DATA = 1;             /* wire.PacketType.DATA */
@noWarn("unused") const bit<4> DHC_TYPE_RESULT = 2;           /* wire.PacketType.RESULT */
@noWarn("unused") const bit<8> DHC_NUM_LANES = DHC_LANES_ON_WIRE; /* dhc_h.num_lanes must equal this */
/* UDP length of a DATA/RESULT with DHC_LANES lanes (no byte after the last lane), as the two
 * bytes the parser matches: wire.ip_packet_bytes(K) - 20 */
#define DHC_UDP_BYTES (8 + 14 + 4 * DHC_LANES)
@noWarn("unused") const bit<8> DHC_UDP_BYTES_HI = (bit<8>)(DHC_UDP_BYTES >> 8);
@noWarn("unused") const bit<8> DHC_UDP_BYTES_LO = (bit<8>)(DHC_UDP_BYTES & 255);
@noWarn("unused") const bit<8> DHC_OP_SUM = 0;                /* wire.Op.SUM */
@noWarn("unused") const bit<8> DHC_OP_OR = 1;                 /* wire.Op.OR */
@noWarn("unused") const bit<8> DHC_TTL = 64;                  /* TTL of packets the switch originates */

/* ---- drop reasons: indexes of drop_counter (see p4src/README.md) -------- */

@noWarn("unused") const bit<8> DROP_NONE = 0;                 /* never counted */
@noWarn("unused") const bit<8> DROP_MALFORMED = 1;            /* parser error, bad version/type/lanes, slot >= window, IP options */
@noWarn("unused") const bit<8> DROP_UNAUTHORISED = 2;         /* child_table miss; RESULT not from the parent */
@noWarn("unused") const bit<8> DROP_NO_JOB = 3;               /* job_table miss */
@noWarn("unused") const bit<8> DROP_NO_LEVEL = 4;             /* level_table miss or op not SUM/OR */
@noWarn("unused") const bit<8> DROP_DUP_PENDING = 5;          /* duplicate for a slot that is not complete */
@noWarn("unused") const bit<8> DROP_NO_ROUTE = 6;             /* ipv4_lpm miss */
@noWarn("unused") const bit<8> DROP_TTL = 7;                  /* transit IPv4 with TTL <= 1 */
@noWarn("unused") const bit<8> DROP_ARP = 8;                  /* ARP that is not a request for an address in arp_table */
@noWarn("unused") const bit<8> DROP_LOCAL_NOT_DHC = 9;        /* IPv4 to a local address that is not a DHC packet */
@noWarn("unused") const bit<8> DROP_UNSUPPORTED = 10;         /* neither ARP nor IPv4 */
@noWarn("unused") const bit<8> DROP_NO_REWRITE = 11;          /* egress: multicast replica without result_rewrite entry */
@noWarn("unused") const bit<8> DROP_STALE_EPOCH = 12;         /* DATA/RESULT whose epoch is not the job's current one */
@noWarn("unused") const bit<8> DROP_BAD_CHECKSUM = 13;        /* IPv4 header checksum wrong (standard_metadata.checksum_error) */
@noWarn("unused") const bit<8> DROP_SPOOFED = 14;             /* IPv4 in on a host port whose source is not that host's address */
@noWarn("unused") const bit<8> DROP_STALE_CHUNK = 15;         /* DATA of the current epoch for a chunk older than its cell's (replay, delayed duplicate) */
#define DHC_DROP_REASONS 16

/* ---- completion outcomes: key of the per-job counters table -------------- */

@noWarn("unused") const bit<8> OUTCOME_NONE = 0;
@noWarn("unused") const bit<8> OUTCOME_CONSUMED = 1;          /* new contribution, slot not complete: absorbed */
@noWarn("unused") const bit<8> OUTCOME_COMPLETE_ROOT = 2;     /* new contribution completed the slot at the root: multicast RESULT */
@noWarn("unused") const bit<8> OUTCOME_COMPLETE_UP = 3;       /* new contribution completed the slot at a non-root: partial up */
@noWarn("unused") const bit<8> OUTCOME_DUP_ANSWER = 4;        /* duplicate of a complete slot at the root: unicast RESULT back */
@noWarn("unused") const bit<8> OUTCOME_DUP_UP = 5;            /* duplicate of a complete slot at a non-root: partial up again */
@noWarn("unused") const bit<8> OUTCOME_DUP_PENDING = 6;       /* duplicate of an incomplete slot: dropped */
@noWarn("unused") const bit<8> OUTCOME_RESULT_DOWN = 7;       /* RESULT from the parent: multicast to the children */

/* ---- session and chunk checks of an accepted DATA (stages 1 and 2) ---------
 * One-hot, as Tofino's stateful ALU returns its comparators (`predicate`: bit
 * cmplo + 2*cmphi of the truth table; the program computes the same values on
 * BMv2 and the softswitch). */
@noWarn("unused") const bit<4> SESSION_OTHER = 1;            /* the cell held another session's data */
@noWarn("unused") const bit<4> SESSION_SAME = 2;             /* the cell held this session's data */
@noWarn("unused") const bit<4> FRESH_NEWER = 1;              /* same session, later chunk: takes the cell over (first writer) */
@noWarn("unused") const bit<4> FRESH_STALE = 2;              /* same session, earlier chunk: dropped, DROP_STALE_CHUNK */
@noWarn("unused") const bit<4> FRESH_SAME = 4;               /* same session, same chunk: the shadow-set rules */
@noWarn("unused") const bit<4> FRESH_FIRST = 8;              /* other session: the cell's first writer */

/* ---- kind of a contribution: output of the counter stage, key of the lanes -- */

@noWarn("unused") const bit<2> KIND_NONE = 0;               /* not a DATA contribution (RESULT) */
@noWarn("unused") const bit<2> KIND_FIRST = 1;              /* first of its (slot, set) round: overwrite */
@noWarn("unused") const bit<2> KIND_ADD = 2;                /* later new contribution: add / or */
@noWarn("unused") const bit<2> KIND_DUP = 3;                /* duplicate: read the stored value */

#endif /* _DHC_DEFINE_P4_ */

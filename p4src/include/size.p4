/*
 * DHC data plane: table sizes, in one place.  All overridable with -D.
 */
#ifndef _DHC_SIZE_P4_
#define _DHC_SIZE_P4_

#ifndef LOCAL_ADDR_TABLE_SIZE
#define LOCAL_ADDR_TABLE_SIZE 64
#endif
#ifndef JOB_TABLE_SIZE
#define JOB_TABLE_SIZE DHC_MAX_JOBS
#endif
/* One entry per job, plus room for a second one per job while a reset
 * inserts the new epoch before deleting the old. */
#ifndef EPOCH_TABLE_SIZE
#define EPOCH_TABLE_SIZE (2 * JOB_TABLE_SIZE)
#endif
#ifndef LEVEL_TABLE_SIZE
#define LEVEL_TABLE_SIZE 2048
#endif
#ifndef CHILD_TABLE_SIZE
#define CHILD_TABLE_SIZE 4096
#define HOST_PORT_TABLE_SIZE 512
#define HOST_SOURCE_TABLE_SIZE 512
#endif
#ifndef ARP_TABLE_SIZE
#define ARP_TABLE_SIZE 1024
#endif
#ifndef IPV4_LPM_TABLE_SIZE
#define IPV4_LPM_TABLE_SIZE 1024
#endif
#ifndef RESULT_REWRITE_TABLE_SIZE
#define RESULT_REWRITE_TABLE_SIZE 4096
#endif

/* Sizes of const-entry tables.  p4c's Tofino back end allocates every table by its size and
 * warns (then assumes 512) when a const-entry table has none; p4c's mid end warns when one has
 * any (the entries fix it).  So they are given to Tofino only. */
#ifdef __TARGET_TOFINO__
#define CONST_ENTRIES_SIZE(n) size = n;
#else
#define CONST_ENTRIES_SIZE(n)
#endif

#endif /* _DHC_SIZE_P4_ */

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

#endif /* _DHC_SIZE_P4_ */

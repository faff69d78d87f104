/*
 * DHC data plane: per-job counters, indexed by job_table's stats_idx.
 *
 *   job_contributions  new contributions accepted (added into the registers)
 *   job_completions    slots completed at this switch
 *   job_duplicates     duplicate contributions seen
 *   job_results        RESULT packets sent (one per multicast, before replication,
 *                      or one unicast answer)
 * One counter per table, one action per counter, one index (stats_idx): the
 * four tables are keyed on the completion outcome and independent of each
 * other, so they share a stage.
 */
#ifndef _DHC_STATS_P4_
#define _DHC_STATS_P4_

control DhcStats(in bit<8> outcome, in bit<32> stats_idx) {

    counter(DHC_MAX_JOBS, CounterType.packets_and_bytes) job_contributions;
    counter(DHC_MAX_JOBS, CounterType.packets_and_bytes) job_completions;
    counter(DHC_MAX_JOBS, CounterType.packets_and_bytes) job_duplicates;
    counter(DHC_MAX_JOBS, CounterType.packets_and_bytes) job_results;

    action count_contribution() {
        job_contributions.count(stats_idx);
    }

    table contribution_stats {
        key = { outcome : exact @name("outcome"); }
        actions = { count_contribution; @defaultonly NoAction; }
        CONST_ENTRIES_SIZE(3)
        const entries = {
            OUTCOME_CONSUMED      : count_contribution();
            OUTCOME_COMPLETE_ROOT : count_contribution();
            OUTCOME_COMPLETE_UP   : count_contribution();
        }
        const default_action = NoAction();
    }

    action count_completion() {
        job_completions.count(stats_idx);
    }

    table completion_stats {
        key = { outcome : exact @name("outcome"); }
        actions = { count_completion; @defaultonly NoAction; }
        CONST_ENTRIES_SIZE(2)
        const entries = {
            OUTCOME_COMPLETE_ROOT : count_completion();
            OUTCOME_COMPLETE_UP   : count_completion();
        }
        const default_action = NoAction();
    }

    action count_duplicate() {
        job_duplicates.count(stats_idx);
    }

    table duplicate_stats {
        key = { outcome : exact @name("outcome"); }
        actions = { count_duplicate; @defaultonly NoAction; }
        CONST_ENTRIES_SIZE(3)
        const entries = {
            OUTCOME_DUP_ANSWER  : count_duplicate();
            OUTCOME_DUP_UP      : count_duplicate();
            OUTCOME_DUP_PENDING : count_duplicate();
        }
        const default_action = NoAction();
    }

    action count_result() {
        job_results.count(stats_idx);
    }

    table result_stats {
        key = { outcome : exact @name("outcome"); }
        actions = { count_result; @defaultonly NoAction; }
        CONST_ENTRIES_SIZE(3)
        const entries = {
            OUTCOME_COMPLETE_ROOT : count_result();
            OUTCOME_DUP_ANSWER    : count_result();
            OUTCOME_RESULT_DOWN   : count_result();
        }
        const default_action = NoAction();
    }

    apply {
        contribution_stats.apply();
        completion_stats.apply();
        duplicate_stats.apply();
        result_stats.apply();
    }
}

#endif /* _DHC_STATS_P4_ */

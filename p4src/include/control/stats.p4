/*
 * DHC data plane: per-job counters, indexed by job_table's stats_idx.
 *
 *   job_contributions  new contributions accepted (added into the registers)
 *   job_completions    slots completed at this switch
 *   job_duplicates     duplicate contributions seen
 *   job_results        RESULT packets sent (one per multicast, before replication,
 *                      or one unicast answer)
 * All four are touched only by the actions of job_stats, keyed on the outcome.
 */
#ifndef _DHC_STATS_P4_
#define _DHC_STATS_P4_

control DhcStats(in bit<8> outcome, in bit<32> stats_idx) {

    counter(DHC_MAX_JOBS, CounterType.packets_and_bytes) job_contributions;
    counter(DHC_MAX_JOBS, CounterType.packets_and_bytes) job_completions;
    counter(DHC_MAX_JOBS, CounterType.packets_and_bytes) job_duplicates;
    counter(DHC_MAX_JOBS, CounterType.packets_and_bytes) job_results;

    action count_consumed() {
        job_contributions.count(stats_idx);
    }

    action count_complete_root() {
        job_contributions.count(stats_idx);
        job_completions.count(stats_idx);
        job_results.count(stats_idx);
    }

    action count_complete_up() {
        job_contributions.count(stats_idx);
        job_completions.count(stats_idx);
    }

    action count_dup_answer() {
        job_duplicates.count(stats_idx);
        job_results.count(stats_idx);
    }

    action count_duplicate() {
        job_duplicates.count(stats_idx);
    }

    action count_result_down() {
        job_results.count(stats_idx);
    }

    table job_stats {
        key = { outcome : exact @name("outcome"); }
        actions = {
            count_consumed; count_complete_root; count_complete_up; count_dup_answer;
            count_duplicate; count_result_down; @defaultonly NoAction;
        }
        const entries = {
            OUTCOME_CONSUMED      : count_consumed();
            OUTCOME_COMPLETE_ROOT : count_complete_root();
            OUTCOME_COMPLETE_UP   : count_complete_up();
            OUTCOME_DUP_ANSWER    : count_dup_answer();
            OUTCOME_DUP_UP        : count_duplicate();
            OUTCOME_DUP_PENDING   : count_duplicate();
            OUTCOME_RESULT_DOWN   : count_result_down();
        }
        const default_action = NoAction();
        size = 8;
    }

    apply {
        job_stats.apply();
    }
}

#endif /* _DHC_STATS_P4_ */

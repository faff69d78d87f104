"""Names and numbers the controller and the tests share with ``p4src/dhc.p4``.

P4Info names follow ``p4src/README.md`` ("Control-plane contract"); drop reasons are the
``DROP_*`` constants of ``p4src/include/define.p4``.  This is the one place Python spells them;
``tests/p4src/test_p4info_contract.py`` checks them against the compiled program.
"""

from __future__ import annotations

# ---------------------------------------------------------------- tables
T_LOCAL = "DhcIngress.dhc_index.local_addr"
T_JOB = "DhcIngress.dhc_index.job_table"
T_LEVEL = "DhcIngress.dhc_index.level_table"
T_CHILD = "DhcIngress.dhc_index.child_table"
T_EPOCH = "DhcIngress.dhc_index.epoch_table"
T_HOST_PORT = "DhcIngress.dhc_index.host_port"
T_HOST_SOURCE = "DhcIngress.dhc_index.host_source"
T_SWITCH = "DhcIngress.forwarding.switch_config"
T_ARP = "DhcIngress.forwarding.arp_table"
T_LPM = "DhcIngress.forwarding.ipv4_lpm"
T_REWRITE = "DhcEgress.rewrite.result_rewrite"

# ---------------------------------------------------------------- actions
A_SET_LOCAL = "DhcIngress.dhc_index.set_local"
A_SET_JOB = "DhcIngress.dhc_index.set_job"
A_SET_OP = "DhcIngress.dhc_index.set_op"
A_SET_CHILD = "DhcIngress.dhc_index.set_child"
A_CURRENT_EPOCH = "DhcIngress.dhc_index.current_epoch"
A_HOST_PORT = "DhcIngress.dhc_index.host_port_hit"
A_HOST_SOURCE = "DhcIngress.dhc_index.host_source_ok"
A_SWITCH_MAC = "DhcIngress.forwarding.set_switch_mac"
A_ARP_REPLY = "DhcIngress.forwarding.arp_reply"
A_SET_NHOP = "DhcIngress.forwarding.set_nhop"
A_REWRITE = "DhcEgress.rewrite.rewrite"

# ---------------------------------------------------------------- counters
C_DROP = "DhcIngress.drops.drop_counter"
C_EGRESS_DROP = "DhcEgress.rewrite.egress_drop_counter"
C_CONTRIB = "DhcIngress.stats.job_contributions"
C_COMPLETE = "DhcIngress.stats.job_completions"
C_DUP = "DhcIngress.stats.job_duplicates"
C_RESULTS = "DhcIngress.stats.job_results"
#: Per-job counters by the name ``dhc-ctl status`` shows.
JOB_COUNTERS: dict[str, str] = {"contributions": C_CONTRIB, "completions": C_COMPLETE,
                                "duplicates": C_DUP, "results": C_RESULTS}

# ---------------------------------------------------------------- drop reasons
# drop_counter / egress_drop_counter indexes (p4src/include/define.p4)
DROP_MALFORMED = 1
DROP_UNAUTHORISED = 2
DROP_NO_JOB = 3
DROP_NO_LEVEL = 4
DROP_DUP_PENDING = 5
DROP_NO_ROUTE = 6
DROP_TTL = 7
DROP_ARP = 8
DROP_LOCAL_NOT_DHC = 9
DROP_UNSUPPORTED = 10
DROP_NO_REWRITE = 11
DROP_STALE_EPOCH = 12
DROP_BAD_CHECKSUM = 13
DROP_SPOOFED = 14
DROP_STALE_CHUNK = 15
#: Size of the drop counters (``DHC_DROP_REASONS``): indexes 0..15.
DROP_COUNTER_SIZE = 16

#: Drop reason index -> the name ``dhc-ctl status`` prints (the constant's name, lower case).
DROP_REASONS: dict[int, str] = {
    value: name[len("DROP_"):].lower() for name, value in dict(globals()).items()
    if name.startswith("DROP_") and name != "DROP_COUNTER_SIZE" and isinstance(value, int)
}

# ---------------------------------------------------------------- program limits
#: Largest number of children one aggregator accepts (one bit each in a 32-bit bitmap).
MAX_FAN_IN: int = 32
#: Per-job counter cells (``DHC_MAX_JOBS`` default of p4src/dhc.p4): jobs one switch aggregates.
DEFAULT_MAX_JOBS: int = 256

"""``DhcIngress.dhc_index`` (DhcIndex): local_addr, job_table, level_table, child_table.

``local_addr`` holds the switch's own address (base state: one address per switch serves every
job); the three job tables are owned by their job (``job_id`` is in every key).
"""

from __future__ import annotations

from collections.abc import Iterator

from controller.intent import (
    A_SET_CHILD,
    A_SET_JOB,
    A_SET_LOCAL,
    A_SET_OP,
    T_CHILD,
    T_JOB,
    T_LEVEL,
    T_LOCAL,
    TableEntry,
    entry,
    ip2int,
)
from controller.programs.plan import SwitchPlan


class IndexTables:
    tables = (T_LOCAL, T_JOB, T_LEVEL, T_CHILD)
    default_tables = ()

    def defaults(self, plan: SwitchPlan) -> Iterator:
        return iter(())

    def entries(self, plan: SwitchPlan) -> Iterator[TableEntry]:
        yield entry(T_LOCAL, {"dst_addr": ip2int(plan.ip)}, A_SET_LOCAL)
        for j in plan.jobs:
            yield entry(T_JOB, {"job_id": j.job_id}, A_SET_JOB, {
                "base": j.base, "window": j.window, "fan_in": len(j.children), "mcast_grp": j.mcast_grp,
                "is_root": int(j.is_root), "uplink_port": j.uplink_port, "parent_child_id": j.parent_child_id,
                "own_addr": ip2int(j.own_addr), "parent_addr": ip2int(j.parent_addr) if j.parent_addr else 0,
                "stats_idx": j.stats_idx}, owner=j.job_id)
            for level, op in j.levels:
                yield entry(T_LEVEL, {"job_id": j.job_id, "level": level}, A_SET_OP, {"op": op}, owner=j.job_id)
            for c in j.children:
                yield entry(T_CHILD, {"job_id": j.job_id, "ingress_port": c.port, "src_addr": ip2int(c.addr),
                                      "child_id": c.child_id},
                            A_SET_CHILD, {"child_mask": 1 << c.child_id}, owner=j.job_id)

    def groups(self, plan: SwitchPlan) -> Iterator:
        return iter(())

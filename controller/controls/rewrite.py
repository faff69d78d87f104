"""``DhcEgress.rewrite`` (DhcResultRewrite) and the PRE groups that feed it: per job one multicast
group with one replica ``(port, rid)`` per child, and per rid one ``result_rewrite`` entry that
addresses that child's copy of the RESULT."""

from __future__ import annotations

from collections.abc import Iterator

from controller.controls.switch_plan import SwitchPlan
from controller.intent import McGroup, TableEntry, entry
from dhcwire.addresses import ip2int, mac2int
from dhcwire.header import DHC_UDP_PORT, worker_port
from dhcwire.p4names import A_REWRITE, T_REWRITE


class ResultRewrite:
    tables = (T_REWRITE,)
    default_tables = ()

    def defaults(self, plan: SwitchPlan) -> Iterator:
        return iter(())

    def entries(self, plan: SwitchPlan) -> Iterator[TableEntry]:
        for j in plan.jobs:
            for c in j.children:
                yield entry(T_REWRITE, {"egress_rid": c.rid}, A_REWRITE, {
                    "dmac": mac2int(c.next_mac), "dip": ip2int(c.addr),
                    "smac": mac2int(plan.mac), "sip": ip2int(j.own_addr),
                    "dport": worker_port(j.job_id) if c.kind == "host" else DHC_UDP_PORT}, owner=j.job_id)

    def groups(self, plan: SwitchPlan) -> Iterator[McGroup]:
        for j in plan.jobs:
            yield McGroup(j.mcast_grp, tuple(sorted((c.port, c.rid) for c in j.children)), owner=j.job_id)

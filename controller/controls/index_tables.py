"""``DhcIngress.dhc_index`` (DhcIndex): local_addr, host_source, host_port, job_table, epoch_table,
level_table, child_table.

``local_addr`` holds the switch's own address (base state: one address per switch serves every
job); ``host_port``/``host_source`` (base state) mark each port a host hangs on and that host's
address, so IPv4 entering it from any other source (the switch's own address included) is dropped
as spoofed; the four job tables are owned by their job (``job_id`` is in every key).  ``epoch_table``
holds exactly one entry per job, keyed on (job, current epoch): :func:`epoch_entry` builds it and
:func:`installed_epoch` reads it back, so a session reset replaces that one entry.
"""

from __future__ import annotations

from collections.abc import Iterator

from controller.controls.switch_plan import SwitchPlan
from controller.intent import SwitchState, TableEntry, entry
from dhcwire.addresses import ip2int
from dhcwire.header import MAX_EPOCH
from dhcwire.p4names import (
    A_CURRENT_EPOCH,
    A_HOST_PORT,
    A_HOST_SOURCE,
    A_SET_CHILD,
    A_SET_JOB,
    A_SET_LOCAL,
    A_SET_OP,
    T_CHILD,
    T_EPOCH,
    T_HOST_PORT,
    T_HOST_SOURCE,
    T_JOB,
    T_LEVEL,
    T_LOCAL,
)


def epoch_entry(job_id: int, epoch: int) -> TableEntry:
    """The ``epoch_table`` entry that makes ``epoch`` the current session of ``job_id``."""
    if not 0 <= epoch <= MAX_EPOCH:
        raise ValueError(f"job {job_id}: epoch {epoch} is outside 0..{MAX_EPOCH} (dhc_h.epoch is 8 bits)")
    return entry(T_EPOCH, {"job_id": job_id, "epoch": epoch}, A_CURRENT_EPOCH, owner=job_id)


def installed_epoch(state: SwitchState, job_id: int) -> int | None:
    """The current epoch of ``job_id`` in a (read-back) switch state; None if it has no entry.
    ValueError if there are several (the switch would accept frames of more than one session)."""
    epochs = sorted(e.match_value("epoch") for e in state.table(T_EPOCH) if e.match_value("job_id") == job_id)
    if len(epochs) > 1:
        raise ValueError(f"{state.switch}: job {job_id} has {len(epochs)} epoch entries {epochs}")
    return epochs[0] if epochs else None


class IndexTables:
    tables = (T_LOCAL, T_HOST_SOURCE, T_HOST_PORT, T_JOB, T_EPOCH, T_LEVEL, T_CHILD)
    default_tables = ()

    def defaults(self, plan: SwitchPlan) -> Iterator:
        return iter(())

    def entries(self, plan: SwitchPlan) -> Iterator[TableEntry]:
        yield entry(T_LOCAL, {"dst_addr": ip2int(plan.ip)}, A_SET_LOCAL)
        for port, ip in plan.host_ports:
            yield entry(T_HOST_SOURCE, {"ingress_port": port, "src_addr": ip2int(ip)}, A_HOST_SOURCE)
            yield entry(T_HOST_PORT, {"ingress_port": port}, A_HOST_PORT)
        for j in plan.jobs:
            yield entry(T_JOB, {"job_id": j.job_id}, A_SET_JOB, {
                "base": j.base, "window": j.window, "fan_in": len(j.children), "mcast_grp": j.mcast_grp,
                "is_root": int(j.is_root), "uplink_port": j.uplink_port, "parent_child_id": j.parent_child_id,
                "own_addr": ip2int(j.own_addr), "parent_addr": ip2int(j.parent_addr) if j.parent_addr else 0,
                "stats_idx": j.stats_idx}, owner=j.job_id)
            yield epoch_entry(j.job_id, j.epoch)
            for level, op in j.levels:
                yield entry(
                    T_LEVEL, {"job_id": j.job_id, "level": level}, A_SET_OP, {"op": op}, owner=j.job_id
                )
            for c in j.children:
                yield entry(T_CHILD, {"job_id": j.job_id, "ingress_port": c.port, "src_addr": ip2int(c.addr),
                                      "child_id": c.child_id},
                            A_SET_CHILD, {"child_mask": 1 << c.child_id}, owner=j.job_id)

    def groups(self, plan: SwitchPlan) -> Iterator:
        return iter(())

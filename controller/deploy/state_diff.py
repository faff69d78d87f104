"""What a deployment changes on a switch, computed from plain data: no I/O, no P4Runtime session.

The intended state (``controller.plan``) and the state a switch holds (read back by
``controller.deploy.apply``) are both ``controller.intent.SwitchState``; this module diffs them,
gives read-back state its owners, finds conflicts with other jobs, counts the changes and checks
which switches a deployment addresses and which epoch each job keeps.

Ownership decides what may be deleted: entries of the job tables belong to the ``job_id`` in
their key, a multicast group to the job of the same id, a ``result_rewrite`` entry to the group
that replicates with its rid, everything else (forwarding, ``local_addr``, orphaned rewrites) to
the base configuration.  A deployment scoped to some jobs deletes extras only of those jobs (and
of the base when it deploys the base); ``prune`` deletes everything not intended.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p4.v1 import p4runtime_pb2

from controller.deploy.errors import PlanError
from controller.entries import switch_epochs
from controller.intent import JOB_TABLES, WRITE_ORDER, DefaultAction, McGroup, SwitchState, TableEntry
from dhcwire.p4names import T_JOB, T_REWRITE

if TYPE_CHECKING:
    from controller.placement import Placement
    from controller.topology import Topology

#: the update kinds of P4Runtime (plain ints: INSERT, MODIFY, DELETE)
Update = p4runtime_pb2.Update


@dataclass(frozen=True)
class Change:
    """One difference to apply: INSERT/MODIFY/DELETE of an entry, default action or group."""

    kind: int  # Update.INSERT / MODIFY / DELETE
    item: TableEntry | DefaultAction | McGroup

    def describe(self) -> str:
        return self.item.describe()


@dataclass
class SwitchReport:
    """What a deployment did (or, in a dry run, would do) on one switch."""

    switch: str
    pipeline_pushed: bool = False
    inserted: int = 0
    modified: int = 0
    deleted: int = 0

    @property
    def writes(self) -> int:
        return self.inserted + self.modified + self.deleted

    @classmethod
    def of_changes(cls, switch: str, changes: list[Change]) -> SwitchReport:
        """The counts of ``changes`` by kind."""
        rep = cls(switch)
        for c in changes:
            if c.kind == Update.INSERT:
                rep.inserted += 1
            elif c.kind == Update.MODIFY:
                rep.modified += 1
            else:
                rep.deleted += 1
        return rep


def assign_owners(state: SwitchState) -> SwitchState:
    """Give read-back state its owners (see module docstring)."""
    rid_owner = {rid: g.group_id for g in state.groups.values() for _, rid in g.replicas}
    out = SwitchState(state.switch, defaults=dict(state.defaults))
    for k, g in state.groups.items():
        out.groups[k] = McGroup(g.group_id, g.replicas, owner=g.group_id)
    for k, e in state.entries.items():
        if e.table in JOB_TABLES:
            owner = e.match_value("job_id")
        elif e.table == T_REWRITE:
            owner = rid_owner.get(e.match_value("egress_rid"))
        else:
            owner = None
        out.entries[k] = TableEntry(e.table, e.match, e.action, e.params, owner)
    return out


def _in_scope(owner: int | None, jobs: set[int] | None, base: bool) -> bool:
    return base if owner is None else (jobs is None or owner in jobs)


def diff(intended: SwitchState, actual: SwitchState, jobs: set[int] | None = None, base: bool = True,
         prune: bool = False) -> list[Change]:
    """The changes that make ``actual`` hold the scoped part of ``intended``, in a safe order:
    deletes (job_table first, so a job stops before its tables go), modifies, inserts (multicast
    groups and tables first, job_table last, so a job starts only once everything is there)."""
    want = intended.restricted(jobs, base)
    deletes: list[Change] = []
    modifies: list[Change] = []
    inserts: list[Change] = []
    def compare(wanted: dict, present: dict, everything: dict, same) -> None:
        for k, item in wanted.items():
            have = present.get(k)
            if have is None:
                inserts.append(Change(Update.INSERT, item))
            elif not same(have, item):
                modifies.append(Change(Update.MODIFY, item))
        for k, item in present.items():
            # intended state outside the scope (another job's, or the base) is never deleted
            if k not in everything and (prune or _in_scope(item.owner, jobs, base)):
                deletes.append(Change(Update.DELETE, item))

    compare(want.entries, actual.entries, intended.entries, lambda a, b: a.value == b.value)
    for t, d in want.defaults.items():
        if actual.defaults.get(t) != d:
            modifies.append(Change(Update.MODIFY, d))
    compare(want.groups, actual.groups, intended.groups, lambda a, b: a.replicas == b.replicas)

    order = {t: i for i, t in enumerate(WRITE_ORDER)}

    def rank(c: Change) -> tuple[int, tuple]:
        if isinstance(c.item, McGroup):
            return (-1, (c.item.group_id,))
        if isinstance(c.item, DefaultAction):
            return (-2, (c.item.table,))
        return (order[c.item.table], c.item.match)

    inserts.sort(key=rank)
    modifies.sort(key=rank)
    deletes.sort(key=rank, reverse=True)
    return deletes + modifies + inserts


def conflicts(
    intended: SwitchState, actual: SwitchState, changes: list[Change], jobs: set[int] | None
) -> list[str]:
    """State of jobs outside the scope that this deployment would overwrite or collide with:
    a rid it uses, a ``stats_idx`` or an overlapping register region.  Entries about to be
    deleted do not count."""
    deleted = {c.item.key for c in changes if c.kind == Update.DELETE and isinstance(c.item, TableEntry)}
    want = intended.restricted(jobs, base=False)
    out: list[str] = []
    for k, e in want.entries.items():
        have = actual.entries.get(k)
        if have is not None and e.table == T_REWRITE and have.owner is not None and have.owner != e.owner:
            out.append(
                f"{actual.switch}: rid {e.match_value('egress_rid')} of job {e.owner} "
                f"is used by job {have.owner}"
            )
    others = [e for k, e in actual.entries.items() if e.table == T_JOB and k not in deleted
              and k not in want.entries and e.owner is not None]
    for e in (e for e in want.entries.values() if e.table == T_JOB):
        lo, hi = e.param("base"), e.param("base") + 2 * e.param("window")
        for o in others:
            if o.param("stats_idx") == e.param("stats_idx"):
                out.append(
                    f"{actual.switch}: stats_idx {e.param('stats_idx')} of job {e.owner} "
                    f"is used by job {o.owner}"
                )
            olo, ohi = o.param("base"), o.param("base") + 2 * o.param("window")
            if lo < ohi and olo < hi:
                out.append(f"{actual.switch}: register region {lo}..{hi - 1} of job {e.owner} overlaps "
                           f"{olo}..{ohi - 1} of job {o.owner}")
    return out


def switch_changes(intended: SwitchState, actual: SwitchState, jobs: set[int] | None, base: bool,
                   prune: bool) -> tuple[list[Change], list[str]]:
    """The changes for one switch and, unless ``prune``, the conflicts they would cause (a
    switch with conflicts is not written)."""
    changes = diff(intended, actual, jobs, base, prune)
    return changes, ([] if prune else conflicts(intended, actual, changes, jobs))


def epochs_to_deploy(actual: Mapping[str, SwitchState], placement: Placement,
            fallback: Mapping[int, int] | None) -> dict[int, int]:
    """job -> epoch to deploy: what the switches hold, else ``fallback``, else 0."""
    try:
        held = switch_epochs(actual)
    except ValueError as err:
        raise PlanError(f"{err}; run `dhc-ctl jobs reset --job J` to give the job one epoch") from None
    return {jp.job_id: held.get(jp.job_id, (fallback or {}).get(jp.job_id, 0)) for jp in placement.jobs}


def addressed_switches(
    topo: Topology, placement: Placement | None, addrs: Mapping[str, object]
) -> tuple[list[str], list[str]]:
    """The topology's switches with an address (to deploy) and without one (skipped); a
    ``PlanError`` if ``addrs`` names a switch the topology lacks or an aggregator has no address."""
    unknown = sorted(set(addrs) - set(topo.switches))
    if unknown:
        raise PlanError(
            f"switch address map names switches not in topology {topo.name}: {', '.join(unknown)}"
        )
    aggs = {a.switch for jp in (placement.jobs if placement else ()) for a in jp.aggregators}
    missing = sorted(aggs - set(addrs))
    if missing:
        raise PlanError(f"no P4Runtime address for aggregating switch(es) {', '.join(missing)} "
                        "(give grpc_port in the topology or --switch-addr-map)")
    return [s for s in topo.switches if s in addrs], [s for s in topo.switches if s not in addrs]

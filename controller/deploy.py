"""Make switches hold the intended state, idempotently, touching only what a deployment owns.

For every switch: read what it holds (one wildcard Read per managed table, the switch_config
default, the multicast groups), diff against the intended state, write only the difference
(INSERT missing, MODIFY changed, DELETE extra).  Deploying twice writes nothing.

Ownership decides what may be deleted: entries of the job tables belong to the ``job_id`` in
their key, a multicast group to the job of the same id, a ``result_rewrite`` entry to the group
that replicates with its rid, everything else (forwarding, ``local_addr``, orphaned rewrites) to
the base configuration.  A deployment scoped to some jobs deletes extras only of those jobs (and
of the base when it deploys the base); ``prune`` deletes everything not intended.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from p4.v1 import p4runtime_pb2

from controller.deploy_errors import ConflictError, PlanError
from controller.entries import DEFAULT_MAX_JOBS, switch_epochs
from controller.intent import (
    BASE_TABLES,
    DEFAULT_TABLES,
    JOB_TABLES,
    WRITE_ORDER,
    DefaultAction,
    McGroup,
    SwitchState,
    TableEntry,
)
from controller.p4rt_client import MultiSwitchClient, PendingUpdate, SwitchAddress, SwitchConnection
from controller.p4rt_codec import P4InfoNames, group_from_proto, group_to_proto
from controller.pipeline import PipelineSource, SoftswitchBuild
from controller.placement import Placement
from controller.plan import DeploymentPlan
from controller.topology import Topology
from dhcwire.p4names import T_JOB, T_REWRITE

Update = p4runtime_pb2.Update
MANAGED_TABLES: tuple[str, ...] = WRITE_ORDER


@dataclass(frozen=True)
class Change:
    """One difference to apply: INSERT/MODIFY/DELETE of an entry, default action or group."""

    kind: int  # Update.INSERT / MODIFY / DELETE
    item: TableEntry | DefaultAction | McGroup

    def describe(self) -> str:
        return self.item.describe()


@dataclass
class SwitchReport:
    switch: str
    pipeline_pushed: bool = False
    inserted: int = 0
    modified: int = 0
    deleted: int = 0

    @property
    def writes(self) -> int:
        return self.inserted + self.modified + self.deleted


@dataclass
class DeployReport:
    switches: dict[str, SwitchReport] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # topology switches without an address
    epochs: dict[int, int] = field(default_factory=dict)  # job -> session epoch deployed
    #: what was deployed (with ``epochs``): the job manifest is read off it
    plan: DeploymentPlan | None = field(default=None, repr=False, compare=False)

    @property
    def writes(self) -> int:
        return sum(r.writes for r in self.switches.values())

    def to_dict(self) -> dict:
        return {
            "writes": self.writes,
            "skipped": self.skipped,
            "epochs": self.epochs,
            "switches": {
                n: {
                    "pipeline_pushed": r.pipeline_pushed,
                    "inserted": r.inserted,
                    "modified": r.modified,
                    "deleted": r.deleted,
                }
                for n, r in self.switches.items()
            },
        }


# ---------------------------------------------------------------- reading
def _read_queries(names: P4InfoNames) -> list[p4runtime_pb2.Entity]:
    out = [p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=names.table(t).id))
           for t in MANAGED_TABLES]
    out += [p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=names.table(t).id,
                                                                       is_default_action=True))
            for t in DEFAULT_TABLES]
    pre = p4runtime_pb2.PacketReplicationEngineEntry()
    pre.multicast_group_entry.multicast_group_id = 0  # wildcard
    out.append(p4runtime_pb2.Entity(packet_replication_engine_entry=pre))
    return out


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


def read_state(conn: SwitchConnection) -> SwitchState:
    """Everything the controller manages on one switch, as it is now, with owners."""
    names = conn.names or conn.load_p4info()
    st = SwitchState(conn.name)
    for ent in conn.read(_read_queries(names)):
        kind = ent.WhichOneof("entity")
        if kind == "table_entry":
            if ent.table_entry.is_default_action:
                d = names.default_from_proto(ent.table_entry)
                st.defaults[d.table] = d
            else:
                e = names.entry_from_proto(ent.table_entry)
                st.entries[e.key] = e
        elif kind == "packet_replication_engine_entry" and ent.packet_replication_engine_entry.HasField(
                "multicast_group_entry"):
            g = group_from_proto(ent.packet_replication_engine_entry)
            st.groups[g.group_id] = g
    return assign_owners(st)


# ---------------------------------------------------------------- diff
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


def to_updates(names: P4InfoNames, changes: list[Change]) -> list[PendingUpdate]:
    out = []
    for c in changes:
        item = c.item
        if isinstance(item, McGroup):
            ent = p4runtime_pb2.Entity(packet_replication_engine_entry=group_to_proto(item))
        elif isinstance(item, DefaultAction):
            ent = p4runtime_pb2.Entity(table_entry=names.default_to_proto(item))
        elif c.kind == Update.DELETE:
            ent = p4runtime_pb2.Entity(table_entry=names.key_to_proto(item))
        else:
            ent = p4runtime_pb2.Entity(table_entry=names.entry_to_proto(item))
        out.append(PendingUpdate(c.kind, ent, item.describe()))
    return out


def _apply(
    conn: SwitchConnection,
    intended: SwitchState,
    jobs: set[int] | None,
    base: bool,
    prune: bool,
    dry_run: bool = False,
    actual: SwitchState | None = None,
) -> tuple[SwitchReport, list[str]]:
    actual = actual if actual is not None else read_state(conn)
    changes = diff(intended, actual, jobs, base, prune)
    found = [] if prune else conflicts(intended, actual, changes, jobs)
    rep = SwitchReport(conn.name)
    if found:
        return rep, found
    if not dry_run:
        conn.write(to_updates(conn.names, changes))
    for c in changes:
        if c.kind == Update.INSERT:
            rep.inserted += 1
        elif c.kind == Update.MODIFY:
            rep.modified += 1
        else:
            rep.deleted += 1
    return rep, []


# ---------------------------------------------------------------- top level
def _epochs(actual: Mapping[str, SwitchState], placement: Placement,
            fallback: Mapping[int, int] | None) -> dict[int, int]:
    """job -> epoch to deploy: what the switches hold, else ``fallback``, else 0."""
    try:
        held = switch_epochs(actual)
    except ValueError as err:
        raise PlanError(f"{err}; run `dhc-ctl jobs reset --job J` to give the job one epoch") from None
    return {jp.job_id: held.get(jp.job_id, (fallback or {}).get(jp.job_id, 0)) for jp in placement.jobs}


def _targets(
    topo: Topology, placement: Placement | None, addrs: dict[str, SwitchAddress]
) -> tuple[list[str], list[str]]:
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


@contextmanager
def _session(client: MultiSwitchClient | None, addrs: Mapping[str, SwitchAddress], names: list[str],
             timeout: float) -> Iterator[MultiSwitchClient]:
    """The caller's client (left open), or a new one to ``names`` closed on exit."""
    if client is not None:
        yield client
        return
    with MultiSwitchClient({n: addrs[n] for n in names}, timeout=timeout) as own:
        yield own


def deploy(
    topo: Topology,
    placement: Placement,
    addrs: dict[str, SwitchAddress],
    *,
    jobs: set[int] | None = None,
    base: bool = True,
    pipeline: bool = True,
    prune: bool = False,
    source: PipelineSource | None = None,
    program: str | Path | None = None,
    max_jobs: int = DEFAULT_MAX_JOBS,
    client: MultiSwitchClient | None = None,
    dry_run: bool = False,
    timeout: float = 10.0,
    epochs: Mapping[int, int] | None = None,
) -> DeployReport:
    """Bring every addressed switch to the intended state of ``jobs`` (None: all placed jobs) and,
    if ``base``, its forwarding.  ``pipeline``: first push the program where it is not already
    running (a push wipes the switch's entries, which the diff then restores); ``source`` gives its
    P4Info and device config (default: ``program``, else p4src/dhc.p4, built by the softswitch
    front end; BMv2: :class:`controller.pipeline.PipelineFiles` with p4c's output).  Raises
    ConflictError (nothing written anywhere) if other jobs' state would be overwritten.  Each job
    keeps the session epoch its switches hold; ``epochs`` (job -> epoch, e.g. the manifest's) is
    used for jobs no switch holds yet.  The report carries the plan deployed (``report.plan``)."""
    plan = DeploymentPlan.build(topo, placement, max_jobs)
    if jobs is not None and jobs - plan.job_ids:
        raise PlanError(f"job(s) {sorted(jobs - plan.job_ids)} are not in the placement "
                        f"(placed: {sorted(plan.job_ids)})")
    # "all jobs" means the placement's jobs: state of jobs it does not know is left alone
    jobs = jobs if jobs is not None else plan.job_ids
    names, skipped = _targets(topo, placement, addrs)
    report = DeployReport(skipped=skipped)
    configs = {}
    # a bad program file fails before any switch is contacted -- in a dry run too, which checks
    # what a real run checks and only leaves out the writes
    if pipeline:
        source = source or (SoftswitchBuild(Path(program)) if program is not None else SoftswitchBuild())
        configs = {n: source.config(plan.lanes, topo.switches[n].register_slots, max_jobs) for n in names}
    with _session(client, addrs, names, timeout) as client:
        if pipeline and not dry_run:
            pushed = client.run(
                lambda c: c.set_pipeline(configs[c.name].p4info, configs[c.name].device_config), only=names
            )
        else:
            client.run(lambda c: c.names or c.load_p4info(), only=names)
            pushed = {}
        # the epochs the switches hold stay (a redeploy must not reset a job's session); a job no
        # switch holds (e.g. its only switch restarted) takes the caller's (the manifest's)
        actual = client.run(read_state, only=names)
        report.epochs = _epochs(actual, placement, epochs)
        report.plan = plan = plan.with_epochs(report.epochs)
        intended = plan.states
        # first pass computes everything without writing, so a conflict anywhere writes nothing
        checks = client.run(lambda c: _apply(c, intended[c.name], jobs, base, prune, dry_run=True,
                                             actual=actual[c.name]), only=names)
        found = [msg for _, msgs in checks.values() for msg in msgs]
        if found:
            raise ConflictError(found)
        if not dry_run:
            results = client.run(lambda c: _apply(c, intended[c.name], jobs, base, prune,
                                                  actual=actual[c.name])[0], only=names)
        else:
            results = {n: rep for n, (rep, _) in checks.items()}
        for n in names:
            results[n].pipeline_pushed = bool(pushed.get(n))
            report.switches[n] = results[n]
    return report


def remove_job(topo: Topology, addrs: dict[str, SwitchAddress], job_id: int, *,
               client: MultiSwitchClient | None = None, timeout: float = 10.0) -> DeployReport:
    """Delete exactly ``job_id``'s state (its job/level/child entries, its multicast group and the
    rewrite entries of that group's rids) from every addressed switch; nothing else changes."""
    names, skipped = _targets(topo, None, addrs)
    report = DeployReport(skipped=skipped)
    with _session(client, addrs, names, timeout) as client:
        results = client.run(lambda c: _apply(c, SwitchState(c.name), {job_id}, False, False)[0], only=names)
        report.switches.update(results)
    return report


__all__ = ["BASE_TABLES", "Change", "DeployReport", "SwitchReport", "assign_owners", "conflicts",
           "deploy", "diff", "read_state", "remove_job", "to_updates"]

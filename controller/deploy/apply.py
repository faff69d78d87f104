"""Make switches hold the intended state over P4Runtime, idempotently: the I/O half of deploying.

For every switch: read what it holds (one wildcard Read per managed table, the switch_config
default, the multicast groups), diff against the intended state (``controller.deploy.state_diff``,
pure), write only the difference (INSERT missing, MODIFY changed, DELETE extra).  Deploying twice
writes nothing.  Which state a deployment may delete is decided by the diff (see its docstring).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from p4.v1 import p4runtime_pb2

from controller.deploy.errors import ConflictError, PlanError
from controller.deploy.state_diff import (
    Change,
    SwitchReport,
    Update,
    addressed_switches,
    assign_owners,
    epochs_to_deploy,
    switch_changes,
)
from controller.entries import DEFAULT_MAX_JOBS
from controller.intent import DEFAULT_TABLES, WRITE_ORDER, DefaultAction, McGroup, SwitchState
from controller.p4rt_client import MultiSwitchClient, PendingUpdate, SwitchAddress, SwitchConnection
from controller.p4rt_codec import P4InfoNames, group_from_proto, group_to_proto
from controller.pipeline import PipelineSource, SoftswitchBuild
from controller.placement import Placement
from controller.plan import DeploymentPlan
from controller.topology import Topology

MANAGED_TABLES: tuple[str, ...] = WRITE_ORDER


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


# ---------------------------------------------------------------- writing
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
    changes, found = switch_changes(intended, actual, jobs, base, prune)
    if found:
        return SwitchReport(conn.name), found
    if not dry_run:
        conn.write(to_updates(conn.names, changes))
    return SwitchReport.of_changes(conn.name, changes), []


# ---------------------------------------------------------------- top level
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
    names, skipped = addressed_switches(topo, placement, addrs)
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
        report.epochs = epochs_to_deploy(actual, placement, epochs)
        report.plan = plan = plan.with_epochs(report.epochs)
        results = _apply_everywhere(client, names, plan.states, actual, jobs, base, prune, dry_run)
        for n in names:
            results[n].pipeline_pushed = bool(pushed.get(n))
            report.switches[n] = results[n]
    return report



def _apply_everywhere(client: MultiSwitchClient, names: list[str], intended: Mapping[str, SwitchState],
                      actual: Mapping[str, SwitchState], jobs: set[int], base: bool, prune: bool,
                      dry_run: bool) -> dict[str, SwitchReport]:
    """Diff and apply on every switch in two passes: the first computes everything without
    writing, so a conflict anywhere (ConflictError) writes nothing anywhere."""
    checks = client.run(lambda c: _apply(c, intended[c.name], jobs, base, prune, dry_run=True,
                                         actual=actual[c.name]), only=names)
    found = [msg for _, msgs in checks.values() for msg in msgs]
    if found:
        raise ConflictError(found)
    if dry_run:
        return {n: rep for n, (rep, _) in checks.items()}
    return client.run(lambda c: _apply(c, intended[c.name], jobs, base, prune,
                                       actual=actual[c.name])[0], only=names)

def remove_job(topo: Topology, addrs: dict[str, SwitchAddress], job_id: int, *,
               client: MultiSwitchClient | None = None, timeout: float = 10.0) -> DeployReport:
    """Delete exactly ``job_id``'s state (its job/level/child entries, its multicast group and the
    rewrite entries of that group's rids) from every addressed switch; nothing else changes."""
    names, skipped = addressed_switches(topo, None, addrs)
    report = DeployReport(skipped=skipped)
    with _session(client, addrs, names, timeout) as client:
        results = client.run(lambda c: _apply(c, SwitchState(c.name), {job_id}, False, False)[0], only=names)
        report.switches.update(results)
    return report


__all__ = ["Change", "DeployReport", "SwitchReport", "deploy", "read_state", "remove_job", "to_updates"]

"""``dhc-ctl status``: per switch and job, the data plane's counters (P4Runtime counter reads).

The job a ``stats_idx`` cell belongs to comes from the switch's own ``job_table`` (read back),
so the status reflects what the switch runs, not what a placement file says.  Registers are not
read (BMv2's simple_switch_grpc cannot), only counters.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from p4.v1 import p4runtime_pb2
from rich.console import Console
from rich.table import Table

from controller.deploy.apply import read_state
from controller.deploy.errors import SwitchError
from controller.p4rt_client import MultiSwitchClient, SwitchAddress, SwitchConnection
from dhcwire.addresses import int2ip
from dhcwire.p4names import C_DROP, C_EGRESS_DROP, DROP_REASONS, JOB_COUNTERS, T_JOB


@dataclass
class JobStatus:
    job_id: int
    role: str            # "root" | "aggregator"
    fan_in: int
    own_addr: str
    parent_addr: str | None
    contributions: int = 0
    completions: int = 0
    duplicates: int = 0
    results: int = 0


@dataclass
class SwitchStatus:
    switch: str
    addr: str
    jobs: list[JobStatus] = field(default_factory=list)
    drops: dict[str, int] = field(default_factory=dict)  # reason name -> packets
    entries: int = 0
    error: str | None = None


def _counter_cells(conn: SwitchConnection, name: str) -> dict[int, tuple[int, int]]:
    cid, _ = conn.names.counter(name)
    q = p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=cid))
    return {e.counter_entry.index.index: (e.counter_entry.data.packet_count, e.counter_entry.data.byte_count)
            for e in conn.read([q]) if e.WhichOneof("entity") == "counter_entry"}


def switch_status(conn: SwitchConnection) -> SwitchStatus:
    conn.names or conn.load_p4info()
    state = read_state(conn)
    st = SwitchStatus(conn.name, conn.address.addr, entries=len(state.entries))
    cells = {key: _counter_cells(conn, cname) for key, cname in JOB_COUNTERS.items()}
    for e in sorted(state.table(T_JOB), key=lambda e: e.match_value("job_id")):
        p = dict(e.params)
        js = JobStatus(e.match_value("job_id"), "root" if p["is_root"] else "aggregator", p["fan_in"],
                       int2ip(p["own_addr"]), int2ip(p["parent_addr"]) if not p["is_root"] else None)
        for key in JOB_COUNTERS:
            setattr(js, key, cells[key].get(p["stats_idx"], (0, 0))[0])
        st.jobs.append(js)
    for cname in (C_DROP, C_EGRESS_DROP):
        for idx, (pkts, _) in sorted(_counter_cells(conn, cname).items()):
            if pkts and idx:
                reason = DROP_REASONS.get(idx, f"reason_{idx}")
                st.drops[reason] = st.drops.get(reason, 0) + pkts
    return st


def collect(addrs: dict[str, SwitchAddress], timeout: float = 5.0) -> list[SwitchStatus]:
    """Status of every switch; an unreachable switch is reported with its error, not raised.
    Connects read-only: no arbitration, so a running deployment's primary is not disturbed."""
    out: dict[str, SwitchStatus] = {}

    def one(conn: SwitchConnection) -> SwitchStatus:
        try:
            conn.open_channel()
            return switch_status(conn)
        except SwitchError as err:
            return SwitchStatus(conn.name, conn.address.addr, error=str(err))
        finally:
            conn.close()

    client = MultiSwitchClient(addrs, timeout=timeout)
    out = client.run(one)
    return [out[n] for n in addrs]


def to_json(statuses: list[SwitchStatus]) -> dict:
    return {"switches": [asdict(s) for s in statuses]}


def render(statuses: list[SwitchStatus], console: Console) -> None:
    jobs = Table(title="per-job counters (packets)")
    for col in ("switch", "job", "role", "fan-in", "contrib", "complete", "dup", "results"):
        jobs.add_column(col, justify="right" if col not in ("switch", "role") else "left")
    drops = Table(title="drops (packets)")
    for col in ("switch", "entries", "drops"):
        drops.add_column(col)
    for s in statuses:
        if s.error:
            drops.add_row(s.switch, "-", f"[red]{s.error}[/red]")
            continue
        for j in s.jobs:
            jobs.add_row(
                s.switch,
                str(j.job_id),
                j.role,
                str(j.fan_in),
                str(j.contributions),
                str(j.completions),
                str(j.duplicates),
                str(j.results),
            )
        drops.add_row(s.switch, str(s.entries), ", ".join(f"{k}: {v}" for k, v in s.drops.items()) or "none")
    console.print(jobs)
    console.print(drops)

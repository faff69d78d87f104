"""``dhc-ctl jobs reset``: move a job to a fresh session epoch on every switch that holds it.

A session that stops midway (a killed worker or switch, mismatched tensors, a stray frame) leaves
the job's slot registers mid-lap.  BMv2 cannot write registers over P4Runtime, so the state is made
unreachable instead of cleaned: the switch accepts DATA/RESULT only of the job's current epoch
(``epoch_table``), and a slot whose stored epoch differs is empty to the first writer of the new one
(``docs/recovery.md``).  Reset = read the current epoch entry from every switch of the job, install
``(epoch + 1) mod 256`` (insert the new entry first, then delete the old one, so the job never has
no entry), and let the caller rewrite the manifest so agents stamp the new epoch.
"""

from __future__ import annotations

from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field

from p4.v1 import p4runtime_pb2

from controller.deploy.apply import read_state, to_updates
from controller.deploy.errors import PlanError
from controller.deploy.state_diff import Change
from controller.entries import epoch_entry
from controller.intent import SwitchState, TableEntry
from controller.p4rt_client import MultiSwitchClient, SwitchAddress
from dhcwire.header import MAX_EPOCH
from dhcwire.p4names import T_EPOCH

Update = p4runtime_pb2.Update
ORDER = "insert the new epoch entry, then delete the old one (no moment without an entry)"


@dataclass
class ResetReport:
    job: int
    new_epoch: int
    #: switch -> epochs it held for the job before (normally one; none if the entry was missing)
    before: dict[str, list[int]] = field(default_factory=dict)
    order: str = ORDER
    manifest: str | None = None

    def to_dict(self) -> dict:
        return {"job": self.job, "new_epoch": self.new_epoch, "before": self.before, "order": self.order,
                "manifest": self.manifest}


def _held(state: SwitchState, job: int) -> list[TableEntry]:
    return sorted((e for e in state.table(T_EPOCH) if e.match_value("job_id") == job),
                  key=lambda e: e.match_value("epoch"))


def next_epoch(held: list[int], avoid: set[int] = frozenset()) -> int:
    """The epoch after the one most switches hold, skipping every epoch a switch still holds and
    ``avoid`` (the manifest's, which agents of the failed session may still send)."""
    taken = set(held) | set(avoid)
    current = Counter(held).most_common(1)[0][0] if held else max(avoid, default=0)
    new = (current + 1) % (MAX_EPOCH + 1)
    while new in taken:
        new = (new + 1) % (MAX_EPOCH + 1)
    return new


def _changes(state: SwitchState, job: int, new: int) -> list[Change]:
    old = [e for e in _held(state, job) if e.match_value("epoch") != new]
    fresh = [] if any(e.match_value("epoch") == new for e in _held(state, job)) else [epoch_entry(job, new)]
    return [Change(Update.INSERT, e) for e in fresh] + [Change(Update.DELETE, e) for e in old]


def reset_job(addrs: dict[str, SwitchAddress], job: int, *, avoid: set[int] = frozenset(),
              client: MultiSwitchClient | None = None, timeout: float = 10.0) -> ResetReport:
    """Install a fresh epoch for ``job`` on every addressed switch that holds the job's state
    (never one in ``avoid``)."""
    opened = MultiSwitchClient(addrs, timeout=timeout) if client is None else nullcontext(client)
    with opened as client:  # a client we open is connected here and closed on the way out
        states = client.run(read_state)
        holders = {n: st for n, st in states.items() if job in st.jobs()}
        if not holders:
            raise PlanError(f"job {job} is not deployed on any switch ({', '.join(sorted(states))}): "
                            "nothing to reset (deploy it first)")
        before = {n: [e.match_value("epoch") for e in _held(st, job)] for n, st in sorted(holders.items())}
        new = next_epoch([ep for eps in before.values() for ep in eps], avoid)
        names = sorted(holders)
        client.run(lambda c: c.write(to_updates(c.names, _changes(holders[c.name], job, new))), only=names)
    return ResetReport(job, new, before)

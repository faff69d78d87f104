"""Intended (and read-back) switch state as plain, hashable data.

The deployment compares what a switch *should* hold with what it *does* hold, so both sides use
the same representation: P4Info names and Python ints, never P4Runtime ids or byte strings.  Each
piece of state carries its ``owner``: a job id, or ``None`` for the switch's base configuration
(forwarding), which is what scopes ``jobs remove`` and scoped deletes.

P4Info names come from :mod:`dhcwire.p4names`, the one place Python spells them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dhcwire.p4names import (
    T_ARP,
    T_CHILD,
    T_EPOCH,
    T_HOST_PORT,
    T_HOST_SOURCE,
    T_JOB,
    T_LEVEL,
    T_LOCAL,
    T_LPM,
    T_REWRITE,
    T_SWITCH,
)

#: Tables whose entries the controller installs; ``job_id`` in the key names the owning job.
JOB_TABLES: tuple[str, ...] = (T_JOB, T_EPOCH, T_LEVEL, T_CHILD)
BASE_TABLES: tuple[str, ...] = (T_LOCAL, T_HOST_SOURCE, T_HOST_PORT, T_ARP, T_LPM)
#: Every table with controller-installed entries, in the order inserts are applied
#: (a job becomes live when its job_table entry appears, so that goes last; a host's source goes in
#: before its port is marked a host port, or the host's traffic would be dropped as spoofed between).
WRITE_ORDER: tuple[str, ...] = (T_LOCAL, T_HOST_SOURCE, T_HOST_PORT, T_ARP, T_LPM, T_REWRITE, T_LEVEL,
                                T_CHILD, T_EPOCH, T_JOB)
#: Tables whose default action the controller sets.
DEFAULT_TABLES: tuple[str, ...] = (T_SWITCH,)


@dataclass(frozen=True, order=True)
class MatchField:
    """One match field: ``prefix_len`` is None for exact, the prefix length for lpm."""

    name: str
    value: int
    prefix_len: int | None = None

    def __str__(self) -> str:
        return f"{self.name}={self.value:#x}" + (f"/{self.prefix_len}" if self.prefix_len is not None else "")


@dataclass(frozen=True)
class TableEntry:
    """A table entry.  Identity (what P4Runtime keys it by) is ``key``; the rest is its value."""

    table: str
    match: tuple[MatchField, ...]
    action: str
    params: tuple[tuple[str, int], ...] = ()
    owner: int | None = field(default=None, compare=False)

    @property
    def key(self) -> tuple[str, tuple[MatchField, ...]]:
        return (self.table, self.match)

    @property
    def value(self) -> tuple[str, tuple[tuple[str, int], ...]]:
        return (self.action, self.params)

    def param(self, name: str) -> int:
        return dict(self.params)[name]

    def match_value(self, name: str) -> int:
        for m in self.match:
            if m.name == name:
                return m.value
        raise KeyError(f"{self.table} has no match field {name}")

    def describe(self) -> str:
        keys = ", ".join(str(m) for m in self.match)
        args = ", ".join(f"{k}={v:#x}" for k, v in self.params)
        return f"{self.table} [{keys}] -> {self.action}({args})"


def entry(
    table: str,
    match: dict[str, int | tuple[int, int]],
    action: str,
    params: dict[str, int] | None = None,
    owner: int | None = None,
) -> TableEntry:
    """Build a TableEntry from dicts; an lpm field is given as ``(value, prefix_len)``."""
    fields = []
    for name, v in match.items():
        fields.append(MatchField(name, v[0], v[1]) if isinstance(v, tuple) else MatchField(name, v))
    return TableEntry(table, tuple(sorted(fields)), action, tuple(sorted((params or {}).items())), owner)


@dataclass(frozen=True)
class DefaultAction:
    """The default action of a keyless/config table (only ``switch_config`` here)."""

    table: str
    action: str
    params: tuple[tuple[str, int], ...] = ()

    def describe(self) -> str:
        args = ", ".join(f"{k}={v:#x}" for k, v in self.params)
        return f"{self.table} default -> {self.action}({args})"


@dataclass(frozen=True)
class McGroup:
    """A PRE multicast group: replicas ``(port, rid)`` sorted, so equal groups compare equal."""

    group_id: int
    replicas: tuple[tuple[int, int], ...]
    owner: int | None = field(default=None, compare=False)

    def describe(self) -> str:
        reps = ", ".join(f"port {p} rid {r}" for p, r in self.replicas)
        return f"multicast group {self.group_id} [{reps}]"


@dataclass
class SwitchState:
    """Everything the controller manages on one switch, intended or read back."""

    switch: str
    entries: dict[tuple, TableEntry] = field(default_factory=dict)
    defaults: dict[str, DefaultAction] = field(default_factory=dict)
    groups: dict[int, McGroup] = field(default_factory=dict)

    def add(self, e: TableEntry) -> None:
        old = self.entries.get(e.key)
        if old is not None and old.value != e.value:
            raise ValueError(f"{self.switch}: conflicting entries for the same key: {old.describe()} "
                             f"vs {e.describe()}")
        self.entries[e.key] = e

    def add_group(self, g: McGroup) -> None:
        if g.group_id in self.groups:
            raise ValueError(f"{self.switch}: multicast group {g.group_id} allocated twice")
        self.groups[g.group_id] = g

    def table(self, name: str) -> list[TableEntry]:
        return sorted((e for e in self.entries.values() if e.table == name), key=lambda e: e.match)

    def jobs(self) -> set[int]:
        return {e.owner for e in self.entries.values() if e.owner is not None} | {
            g.owner for g in self.groups.values() if g.owner is not None}

    def restricted(self, jobs: set[int] | None, base: bool) -> SwitchState:
        """The part of this state owned by ``jobs`` (None = every job), plus the base if ``base``."""
        def keep(owner: int | None) -> bool:
            return base if owner is None else (jobs is None or owner in jobs)

        return SwitchState(self.switch,
                           {k: e for k, e in self.entries.items() if keep(e.owner)},
                           dict(self.defaults) if base else {},
                           {k: g for k, g in self.groups.items() if keep(g.owner)})

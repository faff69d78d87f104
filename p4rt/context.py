"""One index of a P4Info, by id and by name (after p4runtime-shell's ``context.py``).

P4Runtime messages name entities by numeric id; people and the controller's intended state name
them by P4Info name.  ``P4InfoIndex`` is built once per P4Info and answers both: the P4Runtime
server resolves the ids of requests with it, the controller the names of its entries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2


@dataclass(frozen=True)
class MatchFieldInfo:
    id: int
    name: str
    bitwidth: int
    match_type: int  # p4info_pb2.MatchField.MatchType


@dataclass(frozen=True)
class ParamInfo:
    id: int
    name: str
    bitwidth: int


@dataclass
class P4InfoAction:
    id: int
    name: str
    params: dict[int, ParamInfo] = field(default_factory=dict)

    def param_by_name(self, name: str) -> ParamInfo:
        for p in self.params.values():
            if p.name == name:
                return p
        raise KeyError(name)


@dataclass
class P4InfoTable:
    id: int
    name: str
    fields: dict[int, MatchFieldInfo]
    action_ids: set[int]
    default_only_ids: set[int]
    table_only_ids: set[int]
    const_default_action_id: int
    is_const: bool
    direct_counter_id: int | None
    size: int
    implementation_id: int = 0   # its action profile / selector (0: a direct table)
    direct_meter_id: int | None = None

    @property
    def needs_priority(self) -> bool:
        """P4Runtime: priority is required iff a ternary, range or optional field exists."""
        kinds = {f.match_type for f in self.fields.values()}
        return bool(kinds & {p4info_pb2.MatchField.TERNARY, p4info_pb2.MatchField.RANGE,
                             p4info_pb2.MatchField.OPTIONAL})

    def field_by_name(self, name: str) -> MatchFieldInfo:
        for f in self.fields.values():
            if f.name == name:
                return f
        raise KeyError(name)


@dataclass(frozen=True)
class CounterInfo:
    id: int
    name: str
    size: int
    unit: int


@dataclass(frozen=True)
class P4InfoProfile:
    id: int
    name: str
    with_selector: bool
    table_ids: tuple[int, ...]


@dataclass(frozen=True)
class MeterInfo:
    id: int
    name: str
    size: int


@dataclass(frozen=True)
class PacketMetadataField:
    id: int
    name: str
    bitwidth: int


@dataclass
class P4InfoIndex:
    """Lookup tables built once per pipeline from its P4Info: every entity by id, tables,
    actions and counters by name too.  A lookup of an unknown id raises ``missing(message)``
    (``KeyError`` by default; the P4Runtime server makes it INVALID_ARGUMENT)."""

    p4info: p4info_pb2.P4Info
    missing: Callable[[str], Exception] = KeyError
    tables: dict[int, P4InfoTable] = field(default_factory=dict)
    actions: dict[int, P4InfoAction] = field(default_factory=dict)
    counters: dict[int, CounterInfo] = field(default_factory=dict)
    direct_counters: dict[int, int] = field(default_factory=dict)  # direct counter id -> table id
    registers: dict[int, str] = field(default_factory=dict)
    meters: dict[int, MeterInfo] = field(default_factory=dict)
    direct_meters: dict[int, int] = field(default_factory=dict)  # direct meter id -> table id
    packet_metadata: dict[str, list[PacketMetadataField]] = field(default_factory=dict)
    table_by_name: dict[str, int] = field(default_factory=dict)
    action_by_name: dict[str, int] = field(default_factory=dict)
    profiles: dict[int, P4InfoProfile] = field(default_factory=dict)
    counter_by_name: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(cls, p4info: p4info_pb2.P4Info,
              missing: Callable[[str], Exception] = KeyError) -> P4InfoIndex:
        idx = cls(p4info=p4info, missing=missing)
        for a in p4info.actions:
            idx.actions[a.preamble.id] = P4InfoAction(
                a.preamble.id, a.preamble.name,
                {p.id: ParamInfo(p.id, p.name, p.bitwidth) for p in a.params})
            idx.action_by_name[a.preamble.name] = a.preamble.id
        direct_of_table: dict[int, int] = {}
        for dc in p4info.direct_counters:
            idx.direct_counters[dc.preamble.id] = dc.direct_table_id
            direct_of_table[dc.direct_table_id] = dc.preamble.id
        meter_of_table: dict[int, int] = {}
        for dm in p4info.direct_meters:
            idx.direct_meters[dm.preamble.id] = dm.direct_table_id
            meter_of_table[dm.direct_table_id] = dm.preamble.id
        for t in p4info.tables:
            for rid in t.direct_resource_ids:  # the table's own list links it too
                if rid in idx.direct_counters:
                    idx.direct_counters[rid] = t.preamble.id
                    direct_of_table[t.preamble.id] = rid
                if rid in idx.direct_meters:
                    idx.direct_meters[rid] = t.preamble.id
                    meter_of_table[t.preamble.id] = rid
            scopes = {ref.id: ref.scope for ref in t.action_refs}
            idx.tables[t.preamble.id] = P4InfoTable(
                id=t.preamble.id, name=t.preamble.name,
                fields={m.id: MatchFieldInfo(m.id, m.name, m.bitwidth, m.match_type) for m in t.match_fields},
                action_ids=set(scopes),
                default_only_ids={i for i, s in scopes.items() if s == p4info_pb2.ActionRef.DEFAULT_ONLY},
                table_only_ids={i for i, s in scopes.items() if s == p4info_pb2.ActionRef.TABLE_ONLY},
                const_default_action_id=t.const_default_action_id,
                is_const=t.is_const_table,
                direct_counter_id=direct_of_table.get(t.preamble.id),
                size=t.size,
                implementation_id=t.implementation_id,
                direct_meter_id=meter_of_table.get(t.preamble.id),
            )
            idx.table_by_name[t.preamble.name] = t.preamble.id
        for ap in p4info.action_profiles:
            idx.profiles[ap.preamble.id] = P4InfoProfile(ap.preamble.id, ap.preamble.name, ap.with_selector,
                                                       tuple(ap.table_ids))
        for c in p4info.counters:
            idx.counters[c.preamble.id] = CounterInfo(c.preamble.id, c.preamble.name, c.size, c.spec.unit)
            idx.counter_by_name[c.preamble.name] = c.preamble.id
        for r in p4info.registers:
            idx.registers[r.preamble.id] = r.preamble.name
        for m in p4info.meters:
            idx.meters[m.preamble.id] = MeterInfo(m.preamble.id, m.preamble.name, m.size)
        for cpm in p4info.controller_packet_metadata:
            idx.packet_metadata[cpm.preamble.name] = [
                PacketMetadataField(m.id, m.name, m.bitwidth) for m in cpm.metadata]
        return idx

    def table(self, table_id: int) -> P4InfoTable:
        try:
            return self.tables[table_id]
        except KeyError:
            raise self.missing(f"unknown table id {table_id}") from None

    def action(self, action_id: int) -> P4InfoAction:
        try:
            return self.actions[action_id]
        except KeyError:
            raise self.missing(f"unknown action id {action_id}") from None

    def profile(self, profile_id: int) -> P4InfoProfile:
        try:
            return self.profiles[profile_id]
        except KeyError:
            raise self.missing(f"unknown action profile id {profile_id}") from None

    def meter(self, meter_id: int) -> MeterInfo:
        try:
            return self.meters[meter_id]
        except KeyError:
            raise self.missing(f"unknown meter id {meter_id}") from None

    def counter(self, counter_id: int) -> CounterInfo:
        try:
            return self.counters[counter_id]
        except KeyError:
            raise self.missing(f"unknown counter id {counter_id}") from None

    def table_named(self, name: str) -> P4InfoTable | None:
        tid = self.table_by_name.get(name)
        return None if tid is None else self.tables[tid]

    def action_named(self, name: str) -> P4InfoAction | None:
        aid = self.action_by_name.get(name)
        return None if aid is None else self.actions[aid]

    def counter_named(self, name: str) -> CounterInfo | None:
        cid = self.counter_by_name.get(name)
        return None if cid is None else self.counters[cid]


__all__ = ["CounterInfo", "MatchFieldInfo", "MeterInfo", "P4InfoAction", "P4InfoIndex", "P4InfoProfile",
           "P4InfoTable", "PacketMetadataField", "ParamInfo"]

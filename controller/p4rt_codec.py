"""Between the controller's name-based state (``controller.intent``) and P4Runtime messages.

P4Runtime speaks ids and byte strings; we speak P4Info names and ints.  ``P4InfoNames`` is the
dictionary, built from the P4Info the switch runs.  Byte strings are written in canonical form
(shortest big-endian, one zero byte for zero), as the P4Runtime spec asks; reads accept any form.
"""

from __future__ import annotations

from dataclasses import dataclass

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from controller.intent import DefaultAction, MatchField, McGroup, TableEntry


def encode(value: int, bitwidth: int, what: str) -> bytes:
    """Canonical P4Runtime byte string of ``value``; ValueError if it does not fit ``bitwidth``."""
    if value < 0 or (bitwidth and value >> bitwidth):
        raise ValueError(f"{what}: value {value:#x} does not fit in {bitwidth} bits")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    return int.from_bytes(data, "big")


@dataclass(frozen=True)
class _Field:
    id: int
    name: str
    bitwidth: int
    match_type: int


@dataclass(frozen=True)
class _Table:
    id: int
    name: str
    fields: dict[str, _Field]
    fields_by_id: dict[int, _Field]


@dataclass(frozen=True)
class _Action:
    id: int
    name: str
    params: dict[str, tuple[int, int]]       # name -> (id, bitwidth)
    params_by_id: dict[int, tuple[str, int]]


class P4InfoNames:
    """Name <-> id maps of one P4Info, with errors that name what is missing."""

    def __init__(self, p4info: p4info_pb2.P4Info):
        self.p4info = p4info
        self.tables: dict[str, _Table] = {}
        self.tables_by_id: dict[int, _Table] = {}
        for t in p4info.tables:
            fields = {f.name: _Field(f.id, f.name, f.bitwidth, f.match_type) for f in t.match_fields}
            tab = _Table(t.preamble.id, t.preamble.name, fields, {f.id: f for f in fields.values()})
            self.tables[tab.name] = tab
            self.tables_by_id[tab.id] = tab
        self.actions: dict[str, _Action] = {}
        self.actions_by_id: dict[int, _Action] = {}
        for a in p4info.actions:
            params = {p.name: (p.id, p.bitwidth) for p in a.params}
            act = _Action(a.preamble.id, a.preamble.name, params, {i: (n, w) for n, (i, w) in params.items()})
            self.actions[act.name] = act
            self.actions_by_id[act.id] = act
        self.counters: dict[str, tuple[int, int]] = {
            c.preamble.name: (c.preamble.id, c.size) for c in p4info.counters
        }
        self.counters_by_id: dict[int, str] = {i: n for n, (i, _) in self.counters.items()}

    def table(self, name: str) -> _Table:
        t = self.tables.get(name)
        if t is None:
            raise KeyError(f"the switch's P4Info has no table {name} (is the right program loaded?)")
        return t

    def action(self, name: str) -> _Action:
        a = self.actions.get(name)
        if a is None:
            raise KeyError(f"the switch's P4Info has no action {name}")
        return a

    def counter(self, name: str) -> tuple[int, int]:
        c = self.counters.get(name)
        if c is None:
            raise KeyError(f"the switch's P4Info has no counter {name}")
        return c

    # ------------------------------------------------------------ table entries
    def _action_proto(
        self, table: str, action: str, params: tuple[tuple[str, int], ...]
    ) -> p4runtime_pb2.Action:
        act = self.action(action)
        out = p4runtime_pb2.Action(action_id=act.id)
        given = dict(params)
        if set(given) != set(act.params):
            raise ValueError(f"{table}: action {action} takes {sorted(act.params)}, got {sorted(given)}")
        for name, (pid, width) in act.params.items():
            out.params.add(param_id=pid, value=encode(given[name], width, f"{action}.{name}"))
        return out

    def entry_to_proto(self, e: TableEntry) -> p4runtime_pb2.TableEntry:
        t = self.table(e.table)
        te = p4runtime_pb2.TableEntry(table_id=t.id)
        for m in e.match:
            f = t.fields.get(m.name)
            if f is None:
                raise KeyError(f"{e.table} has no match field {m.name} (fields: {sorted(t.fields)})")
            fm = te.match.add(field_id=f.id)
            if m.prefix_len is None:
                if f.match_type != p4info_pb2.MatchField.EXACT:
                    raise ValueError(f"{e.table}.{m.name} is not an exact field")
                fm.exact.value = encode(m.value, f.bitwidth, f"{e.table}.{m.name}")
            else:
                if f.match_type != p4info_pb2.MatchField.LPM:
                    raise ValueError(f"{e.table}.{m.name} is not an lpm field")
                fm.lpm.value = encode(m.value, f.bitwidth, f"{e.table}.{m.name}")
                fm.lpm.prefix_len = m.prefix_len
        te.action.action.CopyFrom(self._action_proto(e.table, e.action, e.params))
        return te

    def key_to_proto(self, e: TableEntry) -> p4runtime_pb2.TableEntry:
        """The entry without its action (what a DELETE carries)."""
        te = self.entry_to_proto(e)
        te.ClearField("action")
        return te

    def entry_from_proto(self, te: p4runtime_pb2.TableEntry) -> TableEntry:
        t = self.tables_by_id[te.table_id]
        fields = []
        for fm in te.match:
            f = t.fields_by_id[fm.field_id]
            kind = fm.WhichOneof("field_match_type")
            if kind == "exact":
                fields.append(MatchField(f.name, decode(fm.exact.value)))
            elif kind == "lpm":
                fields.append(MatchField(f.name, decode(fm.lpm.value), fm.lpm.prefix_len))
            else:
                raise ValueError(f"{t.name}.{f.name}: match kind {kind} is not used by the controller")
        act = self.actions_by_id[te.action.action.action_id]
        params = tuple(
            sorted((act.params_by_id[p.param_id][0], decode(p.value)) for p in te.action.action.params)
        )
        return TableEntry(t.name, tuple(sorted(fields)), act.name, params)

    def default_to_proto(self, d: DefaultAction) -> p4runtime_pb2.TableEntry:
        te = p4runtime_pb2.TableEntry(table_id=self.table(d.table).id, is_default_action=True)
        te.action.action.CopyFrom(self._action_proto(d.table, d.action, d.params))
        return te

    def default_from_proto(self, te: p4runtime_pb2.TableEntry) -> DefaultAction:
        t = self.tables_by_id[te.table_id]
        act = self.actions_by_id[te.action.action.action_id]
        params = tuple(
            sorted((act.params_by_id[p.param_id][0], decode(p.value)) for p in te.action.action.params)
        )
        return DefaultAction(t.name, act.name, params)


def group_to_proto(g: McGroup) -> p4runtime_pb2.PacketReplicationEngineEntry:
    pre = p4runtime_pb2.PacketReplicationEngineEntry()
    pre.multicast_group_entry.multicast_group_id = g.group_id
    for port, rid in g.replicas:
        pre.multicast_group_entry.replicas.add(egress_port=port, instance=rid)
    return pre


def group_from_proto(pre: p4runtime_pb2.PacketReplicationEngineEntry) -> McGroup:
    g = pre.multicast_group_entry
    reps = []
    for r in g.replicas:
        port = decode(r.port) if r.WhichOneof("port_kind") == "port" else r.egress_port
        reps.append((port, r.instance))
    return McGroup(g.multicast_group_id, tuple(sorted(reps)))

"""Between the controller's name-based state (``controller.intent``) and P4Runtime messages.

P4Runtime speaks ids and byte strings; we speak P4Info names and ints.  ``P4InfoNames`` is the
dictionary, over the shared index of the P4Info the switch runs (``p4rt``).  Byte strings are
written in canonical form and read in any form (``p4rt.bytes_utils``).
"""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from controller.intent import DefaultAction, MatchField, McGroup, TableEntry
from p4rt import P4InfoIndex, decode, encode
from p4rt.context import P4InfoAction, P4InfoTable


class P4InfoNames:
    """The controller's names over one P4Info (``p4rt.P4InfoIndex``), with errors that name
    what is missing, and its entries to and from P4Runtime messages."""

    def __init__(self, p4info: p4info_pb2.P4Info):
        self.p4info = p4info
        self.index = P4InfoIndex.build(p4info)

    def table(self, name: str) -> P4InfoTable:
        t = self.index.table_named(name)
        if t is None:
            raise KeyError(f"the switch's P4Info has no table {name} (is the right program loaded?)")
        return t

    def action(self, name: str) -> P4InfoAction:
        a = self.index.action_named(name)
        if a is None:
            raise KeyError(f"the switch's P4Info has no action {name}")
        return a

    def counter(self, name: str) -> tuple[int, int]:
        """(id, size) of counter ``name``."""
        c = self.index.counter_named(name)
        if c is None:
            raise KeyError(f"the switch's P4Info has no counter {name}")
        return c.id, c.size

    # ------------------------------------------------------------ table entries
    def _action_proto(
        self, table: str, action: str, params: tuple[tuple[str, int], ...]
    ) -> p4runtime_pb2.Action:
        act = self.action(action)
        out = p4runtime_pb2.Action(action_id=act.id)
        given = dict(params)
        names = [p.name for p in act.params.values()]
        if set(given) != set(names):
            raise ValueError(f"{table}: action {action} takes {sorted(names)}, got {sorted(given)}")
        for p in act.params.values():
            out.params.add(param_id=p.id, value=encode(given[p.name], p.bitwidth, f"{action}.{p.name}"))
        return out

    def entry_to_proto(self, e: TableEntry) -> p4runtime_pb2.TableEntry:
        t = self.table(e.table)
        te = p4runtime_pb2.TableEntry(table_id=t.id)
        by_name = {f.name: f for f in t.fields.values()}
        for m in e.match:
            f = by_name.get(m.name)
            if f is None:
                raise KeyError(f"{e.table} has no match field {m.name} (fields: {sorted(by_name)})")
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
        t = self.index.tables[te.table_id]
        fields = []
        for fm in te.match:
            f = t.fields[fm.field_id]
            kind = fm.WhichOneof("field_match_type")
            if kind == "exact":
                fields.append(MatchField(f.name, decode(fm.exact.value)))
            elif kind == "lpm":
                fields.append(MatchField(f.name, decode(fm.lpm.value), fm.lpm.prefix_len))
            else:
                raise ValueError(f"{t.name}.{f.name}: match kind {kind} is not used by the controller")
        return TableEntry(t.name, tuple(sorted(fields)), *self._action_from_proto(te))

    def default_to_proto(self, d: DefaultAction) -> p4runtime_pb2.TableEntry:
        te = p4runtime_pb2.TableEntry(table_id=self.table(d.table).id, is_default_action=True)
        te.action.action.CopyFrom(self._action_proto(d.table, d.action, d.params))
        return te

    def default_from_proto(self, te: p4runtime_pb2.TableEntry) -> DefaultAction:
        return DefaultAction(self.index.tables[te.table_id].name, *self._action_from_proto(te))

    def _action_from_proto(self, te: p4runtime_pb2.TableEntry) -> tuple[str, tuple[tuple[str, int], ...]]:
        """(action name, sorted (parameter name, value)) of an entry read back."""
        act = self.index.actions[te.action.action.action_id]
        return act.name, tuple(sorted((act.params[p.param_id].name, decode(p.value))
                                      for p in te.action.action.params))


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

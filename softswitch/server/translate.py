"""P4Runtime entities <-> Switch API calls.

Every check that P4Runtime assigns to the server (ids, widths, match kinds,
priorities, canonical don't-care encoding) happens here, before the Switch is
touched, so a refused update leaves the switch unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4rt import P4InfoIndex
from p4rt.context import P4InfoTable

from ..api import (
    EntryExistsError,
    EntryNotFoundError,
    Exact,
    Lpm,
    MatchValue,
    Optional,
    Range,
    Replica,
    RuntimeAPIError,
    TableEntry,
    TableFullError,
    Ternary,
)
from ..target.profiles import Watch
from .errors import P4RuntimeError, invalid
from .ids import decode_bytes, encode_bytes
from .meterconf import config_from_proto, config_to_proto

MT = p4info_pb2.MatchField
Update = p4runtime_pb2.Update


def _not_found(message: str) -> P4RuntimeError:
    return P4RuntimeError(grpc.StatusCode.NOT_FOUND, message)


def _exists(message: str) -> P4RuntimeError:
    return P4RuntimeError(grpc.StatusCode.ALREADY_EXISTS, message)


def api_error(err: Exception) -> P4RuntimeError:
    """Map a Switch API exception to the P4Runtime code the spec prescribes."""
    code = getattr(err, "code", None)  # profiles.ProfileError names its P4Runtime code
    if isinstance(err, RuntimeAPIError) and isinstance(code, str) and hasattr(grpc.StatusCode, code):
        return P4RuntimeError(getattr(grpc.StatusCode, code), str(err))
    if isinstance(err, EntryExistsError):
        return _exists(str(err))
    if isinstance(err, EntryNotFoundError):
        return _not_found(str(err))
    if isinstance(err, TableFullError):
        return P4RuntimeError(grpc.StatusCode.RESOURCE_EXHAUSTED, str(err))
    if isinstance(err, (RuntimeAPIError, ValueError, KeyError)):
        return invalid(str(err))
    return P4RuntimeError(grpc.StatusCode.INTERNAL, f"{type(err).__name__}: {err}")


# ---------------------------------------------------------------- match keys

def decode_match(table: P4InfoTable, matches, what: str) -> dict[str, MatchValue]:
    """FieldMatch list -> {field name: MatchValue}; omitted non-exact fields are wildcards."""
    out: dict[str, MatchValue] = {}
    seen: set[int] = set()
    for fm in matches:
        info = table.fields.get(fm.field_id)
        if info is None:
            raise invalid(f"{what}: unknown match field id {fm.field_id} in table {table.name}")
        if fm.field_id in seen:
            raise invalid(f"{what}: match field {info.name} given twice")
        seen.add(fm.field_id)
        kind = fm.WhichOneof("field_match_type")
        name, w = info.name, info.bitwidth
        fwhat = f"{what}: field {name}"
        if info.match_type == MT.EXACT and kind == "exact":
            out[name] = Exact(decode_bytes(fm.exact.value, w, fwhat))
        elif info.match_type == MT.LPM and kind == "lpm":
            plen = fm.lpm.prefix_len
            if plen <= 0 or plen > w:
                raise invalid(f"{fwhat}: prefix length {plen} outside 1..{w} (omit the field for a wildcard)")
            value = decode_bytes(fm.lpm.value, w, fwhat)
            if value & ((1 << (w - plen)) - 1):
                raise invalid(f"{fwhat}: value has bits set beyond the /{plen} prefix")
            out[name] = Lpm(value, plen)
        elif info.match_type == MT.TERNARY and kind == "ternary":
            value = decode_bytes(fm.ternary.value, w, fwhat)
            mask = decode_bytes(fm.ternary.mask, w, fwhat + " mask")
            if mask == 0:
                raise invalid(f"{fwhat}: all-zero mask (omit the field for a wildcard)")
            if value & ~mask:
                raise invalid(f"{fwhat}: value has bits set outside the mask")
            out[name] = Ternary(value, mask)
        elif info.match_type == MT.RANGE and kind == "range":
            low = decode_bytes(fm.range.low, w, fwhat + " low")
            high = decode_bytes(fm.range.high, w, fwhat + " high")
            if low > high:
                raise invalid(f"{fwhat}: range low {low} > high {high}")
            if low == 0 and high == (1 << w) - 1:
                raise invalid(f"{fwhat}: full range (omit the field for a wildcard)")
            out[name] = Range(low, high)
        elif info.match_type == MT.OPTIONAL and kind == "optional":
            out[name] = Optional(decode_bytes(fm.optional.value, w, fwhat))
        else:
            expected = MT.MatchType.Name(info.match_type).lower()
            raise invalid(f"{fwhat}: match kind {kind} given, table declares {expected}")
    for fid, info in table.fields.items():
        if fid not in seen and info.match_type == MT.EXACT:
            raise invalid(f"{what}: exact match field {info.name} is missing")
    return out


def encode_match(table: P4InfoTable, match: dict[str, MatchValue]) -> list[p4runtime_pb2.FieldMatch]:
    out = []
    for fid in sorted(table.fields):
        info = table.fields[fid]
        mv = match.get(info.name)
        if mv is None:
            continue
        fm = p4runtime_pb2.FieldMatch(field_id=fid)
        if isinstance(mv, Exact):
            fm.exact.value = encode_bytes(mv.value)
        elif isinstance(mv, Lpm):
            if mv.prefix_len == 0:
                continue
            fm.lpm.value = encode_bytes(mv.value)
            fm.lpm.prefix_len = mv.prefix_len
        elif isinstance(mv, Ternary):
            if mv.mask == 0:
                continue
            fm.ternary.value = encode_bytes(mv.value)
            fm.ternary.mask = encode_bytes(mv.mask)
        elif isinstance(mv, Range):
            if mv.low == 0 and mv.high == (1 << info.bitwidth) - 1:
                continue
            fm.range.low = encode_bytes(mv.low)
            fm.range.high = encode_bytes(mv.high)
        elif isinstance(mv, Optional):
            if mv.value is None:
                continue
            fm.optional.value = encode_bytes(mv.value)
        out.append(fm)
    return out


# ---------------------------------------------------------------- actions

def decode_action(idx: P4InfoIndex, table: P4InfoTable, te: p4runtime_pb2.TableEntry,
                  what: str) -> tuple[str, dict[str, int]]:
    kind = te.action.WhichOneof("type")
    if kind is None:
        raise invalid(f"{what}: no action given")
    if kind != "action":
        raise invalid(f"{what}: {kind} given, but the table has no action profile" if
                      not table.implementation_id else f"{what}: {kind} is not an action")
    act = te.action.action
    info = idx.action(act.action_id)
    if act.action_id not in table.action_ids:
        raise invalid(f"{what}: action {info.name} is not an action of table {table.name}")
    if te.is_default_action and act.action_id in table.table_only_ids:
        raise invalid(f"{what}: action {info.name} is @tableonly in {table.name}, not a default action")
    if not te.is_default_action and act.action_id in table.default_only_ids:
        raise invalid(f"{what}: action {info.name} is @defaultonly in {table.name}")
    params: dict[str, int] = {}
    for p in act.params:
        pinfo = info.params.get(p.param_id)
        if pinfo is None:
            raise invalid(f"{what}: unknown parameter id {p.param_id} for action {info.name}")
        if pinfo.name in params:
            raise invalid(f"{what}: parameter {pinfo.name} of {info.name} given twice")
        params[pinfo.name] = decode_bytes(
            p.value, pinfo.bitwidth, f"{what}: parameter {info.name}.{pinfo.name}"
        )
    missing = [p.name for p in info.params.values() if p.name not in params]
    if missing:
        raise invalid(f"{what}: action {info.name} is missing parameter(s) {', '.join(missing)}")
    return info.name, params


def encode_action(idx: P4InfoIndex, action: str, params: dict[str, int]) -> p4runtime_pb2.TableAction:
    aid = idx.action_by_name.get(action)
    if aid is None:
        raise P4RuntimeError(grpc.StatusCode.INTERNAL, f"switch reports unknown action {action}")
    info = idx.actions[aid]
    ta = p4runtime_pb2.TableAction()
    ta.action.action_id = aid
    for pid in sorted(info.params):
        p = info.params[pid]
        ta.action.params.add(param_id=pid, value=encode_bytes(params.get(p.name, 0)))
    return ta


# ---------------------------------------------------------------- table entries

def _priority(table: P4InfoTable, te: p4runtime_pb2.TableEntry, what: str) -> int | None:
    if table.needs_priority:
        if te.priority <= 0:
            raise invalid(f"{what}: table {table.name} has ternary/range/optional keys; priority must be > 0")
        return te.priority
    if te.priority != 0:
        raise invalid(f"{what}: table {table.name} has only exact/lpm keys; priority must be 0")
    return None


def _refuse_unsupported(table: P4InfoTable, te: p4runtime_pb2.TableEntry, what: str) -> None:
    """Fields of an entry this target cannot honour are refused, never silently dropped."""
    if te.HasField("meter_counter_data"):
        raise P4RuntimeError(
            grpc.StatusCode.UNIMPLEMENTED, f"{what}: meter counter data is not supported by this target"
        )
    if te.HasField("meter_config") and (table.direct_meter_id is None or te.is_default_action):
        holder = "default entry" if te.is_default_action else "table"
        raise invalid(f"{what}: meter_config given, but the {holder} has no direct meter")
    if te.idle_timeout_ns:
        raise invalid(f"{what}: the table does not support idle timeout")
    if te.HasField("counter_data") and table.direct_counter_id is None:
        raise invalid(f"{what}: counter_data given, but the table has no direct counter")


def write_table_entry(switch, idx: P4InfoIndex, utype: int, te: p4runtime_pb2.TableEntry) -> None:
    table = idx.table(te.table_id)
    what = f"table {table.name}"
    _refuse_unsupported(table, te, what)
    if te.is_default_action:
        if utype != Update.MODIFY:
            raise invalid(f"{what}: the default entry can only be modified, not inserted or deleted")
        if te.match:
            raise invalid(f"{what}: a default entry has no match key")
        if table.const_default_action_id:
            raise P4RuntimeError(grpc.StatusCode.PERMISSION_DENIED,
                                 f"{what}: default action is const")
        if not te.HasField("action"):
            _call(switch.table_reset_default, table.name)
            return
        action, params = decode_action(idx, table, te, what)
        _call(switch.table_set_default, table.name, action, params)
        return
    if table.is_const:
        raise P4RuntimeError(grpc.StatusCode.PERMISSION_DENIED, f"{what}: table has const entries")
    match = decode_match(table, te.match, what)
    prio = _priority(table, te, what)
    meter = config_from_proto(te, f"{what}: meter_config")  # checked before the switch changes
    if table.implementation_id and utype in (Update.INSERT, Update.MODIFY):
        insert = utype == Update.INSERT
        if te.action.WhichOneof("type") == "action_profile_action_set":
            actions = one_shot_actions(idx, table, te, what)
            _call(switch.table_add_one_shot if insert else switch.table_modify_one_shot, table.name, match,
                  actions, prio)
            return
        member, group = indirect_ref(table, te, what)
        _call(switch.table_add_indirect if insert else switch.table_modify_indirect, table.name, match,
              member, group, prio)
        return
    if utype == Update.INSERT:
        action, params = decode_action(idx, table, te, what)
        _call(switch.table_add, table.name, action, match, params, prio)
    elif utype == Update.MODIFY:
        action, params = decode_action(idx, table, te, what)
        _call(switch.table_modify, table.name, action, match, params, prio)
    elif utype == Update.DELETE:
        _call(switch.table_delete, table.name, match, prio)
    else:
        raise invalid(f"{what}: update type {utype} is not INSERT, MODIFY or DELETE")
    if meter is not None and utype != Update.DELETE:  # unset on MODIFY: the meter is kept (BMv2)
        _call(switch.direct_meter_set_config, table.name, match, meter, prio)


def indirect_ref(table: P4InfoTable, te: p4runtime_pb2.TableEntry,
                 what: str) -> tuple[int | None, int | None]:
    """(member id, group id) of an entry of a table with an action profile or selector."""
    kind = te.action.WhichOneof("type")
    if kind == "action_profile_member_id":
        return te.action.action_profile_member_id, None
    if kind == "action_profile_group_id":
        return None, te.action.action_profile_group_id
    raise invalid(f"{what}: the table has an action profile: give a member or group id, not {kind}")


def one_shot_actions(idx: P4InfoIndex, table: P4InfoTable, te: p4runtime_pb2.TableEntry,
                     what: str) -> list[tuple]:
    """(action, params, weight, watch) of each action of a one-shot ``action_profile_action_set``
    (a weight below 1 is INVALID_ARGUMENT, as PI)."""
    out = []
    for pa in te.action.action_profile_action_set.action_profile_actions:
        if pa.weight <= 0:
            raise invalid(f"{what}: one-shot action weight {pa.weight} must be positive")
        single = p4runtime_pb2.TableEntry(table_id=table.id)
        single.action.action.CopyFrom(pa.action)
        out.append((*decode_action(idx, table, single, what), pa.weight, watch_of(pa)))
    return out


def watch_of(msg) -> Watch | None:
    """PI's ``watch_port_p4rt_to_pi`` for a group member or one-shot action: port 0
    (SDN_PORT_UNKNOWN) or an empty or longer than 4-byte ``watch_port`` mean no watched port."""
    kind = msg.WhichOneof("watch_kind")
    if kind == "watch":
        return Watch(msg.watch, "watch") if msg.watch != 0 else None
    if kind == "watch_port" and 0 < len(msg.watch_port) <= 4:
        port = int.from_bytes(msg.watch_port, "big")
        return Watch(port, "watch_port") if port != 0 else None
    return None


def put_watch(msg, watch: Watch | None) -> None:
    """A watched port back in the field it came in."""
    if watch is not None and watch.kind == "watch":
        msg.watch = watch.port
    elif watch is not None:
        msg.watch_port = watch.port.to_bytes(max(1, (watch.port.bit_length() + 7) // 8), "big")


def _call(fn, *args):
    try:
        return fn(*args)
    except Exception as err:  # noqa: BLE001 - every Switch failure becomes a P4Runtime status
        raise api_error(err) from err


def call_switch(fn, *args):
    """A Switch API call whose failure becomes the P4Runtime status the specification gives."""
    return _call(fn, *args)


def entry_to_proto(idx: P4InfoIndex, table: P4InfoTable, e: TableEntry,
                   with_counter: bool, switch=None) -> p4runtime_pb2.TableEntry:
    """``switch`` given: the entry's direct meter configuration is read too (when configured)."""
    te = p4runtime_pb2.TableEntry(table_id=table.id)
    if e.is_default:
        te.is_default_action = True
    else:
        te.match.extend(encode_match(table, e.match))
    if e.priority is not None and table.needs_priority:
        te.priority = e.priority
    if e.action_set is not None:
        for action, params, weight, watch in e.action_set:
            pa = te.action.action_profile_action_set.action_profile_actions.add(weight=weight)
            pa.action.CopyFrom(encode_action(idx, action, params).action)
            put_watch(pa, watch)
    elif e.member_id is not None:
        te.action.action_profile_member_id = e.member_id
    elif e.group_id is not None:
        te.action.action_profile_group_id = e.group_id
    else:
        te.action.CopyFrom(encode_action(idx, e.action, e.params))
    if e.is_const:
        te.is_const = True
    if with_counter and table.direct_counter_id is not None and e.counter is not None:
        te.counter_data.packet_count, te.counter_data.byte_count = e.counter
    if switch is not None and table.direct_meter_id is not None and not e.is_default:
        cfg = _call(switch.direct_meter_get_config, table.name, e.match, e.priority)
        if cfg is not None:
            te.meter_config.CopyFrom(config_to_proto(cfg))
    return te


def read_table_entries(switch, idx: P4InfoIndex, query: p4runtime_pb2.TableEntry
                       ) -> Iterator[p4runtime_pb2.TableEntry]:
    tables = [idx.table(query.table_id)] if query.table_id else [idx.tables[t] for t in sorted(idx.tables)]
    with_counter = query.HasField("counter_data")
    meter_sw = switch if query.HasField("meter_config") else None
    for table in tables:
        what = f"read of table {table.name}"
        if query.is_default_action:
            yield entry_to_proto(idx, table, _call(switch.table_default, table.name), with_counter)
            continue
        want_match = decode_match(table, query.match, what) if query.match else None
        want_prio = query.priority if query.priority else None
        for e in _call(switch.table_entries, table.name):
            if want_match is not None and (_normal(e.match) != _normal(want_match)):
                continue
            if want_prio is not None and e.priority != want_prio:
                continue
            yield entry_to_proto(idx, table, e, with_counter, meter_sw)


def _normal(match: dict[str, MatchValue]) -> dict[str, MatchValue]:
    """Drop wildcard values so a stored key compares equal to a P4Runtime key."""
    out = {}
    for k, v in match.items():
        if isinstance(v, Ternary) and v.mask == 0 or isinstance(v, Lpm) and v.prefix_len == 0:
            continue
        if isinstance(v, Optional) and v.value is None:
            continue
        out[k] = v
    return out


def read_direct_counters(switch, idx: P4InfoIndex, query: p4runtime_pb2.DirectCounterEntry
                         ) -> Iterator[p4runtime_pb2.DirectCounterEntry]:
    q = query.table_entry
    if q.table_id:
        table = idx.table(q.table_id)
        if table.direct_counter_id is None:
            raise invalid(f"table {table.name} has no direct counter")
    probe = p4runtime_pb2.TableEntry()
    probe.CopyFrom(q)
    probe.counter_data.SetInParent()
    for te in read_table_entries(switch, idx, probe):
        if idx.tables[te.table_id].direct_counter_id is None:
            continue
        out = p4runtime_pb2.DirectCounterEntry()
        out.data.CopyFrom(te.counter_data)
        te.ClearField("counter_data")
        out.table_entry.CopyFrom(te)
        yield out


# ---------------------------------------------------------------- counters

def read_counters(switch, idx: P4InfoIndex, query: p4runtime_pb2.CounterEntry
                  ) -> Iterator[p4runtime_pb2.CounterEntry]:
    counters = [idx.counter(query.counter_id)] if query.counter_id else [
        idx.counters[c] for c in sorted(idx.counters)]
    for c in counters:
        if query.HasField("index"):
            if not 0 <= query.index.index < c.size:
                raise invalid(f"counter {c.name}: index {query.index.index} outside 0..{c.size - 1}")
            indexes = [query.index.index]
        else:
            indexes = list(range(c.size))
        for i in indexes:
            packets, bytes_ = _call(switch.counter_read, c.name, i)
            ce = p4runtime_pb2.CounterEntry(counter_id=c.id)
            ce.index.index = i
            ce.data.packet_count = packets
            ce.data.byte_count = bytes_
            yield ce


def write_counter(switch, idx: P4InfoIndex, utype: int, ce: p4runtime_pb2.CounterEntry) -> None:
    c = idx.counter(ce.counter_id)
    if utype != Update.MODIFY:
        raise invalid(f"counter {c.name}: only MODIFY is allowed on counter entries")
    indexes = [ce.index.index] if ce.HasField("index") else list(range(c.size))
    for i in indexes:
        if not 0 <= i < c.size:
            raise invalid(f"counter {c.name}: index {i} outside 0..{c.size - 1}")
        _call(switch.counter_write, c.name, i, ce.data.packet_count, ce.data.byte_count)


# ---------------------------------------------------------------- packet replication engine

def _replicas(replicas, what: str) -> list[Replica]:
    out: list[Replica] = []
    seen: set[tuple[int, int]] = set()
    for r in replicas:
        kind = r.WhichOneof("port_kind")
        if kind == "port":
            port = decode_bytes(r.port, 32, f"{what}: replica port")
        else:
            port = r.egress_port
        key = (port, r.instance)
        if key in seen:
            raise invalid(f"{what}: duplicate replica (port {port}, instance {r.instance})")
        seen.add(key)
        out.append(Replica(port=port, rid=r.instance))
    return out


def _check_presence(utype: int, present: bool, what: str) -> None:
    """INSERT of something present, MODIFY/DELETE of something absent: the P4Runtime errors."""
    if utype == Update.INSERT and present:
        raise _exists(f"{what} already exists")
    if utype in (Update.MODIFY, Update.DELETE) and not present:
        raise _not_found(f"{what} does not exist")


def write_pre(switch, utype: int, pre: p4runtime_pb2.PacketReplicationEngineEntry,
              clone_params: dict[int, tuple[int, int]]) -> None:
    """Apply one PRE update; ``clone_params`` remembers each session's length and class of service."""
    kind = pre.WhichOneof("type")
    if kind == "multicast_group_entry":
        g = pre.multicast_group_entry
        what = f"multicast group {g.multicast_group_id}"
        if g.multicast_group_id == 0:
            raise invalid("multicast group id 0 is reserved")
        _check_presence(utype, g.multicast_group_id in _call(switch.mc_groups), what)
        if utype == Update.DELETE:
            _call(switch.mc_group_delete, g.multicast_group_id)
        else:
            _call(switch.mc_group_set, g.multicast_group_id, _replicas(g.replicas, what))
    elif kind == "clone_session_entry":
        s = pre.clone_session_entry
        what = f"clone session {s.session_id}"
        if s.session_id == 0:
            raise invalid("clone session id 0 is reserved")
        _check_presence(utype, s.session_id in _call(switch.clone_sessions), what)
        if utype == Update.DELETE:
            _call(switch.clone_session_delete, s.session_id)
            clone_params.pop(s.session_id, None)
        else:
            _call(switch.clone_session_set, s.session_id, _replicas(s.replicas, what),
                  s.packet_length_bytes, s.class_of_service)
            clone_params[s.session_id] = (s.packet_length_bytes, s.class_of_service)
    else:
        raise invalid("PacketReplicationEngineEntry without a multicast group or clone session")


def _replica_protos(replicas: list[Replica]) -> list[p4runtime_pb2.Replica]:
    return [p4runtime_pb2.Replica(egress_port=r.port, instance=r.rid) for r in replicas]


def read_pre(
    switch, query: p4runtime_pb2.PacketReplicationEngineEntry, clone_params: dict[int, tuple[int, int]]
) -> Iterator[p4runtime_pb2.PacketReplicationEngineEntry]:
    kind = query.WhichOneof("type")
    if kind == "multicast_group_entry":
        want = query.multicast_group_entry.multicast_group_id
        for gid, reps in sorted(_call(switch.mc_groups).items()):
            if want and gid != want:
                continue
            out = p4runtime_pb2.PacketReplicationEngineEntry()
            out.multicast_group_entry.multicast_group_id = gid
            out.multicast_group_entry.replicas.extend(_replica_protos(reps))
            yield out
    elif kind == "clone_session_entry":
        want = query.clone_session_entry.session_id
        for sid, reps in sorted(_call(switch.clone_sessions).items()):
            if want and sid != want:
                continue
            out = p4runtime_pb2.PacketReplicationEngineEntry()
            cs = out.clone_session_entry
            cs.session_id = sid
            cs.replicas.extend(_replica_protos(reps))
            cs.packet_length_bytes, cs.class_of_service = clone_params.get(sid, (0, 0))
            yield out
    else:
        raise invalid(
            "read of PacketReplicationEngineEntry must name multicast_group_entry or clone_session_entry"
        )

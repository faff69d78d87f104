"""P4Runtime ``MeterEntry`` and ``DirectMeterEntry``: Write (MODIFY only, as the specification
says for meters) and Read, over the Switch meter API.

A ``MeterEntry`` without an index configures or reads every cell of the meter (BMv2's
``meter_array_set_rates``); ``meter_id`` 0 in a Read means every meter.  An unset ``config``
in a MODIFY returns the cell(s) to the unconfigured state (every packet GREEN); a Read returns
``config`` only for configured cells.
"""

from __future__ import annotations

from collections.abc import Iterator

from p4.v1 import p4runtime_pb2

from p4rt import P4InfoIndex

from .errors import invalid
from .meterconf import config_from_proto, config_to_proto, refuse_counter_data
from .translate import _call, _priority, decode_match, read_table_entries

Update = p4runtime_pb2.Update


def write_meter(switch, idx: P4InfoIndex, utype: int, me: p4runtime_pb2.MeterEntry) -> None:
    m = idx.meter(me.meter_id)
    what = f"meter {m.name}"
    if utype != Update.MODIFY:
        raise invalid(f"{what}: only MODIFY is allowed on meter entries")
    refuse_counter_data(me, what)
    index = None
    if me.HasField("index"):
        index = me.index.index
        if not 0 <= index < m.size:
            raise invalid(f"{what}: index {index} outside 0..{m.size - 1}")
    _call(switch.meter_set_config, m.name, index, config_from_proto(me, what))


def read_meters(switch, idx: P4InfoIndex, query: p4runtime_pb2.MeterEntry
                ) -> Iterator[p4runtime_pb2.MeterEntry]:
    meters = [idx.meter(query.meter_id)] if query.meter_id else [idx.meters[i] for i in sorted(idx.meters)]
    for m in meters:
        if query.HasField("index"):
            if not 0 <= query.index.index < m.size:
                raise invalid(f"meter {m.name}: index {query.index.index} outside 0..{m.size - 1}")
            cells = [query.index.index]
        else:
            cells = range(m.size)
        for i in cells:
            out = p4runtime_pb2.MeterEntry(meter_id=m.id)
            out.index.index = i
            cfg = _call(switch.meter_get_config, m.name, i)
            if cfg is not None:
                out.config.CopyFrom(config_to_proto(cfg))
            yield out


def write_direct_meter(switch, idx: P4InfoIndex, utype: int, dme: p4runtime_pb2.DirectMeterEntry) -> None:
    te = dme.table_entry
    table = idx.table(te.table_id)
    what = f"direct meter of table {table.name}"
    if utype != Update.MODIFY:
        raise invalid(f"{what}: only MODIFY is allowed on direct meter entries")
    if table.direct_meter_id is None:
        raise invalid(f"table {table.name} has no direct meter")
    if te.is_default_action:
        raise invalid(f"{what}: the default entry has no meter (BMv2 meters hits only)")
    refuse_counter_data(dme, what)
    match = decode_match(table, te.match, what)
    prio = _priority(table, te, what)
    _call(switch.direct_meter_set_config, table.name, match, config_from_proto(dme, what), prio)


def read_direct_meters(switch, idx: P4InfoIndex, query: p4runtime_pb2.DirectMeterEntry
                       ) -> Iterator[p4runtime_pb2.DirectMeterEntry]:
    q = query.table_entry
    if q.table_id and idx.table(q.table_id).direct_meter_id is None:
        raise invalid(f"table {idx.table(q.table_id).name} has no direct meter")
    probe = p4runtime_pb2.TableEntry()
    probe.CopyFrom(q)
    probe.meter_config.SetInParent()
    for te in read_table_entries(switch, idx, probe):
        if idx.tables[te.table_id].direct_meter_id is None:
            continue
        out = p4runtime_pb2.DirectMeterEntry()
        if te.HasField("meter_config"):
            out.config.CopyFrom(te.meter_config)
            te.ClearField("meter_config")
        out.table_entry.CopyFrom(te)
        yield out

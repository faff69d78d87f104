"""P4Info generation, laid out as p4c writes it for v1model.

Ids are ``(resource prefix << 24) | (Jenkins one-at-a-time hash of the fully qualified name)``
(low 24 bits), probing upwards on collision; ``@id`` annotations are honoured.  This is what
p4c's P4RuntimeSymbolTable does, so ids are stable across runs and independent of order.
"""

from __future__ import annotations

from typing import Any

from .check.decls import cp_name
from .check.types import ArrayT, BitT, BoolT, EnumT, ErrorT, HeaderT, StructT, bit_width, is_scalar_bits

# The P4Ids.Prefix values of p4info.proto (p4c uses these): controller headers 0x04, meters 0x14,
# direct meters 0x15, registers 0x16, digests 0x17.
PREFIX = {"action": 0x01, "table": 0x02, "value_set": 0x03, "controller_header": 0x04,
          "action_profile": 0x11,
          "counter": 0x12, "direct_counter": 0x13, "meter": 0x14, "direct_meter": 0x15,
          "register": 0x16, "digest": 0x17}

MATCH = {"exact": 2, "lpm": 3, "ternary": 4, "range": 5, "optional": 6}


def p4info_pb2():
    """The one place that imports the P4Info stubs (regenerated stubs first, if present)."""
    try:
        from .p4runtime_stubs.p4.config.v1 import p4info_pb2 as m  # type: ignore
        return m
    except ImportError:
        from p4.config.v1 import p4info_pb2 as m  # type: ignore
        return m


def jenkins_oaat(name: str) -> int:
    h = 0
    for c in name.encode():
        h = (h + c) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


class _Ids:
    def __init__(self) -> None:
        self.used: set[int] = set()
        self.by_name: dict[tuple[str, str], int] = {}

    def get(self, kind: str, name: str, ann: dict | None = None) -> int:
        key = (kind, name)
        if key in self.by_name:
            return self.by_name[key]
        prefix = PREFIX[kind]
        if ann and ann.get("id") and isinstance(ann["id"][0], int):
            i = (prefix << 24) | (ann["id"][0] & 0xFFFFFF)
        else:
            i = (prefix << 24) | (jenkins_oaat(name) & 0xFFFFFF)
            while i in self.used:
                i = (prefix << 24) | (((i & 0xFFFFFF) + 1) & 0xFFFFFF)
        self.used.add(i)
        self.by_name[key] = i
        return i


def _ann_strings(ann: dict[str, list]) -> list[str]:
    out = []
    for k, vals in ann.items():
        if k in ("name", "id", "hidden"):
            continue
        if not vals:
            out.append(f"@{k}")
        else:
            out.append(f"@{k}(" + ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in vals) + ")")
    return out


def _alias(name: str, all_names: list[str]) -> str:
    parts = name.split(".")
    for i in range(len(parts) - 1, -1, -1):
        cand = ".".join(parts[i:])
        if sum(1 for n in all_names if n == cand or n.endswith("." + cand)) == 1:
            return cand
    return name


def _preamble(pre, i: int, name: str, alias: str, ann: dict) -> None:
    pre.id = i
    pre.name = name
    pre.alias = alias
    pre.annotations.extend(_ann_strings(ann))


def _width(t) -> int:
    """P4Info's ``bitwidth``: a scalar's width, 0 for anything else."""
    return bit_width(t) if is_scalar_bits(t) else 0


def _flat_fields(t, path: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """Fields of a controller header with struct-typed fields flattened, named ``s.f`` in
    layout order (p4c's control-plane FlattenHeader: its ``@name`` of each flattened field)."""
    out: list[tuple[str, Any]] = []
    for fname, ft in t.fields:
        if isinstance(ft, StructT):
            out += _flat_fields(ft, path + (fname,))
        else:
            out.append((".".join(path + (fname,)), ft))
    return out


def build_p4info(prog) -> Any:
    """The P4Info of a checked program, one entity kind after another in p4c's order.

    Ids are taken in this order, which decides which name probes upwards on a hash collision,
    so the helpers below must keep being called in this sequence."""
    info = p4info_pb2().P4Info()
    info.pkg_info.arch = "v1model"
    ids = _Ids()
    tables = [t for t in prog.tables.values() if "hidden" not in t.annotations]
    _actions(info, ids, _used_actions(prog, tables))
    dc_ids = {inst.name: ids.get("direct_counter", inst.name, inst.annotations)
              for inst in prog.extern_insts.values() if inst.extern == "direct_counter"}
    _tables(info, ids, tables, dc_ids)
    for inst in sorted(prog.extern_insts.values(), key=lambda i: i.name):
        _extern_instance(info, prog, ids, inst, dc_ids)
    _action_profiles(info, prog, ids, {t.name for t in tables})
    _controller_headers(info, prog, ids)
    _value_sets(info, prog, ids)
    _digests(info, prog, ids)
    return info


def _used_actions(prog, tables: list) -> dict[str, Any]:
    """As p4c: actions a table can run, and actions called directly from an apply block (p4c's
    mid end wraps each such call in a hidden table that runs it); unused ones are dropped."""
    used: dict[str, Any] = {}
    for t in tables:
        for a in t.actions:
            if "hidden" not in a.annotations:
                used[a.name] = a
    for name in getattr(prog, "direct_actions", ()):
        a = prog.actions.get(name)
        if a is not None and "hidden" not in a.annotations:
            used.setdefault(name, a)
    return used


def _actions(info, ids: _Ids, used: dict[str, Any]) -> None:
    anames = list(used)
    for name in sorted(used):
        a = used[name]
        pa = info.actions.add()
        _preamble(pa.preamble, ids.get("action", name, a.annotations), name, _alias(name, anames),
                  a.annotations)
        for k, p in enumerate(a.data_params, 1):
            pp = pa.params.add()
            pp.id = k
            pp.name = cp_name(p)
            pp.bitwidth = _width(p.type)
            pp.annotations.extend(_ann_strings(p.annotations))


def _tables(info, ids: _Ids, tables: list, dc_ids: dict[str, int]) -> None:
    tnames = [t.name for t in tables]
    for t in sorted(tables, key=lambda t: t.name):
        pt = info.tables.add()
        _preamble(pt.preamble, ids.get("table", t.name, t.annotations), t.name, _alias(t.name, tnames),
                  t.annotations)
        for k, key in enumerate(t.keys, 1):
            mf = pt.match_fields.add()
            mf.id = k
            mf.name = key.name
            mf.bitwidth = key.width
            mf.match_type = MATCH[key.match_kind]
            mf.annotations.extend(_ann_strings({x: v for x, v in key.annotations.items() if x != "name"}))
        for a, ann in zip(t.actions, t.action_annotations, strict=False):
            ar = pt.action_refs.add()
            ar.id = ids.get("action", a.name, a.annotations)
            ar.scope = 1 if "tableonly" in ann else 2 if "defaultonly" in ann else 0
            ar.annotations.extend(_ann_strings(ann))
        _table_resources(pt, ids, t, dc_ids)


def _table_resources(pt, ids: _Ids, t, dc_ids: dict[str, int]) -> None:
    """A table's const default action, action profile, direct resources, size and const-ness."""
    if t.default_const and t.default is not None:
        pt.const_default_action_id = ids.get("action", t.default[0].name, t.default[0].annotations)
    if t.profile is not None:
        pt.implementation_id = ids.get("action_profile", t.profile.name, t.profile.annotations)
    if t.direct_counter:
        pt.direct_resource_ids.append(dc_ids[t.direct_counter])
    if t.direct_meter:
        pt.direct_resource_ids.append(ids.get("direct_meter", t.direct_meter))
    pt.size = t.size
    if t.entries_const:
        pt.is_const_table = True
    elif t.const_entries:
        pt.has_initial_entries = True


def _extern_instance(info, prog, ids: _Ids, inst, dc_ids: dict[str, int]) -> None:
    """A register, counter, direct counter, meter or direct meter instance (other externs have no
    P4Info entry)."""
    o = inst.obj
    short = inst.name.split(".")[-1]
    if inst.extern == "register":
        r = info.registers.add()
        _preamble(r.preamble, ids.get("register", inst.name, inst.annotations), inst.name, short,
                  inst.annotations)
        elem = inst.type_args[0] if inst.type_args else None
        if isinstance(elem, EnumT):  # a serializable enum element: named, as p4c does
            _member_spec(r.type_spec, elem, info, prog)
        elif o.signed:
            r.type_spec.bitstring.int.bitwidth = o.width
        else:
            r.type_spec.bitstring.bit.bitwidth = o.width
        r.size = o.size
    elif inst.extern == "counter":
        c = info.counters.add()
        _preamble(c.preamble, ids.get("counter", inst.name, inst.annotations), inst.name, short,
                  inst.annotations)
        c.spec.unit = {0: 2, 1: 1, 2: 3}[o.kind]
        c.size = o.size
    elif inst.extern == "direct_counter":
        c = info.direct_counters.add()
        _preamble(c.preamble, dc_ids[inst.name], inst.name, short, inst.annotations)
        c.spec.unit = {0: 2, 1: 1, 2: 3}[o.kind]
        if o.table:
            c.direct_table_id = ids.get("table", o.table)
    elif inst.extern in ("meter", "direct_meter"):
        m = info.meters.add() if inst.extern == "meter" else info.direct_meters.add()
        _preamble(m.preamble, ids.get(inst.extern, inst.name, inst.annotations), inst.name, short,
                  inst.annotations)
        m.spec.unit = 2 if o.kind == 0 else 1
        if inst.extern == "meter":
            m.size = o.size
        elif o.table:
            m.direct_table_id = ids.get("table", o.table)


def _controller_headers(info, prog, ids: _Ids) -> None:
    """``controller_packet_metadata``: the headers annotated ``@controller_header("name")``."""
    for h in prog.decls.header_order:
        if isinstance(h, HeaderT) and "controller_header" in h.annotations:
            cname = h.annotations["controller_header"][0]
            cm = info.controller_packet_metadata.add()
            _preamble(cm.preamble, ids.get("controller_header", cname), cname, cname, h.annotations)
            for k, (fname, ft) in enumerate(_flat_fields(h), 1):
                md = cm.metadata.add()
                md.id = k
                md.name = fname
                md.bitwidth = _width(ft)


def _value_sets(info, prog, ids: _Ids) -> None:
    for vname, vs in sorted(prog.value_sets.items()):
        pv = info.value_sets.add()
        _preamble(pv.preamble, ids.get("value_set", vname), vname, vname.split(".")[-1], {})
        for k, (fname, width, kind) in enumerate(vs.fields, 1):
            mf = pv.match.add()
            mf.id = k
            mf.name = fname
            mf.bitwidth = width
            mf.match_type = MATCH.get(kind, 2)
        pv.size = vs.size


def _digests(info, prog, ids: _Ids) -> None:
    for dname, st in sorted(prog.digests.items()):
        dg = info.digests.add()
        _preamble(dg.preamble, ids.get("digest", dname), dname, dname, {})
        dg.type_spec.struct.name = dname
        _struct_info(info, st, prog)


def _action_profiles(info, prog, ids: _Ids, listed: set[str]) -> None:
    """``action_profiles`` as p4c lists them: the tables using each, whether it has a selector,
    the size its constructor gives (a profile no listed table uses is left out)."""
    profs = [p for p in prog.profiles.values() if any(t in listed for t in p.tables)]
    names = [p.name for p in profs]
    for p in sorted(profs, key=lambda p: p.name):
        ap = info.action_profiles.add()
        _preamble(ap.preamble, ids.get("action_profile", p.name, p.annotations), p.name,
                  _alias(p.name, names), p.annotations)
        ap.table_ids.extend(ids.get("table", t) for t in p.tables if t in listed)
        ap.with_selector = p.with_selector
        ap.size = p.size
        ap.max_group_size = p.max_group_size   # p4c reads @max_group_size(N) of a selector


def _struct_info(info, st: StructT, prog) -> None:
    s = info.type_info.structs[st.name]
    for fname, ft in st.fields:
        m = s.members.add()
        m.name = fname
        _member_spec(m.type_spec, ft, info, prog)


def _member_spec(spec, ft, info, prog) -> None:
    """A digest member's type: an array of a non-header type is a tuple of its elements (P4Runtime
    has no array type spec besides header stacks); ``error`` and enums are named, their members
    listed in ``type_info`` as p4c does."""
    if isinstance(ft, ArrayT):
        spec.tuple.SetInParent()
        for _ in range(ft.size):
            _member_spec(spec.tuple.members.add(), ft.elem, info, prog)
    elif isinstance(ft, ErrorT):
        spec.error.SetInParent()
        if not info.type_info.error.members:
            info.type_info.error.members.extend(prog.decls.errors)
    elif isinstance(ft, EnumT) and ft.underlying is not None:
        spec.serializable_enum.name = ft.name
        se = info.type_info.serializable_enums[ft.name]
        if not se.members:
            se.underlying_type.bitwidth = ft.underlying.width
            nbytes = (ft.underlying.width + 7) // 8
            for mname in ft.members:
                m = se.members.add()
                m.name = mname
                m.value = (ft.values.get(mname, 0) % (1 << ft.underlying.width)).to_bytes(nbytes, "big")
    elif isinstance(ft, EnumT):
        spec.enum.name = ft.name
        en = info.type_info.enums[ft.name]
        if not en.members:
            for mname in ft.members:
                en.members.add().name = mname
    elif isinstance(ft, BitT) and ft.signed:
        spec.bitstring.int.bitwidth = ft.width
    elif isinstance(ft, BoolT):
        spec.bool.SetInParent()
    else:
        spec.bitstring.bit.bitwidth = _width(ft)

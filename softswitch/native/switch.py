"""``NativeSwitch``: the runtime API of ``softswitch.Switch`` over the native (C) pipeline.

The Python program object stays the control-plane model: it validates and normalises every
table write, keeps entries for reads, and P4Info comes from it.  Each write is then mirrored into
the C structures (a table is reloaded in lookup order; C keeps the direct counters, which are
pulled back before the reload; so does the dynamic state of direct meters).  Registers,
counters, meter buckets and digests live in C; the Python side keeps meter configurations for
reads and pushes every change.
"""

from __future__ import annotations

from ..api import MatchValue, MeterConfig, Replica, RuntimeAPIError, TableEntry
from ..target.crc import CrcParams
from ..target.meters import MeterCell
from ..target.switch import Switch
from .build import NativeBuildError, NativeModule, build

_M128 = (1 << 128) - 1


class NativeSwitch(Switch):
    """A switch whose packets run in generated C; same API as ``Switch``."""

    backend = "native"

    def __init__(self, compiled, cpu_port: int | None = None, trace: bool = False):
        if trace:
            raise NativeBuildError("native backend: packet traces (trace=True) need the python backend")
        super().__init__(compiled, cpu_port)
        self.mod: NativeModule = build(compiled)
        ffi, lib = self.mod.ffi, self.mod.lib
        self.ffi, self.lib = ffi, lib
        sw = lib.ss_new()
        if sw == ffi.NULL:
            raise MemoryError("native switch: out of memory")
        self.sw = ffi.gc(sw, lib.ss_free)
        self._tid = dict(self.mod.gen.table_ids)
        self._rows: dict[str, list] = {}
        lib.ss_rng_seed(self.sw, self.inst.state.rng.state)  # the same random source as Python
        self._digest_names = [t.name for t in self.mod.ir.digests]
        for name in self._tid:
            self._sync(name)
            self._push_default(name)

    def _compile(self, compiled, trace: bool) -> None:
        """Packets run in C (``build`` below); no Python pipeline is generated."""
        return None

    # ------------------------------------------------------------ packets
    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        if not 0 <= port < 511:
            raise ValueError(f"ingress port {port} out of range 0..510")
        ffi, lib = self.ffi, self.lib
        data = bytes(data)
        clock = self.inst.state.clock
        if clock is not None:
            lib.ss_set_now(self.sw, 1, clock())
        outl = lib.ss_process(self.sw, port, data, len(data))
        if outl == ffi.NULL:
            raise MemoryError("native switch: out of memory")
        try:
            out = []
            p, n = ffi.new("int *"), ffi.new("size_t *")
            for i in range(lib.ss_outl_n(outl)):
                ptr = lib.ss_outl_get(outl, i, p, n)
                out.append((p[0], bytes(ffi.buffer(ptr, n[0]))))
        finally:
            lib.ss_outl_free(outl)
        self.last_trace = []
        return out

    def run_many(self, frames: list[tuple[int, bytes]]) -> tuple[float, int]:
        """Run (port, frame) pairs through the pipeline in C, outputs discarded: (seconds, frames
        emitted).  For measuring the pipeline without I/O."""
        ffi = self.ffi
        stride = max((len(f) for _p, f in frames), default=1)
        buf = ffi.new("uint8_t[]", b"".join(f.ljust(stride, b"\0") for _p, f in frames) or b"\0")
        outs = ffi.new("int64_t[1]")
        el = self.lib.ss_run_many(self.sw, ffi.new("int[]", [p for p, _f in frames] or [0]), buf, stride,
                                  ffi.new("size_t[]", [len(f) for _p, f in frames] or [0]), len(frames), outs)
        return el, int(outs[0])

    # ------------------------------------------------------------ tables
    def _info(self, table: str):
        return self._table(table).info

    def _sync(self, name: str, pull: bool = True) -> None:
        """Reload one table into C in lookup order (the order ``tables.Table.lookup`` uses);
        ``pull=False`` when the caller pulled already and then changed entries' counters/meters."""
        t = self.inst.tables[name]
        if pull:
            self._pull(name)
        allents = t.const + list(t.entries.values())
        if t.exact_only:
            rows = allents
        elif not t.needs_priority and t.lpm_idx is not None:
            rows = sorted(allents, key=lambda e: -e.plen)
        else:
            rows = t.lookup_order()
        td = self.mod.ir.tables[name]
        data_counts = [len([q for q in self.mod.ir.actions[a].params if not q.direction]) for a in td.actions]
        na = max(data_counts + [0]) or 1
        kv, km, ai, args, cnt = [], [], [], [], []
        gsz, gai, gargs = [], [], []
        metered = t.meter_kind is not None
        mtr = self.ffi.new("MCELL[]", len(rows) or 1) if metered else self.ffi.NULL
        for e in rows:
            for v, m in e.norm:
                kv += _w2(v)
                km += _w2(m)
            e_ai, e_args = e.ai, e.args
            if e.ref is not None:  # an indirect entry: its member, or its group's members in order
                mbrs = [t.profile.members[e.ref[1]]] if e.ref[0] == "m" else t.profile.ordered(e.ref[1])
                e_ai, e_args = (t.member_ai(mbrs[0].action), mbrs[0].args) if mbrs else (-1, ())
                gsz.append(0 if e.ref[0] == "m" else len(mbrs) or -1)
                for m in mbrs if e.ref[0] == "g" else []:
                    gai.append(t.member_ai(m.action))
                    gargs += _args(m.args, na)
            ai.append(e_ai)
            args += _args(e_args, na)
            cnt += [e.counter[0], e.counter[1]]
            if metered and e.meter is not None:
                _to_c(e.meter, mtr[len(ai) - 1])
        ffi = self.ffi
        rc = self.lib.ss_tbl_load(self.sw, self._tid[name], len(rows), ffi.new("uint64_t[]", kv or [0]),
                                  ffi.new("uint64_t[]", km or [0]), ffi.new("int[]", ai or [0]),
                                  ffi.new("uint64_t[]", args or [0]), ffi.new("uint64_t[]", cnt or [0]), mtr,
                                  ffi.new("int[]", gsz or [0]) if t.profile is not None else ffi.NULL,
                                  len(gai), ffi.new("int[]", gai or [0]), ffi.new("uint64_t[]", gargs or [0]))
        if rc != 0:
            raise MemoryError(f"native switch: cannot load table {name}")
        self._rows[name] = rows

    def _pull(self, name: str) -> None:
        """Copy the direct counters and direct-meter buckets C kept into the Python entries (before
        reading or reloading)."""
        rows = self._rows.get(name)
        if not rows:
            return
        if self.prog.tables[name].direct_counter is not None:
            buf = self.ffi.new("uint64_t[]", 2 * len(rows))
            n = self.lib.ss_tbl_counters(self.sw, self._tid[name], buf, len(rows))
            for i in range(n):
                rows[i].counter[:] = [buf[2 * i], buf[2 * i + 1]]
        if self.inst.tables[name].meter_kind is not None:
            cells = self.ffi.new("MCELL[]", len(rows))
            n = self.lib.ss_tbl_meters(self.sw, self._tid[name], cells, len(rows))
            for i in range(n):
                if rows[i].meter is not None:
                    rows[i].meter.load([*cells[i].burst, *cells[i].tokens, *cells[i].last])

    def _push_default(self, name: str) -> None:
        t = self.inst.tables[name]
        na = max(len(t.default_args), 1)
        args = []
        for v in list(t.default_args) + [0] * (na - len(t.default_args)):
            args += _w2(int(v))
        # the C side sizes default arguments by the table's widest action
        args += [0, 0] * 64
        ai = -1 if t.profile is not None else t.default_ai  # an indirect table's miss runs nothing
        self.lib.ss_tbl_default(self.sw, self._tid[name], ai, self.ffi.new("uint64_t[]", args))

    def _qname(self, table: str) -> str:
        return self._info(table).name

    def table_add(self, table, action, match, params=None, priority=None) -> None:
        super().table_add(table, action, match, params, priority)
        self._sync(self._qname(table))

    def table_modify(self, table, action, match, params=None, priority=None) -> None:
        q = self._qname(table)
        self._pull(q)
        super().table_modify(table, action, match, params, priority)
        self._sync(q)

    def table_delete(self, table, match, priority=None) -> None:
        q = self._qname(table)
        self._pull(q)
        super().table_delete(table, match, priority)
        self._sync(q)

    def table_clear(self, table) -> None:
        q = self._qname(table)
        super().table_clear(table)
        self._rows[q] = []
        self._sync(q)

    def table_add_indirect(self, table, match, member_id=None, group_id=None, priority=None) -> None:
        super().table_add_indirect(table, match, member_id, group_id, priority)
        self._sync(self._qname(table))

    def table_modify_indirect(self, table, match, member_id=None, group_id=None, priority=None) -> None:
        q = self._qname(table)
        self._pull(q)
        super().table_modify_indirect(table, match, member_id, group_id, priority)
        self._sync(q)

    def table_add_one_shot(self, table, match, actions, priority=None) -> None:
        super().table_add_one_shot(table, match, actions, priority)
        self._sync(self._qname(table))

    def table_modify_one_shot(self, table, match, actions, priority=None) -> None:
        q = self._qname(table)
        self._pull(q)
        super().table_modify_one_shot(table, match, actions, priority)
        self._sync(q)

    def _profile_changed(self, prof) -> None:
        for t in prof.tables:
            self._sync(t.info.name)

    def table_set_default(self, table, action, params=None) -> None:
        super().table_set_default(table, action, params)
        self._push_default(self._qname(table))

    def table_reset_default(self, table) -> None:
        super().table_reset_default(table)
        self._push_default(self._qname(table))

    def table_entries(self, table: str) -> list[TableEntry]:
        self._pull(self._qname(table))
        return super().table_entries(table)

    def table_const_entries(self, table: str) -> list[TableEntry]:
        self._pull(self._qname(table))
        return super().table_const_entries(table)

    def direct_counter_read(self, table, match: dict[str, MatchValue], priority=None) -> tuple[int, int]:
        self._pull(self._qname(table))
        return super().direct_counter_read(table, match, priority)

    def direct_counter_write(self, table, match, packets, bytes_, priority=None) -> None:
        q = self._qname(table)
        self._pull(q)
        super().direct_counter_write(table, match, packets, bytes_, priority)
        self._sync(q, pull=False)

    # ------------------------------------------------------------ PRE
    def mc_group_set(self, group_id: int, replicas: list[Replica]) -> None:
        super().mc_group_set(group_id, replicas)
        self._mc_push(group_id, replicas)

    def mc_group_delete(self, group_id: int) -> None:
        super().mc_group_delete(group_id)
        self.lib.ss_mc_set(self.sw, group_id, -1, self.ffi.NULL, self.ffi.NULL)

    def _mc_push(self, gid: int, reps: list[Replica]) -> None:
        ffi = self.ffi
        self.lib.ss_mc_set(self.sw, gid, len(reps), ffi.new("int[]", [r.port for r in reps] or [0]),
                           ffi.new("int[]", [r.rid for r in reps] or [0]))

    def clone_session_set(self, session_id: int, replicas: list[Replica], packet_length_bytes: int = 0,
                          class_of_service: int = 0) -> None:
        super().clone_session_set(session_id, replicas, packet_length_bytes, class_of_service)
        ffi = self.ffi
        self.lib.ss_sess_set(self.sw, session_id, len(replicas),
                             ffi.new("int[]", [r.port for r in replicas] or [0]),
                             ffi.new("int[]", [r.rid for r in replicas] or [0]), packet_length_bytes)

    def clone_session_delete(self, session_id: int) -> None:
        super().clone_session_delete(session_id)
        self.lib.ss_sess_set(self.sw, session_id, -1, self.ffi.NULL, self.ffi.NULL, 0)

    # ------------------------------------------------------------ stateful externs
    def _reg(self, name: str):
        r = self._inst(name, ("register",))
        return r, self.mod.gen.regs[r.name]

    def register_read(self, name: str, index: int) -> int:
        r, rid = self._reg(name)
        if not 0 <= index < r.size:
            raise RuntimeAPIError(f"register {r.name}: index {index} out of range 0..{r.size - 1}")
        buf = self.ffi.new("uint64_t[2]")
        self.lib.ss_reg_access(self.sw, rid, index, buf, 0)
        return (buf[0] | buf[1] << 64) & ((1 << r.width) - 1)

    def register_write(self, name: str, index: int, value: int) -> None:
        r, rid = self._reg(name)
        if not 0 <= index < r.size:
            raise RuntimeAPIError(f"register {r.name}: index {index} out of range 0..{r.size - 1}")
        if not 0 <= value < 1 << r.width:
            raise ValueError(f"register {r.name}: value {value} does not fit in {r.width} bits")
        self.lib.ss_reg_access(self.sw, rid, index, self.ffi.new("uint64_t[2]", _w2(value)), 1)

    def register_reset(self, name: str) -> None:
        _r, rid = self._reg(name)
        self.lib.ss_reg_reset(self.sw, rid)

    def _ctr(self, name: str, index: int):
        c = self._inst(name, ("counter",))
        if not 0 <= index < c.size:
            raise RuntimeAPIError(f"counter {c.name}: index {index} out of range 0..{c.size - 1}")
        return self.mod.gen.ctrs[c.name]

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        buf = self.ffi.new("uint64_t[2]")
        self.lib.ss_ctr_access(self.sw, self._ctr(name, index), index, buf, 0)
        return (buf[0], buf[1])

    def counter_write(self, name: str, index: int, packets: int, bytes_: int) -> None:
        self.lib.ss_ctr_access(self.sw, self._ctr(name, index), index,
                               self.ffi.new("uint64_t[2]", [packets, bytes_]), 1)

    def meter_set_config(self, name: str, index: int | None, config: MeterConfig | None) -> None:
        super().meter_set_config(name, index, config)
        m, idxs = self._meter_cells(name, index)
        mid = self.mod.gen.meters[m.name]
        off = self.ffi.new("MCELL *")
        for i in idxs:
            cell = m.cells.get(i)
            if cell is not None:
                _to_c(cell, off[0])
            else:
                off[0].configured = 0
            self.lib.ss_meter_access(self.sw, mid, i, off, 1)

    def direct_meter_set_config(self, table, match, config, priority=None) -> None:
        q = self._qname(table)
        self._pull(q)
        super().direct_meter_set_config(table, match, config, priority)
        self._sync(q, pull=False)

    def set_clock(self, clock) -> None:
        super().set_clock(clock)
        if clock is None:
            self.lib.ss_set_now(self.sw, 0, 0)

    def seed_random(self, seed: int) -> None:
        super().seed_random(seed)
        self.lib.ss_rng_seed(self.sw, self.inst.state.rng.state)

    def crc_set_parameters(self, params: CrcParams, calc: str | None = None) -> list[str]:
        names = super().crc_set_parameters(params, calc)
        p = params
        for name in names:
            self.lib.ss_crc_set(self.sw, self.mod.gen.crc_ids[name], p.width, p.polynomial,
                                p.initial_remainder, p.final_xor_value, int(p.data_reflected),
                                int(p.remainder_reflected))
        return names

    def value_set_set(self, name: str, members: list) -> None:
        super().value_set_set(name, members)
        vs = self._value_set(name)
        vals, masks = [], []
        for row in vs.members:
            for v, m in row:
                vals += _w2(v)
                masks += _w2(m)
        ffi = self.ffi
        rc = self.lib.ss_vs_load(self.sw, self.mod.ir.value_sets.index(vs.name), len(vs.members),
                                 len(vs.fields),
                                 ffi.new("uint64_t[]", vals or [0]), ffi.new("uint64_t[]", masks or [0]))
        if rc != 0:
            raise MemoryError(f"native switch: cannot load value set {vs.name}")

    def digests(self) -> list[tuple[str, tuple[int, ...]]]:
        out = []
        idp = self.ffi.new("int *")
        vals = self.ffi.new("uint64_t[128]")
        while True:
            n = self.lib.ss_digest_pop(self.sw, idp, vals)
            if n < 0:
                return out
            words = tuple(vals[2 * i] | vals[2 * i + 1] << 64 for i in range(n))
            out.append((self._digest_names[idp[0]], words))


def _to_c(cell: MeterCell, c) -> None:
    """A Python meter cell into a C ``MCELL`` (same fields, same order)."""
    rates, words = cell.state()
    c.rate[0], c.rate[1] = rates
    c.burst[0], c.burst[1], c.tokens[0], c.tokens[1], c.last[0], c.last[1] = words
    c.configured = int(cell.config is not None)


def _w2(v: int) -> list[int]:
    v &= _M128
    return [v & 0xFFFFFFFFFFFFFFFF, v >> 64]


def _args(vals: tuple, na: int) -> list[int]:
    """Action data padded to the table's widest action, as 128-bit word pairs."""
    out: list[int] = []
    for v in list(vals) + [0] * (na - len(vals)):
        out += _w2(int(v))
    return out

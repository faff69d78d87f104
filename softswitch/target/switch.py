"""``Switch``: a loaded v1model program, its packet pipeline (as BMv2 simple_switch) and runtime API."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from pathlib import Path

from p4.config.v1 import p4info_pb2

from .. import compiler, pygen
from ..api import MatchValue, MeterConfig, Replica, RuntimeAPIError, TableEntry
from ..compiler import CompiledProgram, compile_errors
from ..pygen import PyCode
from .crc import CrcParams
from .instances import Instances
from .meters import MeterCell, check_config
from .packet_flow import PacketFlow
from .profiles import Watch


class Switch(PacketFlow):
    """One software switch running one compiled P4 program.  Not thread-safe: callers serialise.

    The switch makes its run-time objects (tables, registers, counters, meters, value sets,
    action profiles, clock, random source) from the program's declarations; switches built from
    one ``CompiledProgram`` share nothing that changes.

    Parameters
    ----------
    compiled : CompiledProgram
        What ``softswitch.compile`` returned.
    cpu_port : int, optional
        The port packets to and from the controller use (P4Runtime packet I/O).
    trace : bool
        Record each packet's parser states, tables and actions in ``last_trace`` (slower;
        the python backend only).

    Raises
    ------
    P4CompileError
        The backend cannot run the program (``NativeSwitch``: a construct outside the native
        subset, no C compiler, or ``trace``).

    Examples
    --------
    >>> from pathlib import Path
    >>> from softswitch import Switch, compile
    >>> from softswitch.api import Lpm
    >>> sw = Switch(compile(Path("tests/softswitch/programs/basic_ipv4.p4")))
    >>> sw.table_add("MyIngress.ipv4_lpm", "MyIngress.ipv4_forward",
    ...              {"hdr.ipv4.dstAddr": Lpm(0x0A000002, 32)}, {"dstAddr": 0xA, "port": 3})
    >>> sw.table_entries("MyIngress.ipv4_lpm")[0].action
    'MyIngress.ipv4_forward'
    >>> frame = bytes.fromhex("000000000a0a000000000b0b080045000018123440004011139c"
    ...                       "0a0000010a000105deadbeef")
    >>> [port for port, _ in sw.process(0, frame)]      # no route to 10.0.1.5: dropped
    []
    """

    backend = "python"

    def __init__(self, compiled: CompiledProgram, cpu_port: int | None = None, trace: bool = False):
        self.compiled = compiled
        self.inst = Instances.make(compiled.program, compiled.ir.custom_crcs())
        super().__init__(compiled.program, self._compile(compiled, trace), self.inst)
        self.cpu_port = cpu_port
        self.source = compiled.source
        self.filename = compiled.filename
        self.p4info = p4info_pb2.P4Info()
        self.p4info.CopyFrom(compiled.p4info)
        self._ports_down: set[int] = set()
        for prof in self.inst.profiles.values():
            prof.port_up = self.port_status

    def _compile(self, compiled: CompiledProgram, trace: bool) -> PyCode | None:
        """The python backend: the program's typed IR compiled to Python closures."""
        return pygen.build(compiled, self.inst, trace)

    # ------------------------------------------------------------ loading
    @classmethod
    def load(cls, path: str | Path, defines: dict[str, str] | None = None, include_dirs: Sequence[str] = (),
             cpu_port: int | None = None, trace: bool = False) -> Switch:
        """``Switch(compile(Path(path), defines, include_dirs), cpu_port, trace)``."""
        compiled = compiler.compile(Path(path), defines, include_dirs)
        with compile_errors(str(path)):
            return cls(compiled, cpu_port, trace)

    @classmethod
    def from_source(cls, text: str, filename: str = "<source>", defines: dict[str, str] | None = None,
                    include_dirs: Sequence[str] = (), cpu_port: int | None = None,
                    trace: bool = False, allow_include: bool = True) -> Switch:
        """``Switch(compile(text, ...), cpu_port, trace)``: a thin convenience."""
        compiled = compiler.compile(text, defines, include_dirs, filename=filename,
                                    allow_include=allow_include)
        with compile_errors(filename):
            return cls(compiled, cpu_port, trace)

    @property
    def header_types(self) -> dict[str, list[tuple[str, int]]]:
        from ..check.fields import field_width
        from ..check.types import HeaderT, VarbitT

        out = {}
        for t in self.prog.decls.header_order:
            if isinstance(t, HeaderT):
                out[t.name] = [(n, ft.max_width if isinstance(ft, VarbitT) else field_width(ft))
                               for n, ft in t.fields]
        return out

    # ------------------------------------------------------------ tables
    def _table(self, name: str):
        info = self.prog.tables.get(name)
        if info is None:
            for i in self.prog.tables.values():
                if i.local == name:
                    info = i
                    break
        if info is None:
            raise RuntimeAPIError(f"no table {name}; tables are {sorted(self.prog.tables)}")
        return self.inst.tables[info.name]

    def table_add(self, table: str, action: str, match: dict[str, MatchValue],
                  params: dict[str, int] | None = None, priority: int | None = None) -> None:
        self._table(table).add(action, match, params, priority)

    def table_modify(self, table: str, action: str, match: dict[str, MatchValue],
                     params: dict[str, int] | None = None, priority: int | None = None) -> None:
        self._table(table).modify(action, match, params, priority)

    def table_delete(self, table: str, match: dict[str, MatchValue], priority: int | None = None) -> None:
        self._table(table).delete(match, priority)

    def table_set_default(self, table: str, action: str, params: dict[str, int] | None = None) -> None:
        self._table(table).set_default(action, params)

    def table_reset_default(self, table: str) -> None:
        self._table(table).reset_default()

    def table_entries(self, table: str) -> list[TableEntry]:
        t = self._table(table)
        return [t.to_entry(e) for e in sorted(t.entries.values(), key=lambda e: e.seq)]

    def table_const_entries(self, table: str) -> list[TableEntry]:
        t = self._table(table)
        return [t.to_entry(e) for e in t.const]

    def table_default(self, table: str) -> TableEntry:
        return self._table(table).default_entry()

    def table_clear(self, table: str) -> None:
        self._table(table).clear()

    # ------------------------------------------------------------ action profiles / selectors
    def _profile(self, name: str):
        info = self.prog.profiles.get(name)
        if info is None:
            found = [i for i in self.prog.profiles.values() if i.name.split(".")[-1] == name]
            info = found[0] if len(found) == 1 else None
        if info is None:
            raise RuntimeAPIError(f"no action profile {name}; profiles are {sorted(self.prog.profiles)}")
        return self.inst.profiles[info.name]

    def _profile_changed(self, prof) -> None:
        """Hook for backends that copy the tables of a profile elsewhere (native)."""

    def act_prof_add_member(self, profile: str, member_id: int, action: str,
                            params: dict[str, int] | None = None) -> None:
        p = self._profile(profile)
        if member_id < 0:
            raise ValueError(f"member id {member_id} is negative")
        p.add_member(member_id, action, params)
        self._profile_changed(p)

    def act_prof_modify_member(self, profile: str, member_id: int, action: str,
                               params: dict[str, int] | None = None) -> None:
        p = self._profile(profile)
        p.modify_member(member_id, action, params)
        self._profile_changed(p)

    def act_prof_delete_member(self, profile: str, member_id: int) -> None:
        p = self._profile(profile)
        p.delete_member(member_id)
        self._profile_changed(p)

    def act_prof_create_group(self, profile: str, group_id: int, members: Sequence[int] = (),
                              weights: Sequence[int] | None = None, max_size: int = 0,
                              watch: Sequence[Watch | None] | None = None) -> None:
        """A selector group; ``weights`` per member (PI replicates a member ``w`` times),
        ``watch`` per member (``profiles.Watch``: the member is inactive while that port is down)."""
        p = self._profile(profile)
        if group_id < 0:
            raise ValueError(f"group id {group_id} is negative")
        p.create_group(group_id, list(members), list(weights) if weights is not None else None, max_size,
                       list(watch) if watch is not None else None)
        self._profile_changed(p)

    def act_prof_modify_group(self, profile: str, group_id: int, members: Sequence[int],
                              weights: Sequence[int] | None = None, max_size: int | None = None,
                              watch: Sequence[Watch | None] | None = None) -> None:
        p = self._profile(profile)
        p.modify_group(group_id, list(members), list(weights) if weights is not None else None, max_size,
                       list(watch) if watch is not None else None)
        self._profile_changed(p)

    def act_prof_group_members(self, profile: str) -> dict[int, list[tuple[int, int, Watch | None]]]:
        """group id -> [(member id, weight, watch)] in the order given (what a read returns)."""
        return {i: [(m, g.weights.get(m, 1), g.watch.get(m)) for m in g.members]
                for i, g in sorted(self._profile(profile).groups.items()) if i >= 0}

    # ------------------------------------------------------------ port status (watch ports)
    def port_set_status(self, port: int, up: bool) -> None:
        """A port went up or down (PI's port status event): group members watching it are
        (de)activated, as PI's ``WatchPortEnforcer`` does on BMv2.  Ports start up."""
        (self._ports_down.discard if up else self._ports_down.add)(port)
        for prof in self.inst.profiles.values():
            if prof.watches(port):
                self._profile_changed(prof)

    def port_status(self, port: int) -> bool:
        return port not in self._ports_down

    def act_prof_delete_group(self, profile: str, group_id: int) -> None:
        p = self._profile(profile)
        p.delete_group(group_id)
        self._profile_changed(p)

    def act_prof_members(self, profile: str) -> dict[int, tuple[str, dict[str, int]]]:
        """member id -> (action, action data), in BMv2 handle order (re-adding them in this order
        keeps every group's member order)."""
        members = sorted(self._profile(profile).members.items(), key=lambda kv: kv[1].handle)
        return {i: (m.action, dict(m.params)) for i, m in members if i >= 0}

    def act_prof_groups(self, profile: str) -> dict[int, list[int]]:
        """group id -> member ids (in the order given)."""
        return {i: list(g.members) for i, g in sorted(self._profile(profile).groups.items()) if i >= 0}

    def table_add_indirect(self, table: str, match: dict[str, MatchValue], member_id: int | None = None,
                           group_id: int | None = None, priority: int | None = None) -> None:
        """An entry of an indirect table pointing at a member or (selector) a group."""
        self._table(table).add_indirect(match, _ref(member_id, group_id), priority)

    def table_modify_indirect(self, table: str, match: dict[str, MatchValue], member_id: int | None = None,
                              group_id: int | None = None, priority: int | None = None) -> None:
        self._table(table).modify_indirect(match, _ref(member_id, group_id), priority)

    def table_add_one_shot(self, table: str, match: dict[str, MatchValue],
                           actions: Sequence[tuple],
                           priority: int | None = None) -> None:
        """An entry of a selector table with its own action set (P4Runtime one-shot): hidden
        members and a group, released with the entry.  Items: ``(action, params)`` or
        ``(action, params, weight, watch)`` (``profiles.ActionProfile.one_shot``)."""
        self._table(table).add_one_shot(match, list(actions), priority)

    def table_modify_one_shot(self, table: str, match: dict[str, MatchValue],
                              actions: Sequence[tuple],
                              priority: int | None = None) -> None:
        self._table(table).modify_one_shot(match, list(actions), priority)

    # ------------------------------------------------------------ PRE
    def mc_group_set(self, group_id: int, replicas: list[Replica]) -> None:
        if not 0 < group_id < 1 << 16:
            raise ValueError(f"multicast group id {group_id} out of range 1..65535")
        _check_replicas(replicas)
        self.mc[group_id] = list(replicas)

    def mc_group_delete(self, group_id: int) -> None:
        if self.mc.pop(group_id, None) is None:
            raise RuntimeAPIError(f"no multicast group {group_id}")

    def mc_groups(self) -> dict[int, list[Replica]]:
        return {k: list(v) for k, v in self.mc.items()}

    def clone_session_set(self, session_id: int, replicas: list[Replica], packet_length_bytes: int = 0,
                          class_of_service: int = 0) -> None:
        if not 0 <= session_id < 1 << 32:
            raise ValueError(f"clone session id {session_id} out of range")
        _check_replicas(replicas)
        self.sessions[session_id] = (list(replicas), packet_length_bytes)

    def clone_session_delete(self, session_id: int) -> None:
        if self.sessions.pop(session_id, None) is None:
            raise RuntimeAPIError(f"no clone session {session_id}")

    def clone_sessions(self) -> dict[int, list[Replica]]:
        return {k: list(v[0]) for k, v in self.sessions.items()}

    # ------------------------------------------------------------ externs
    def _inst(self, name: str, kinds: tuple[str, ...]):
        inst = self.prog.extern_insts.get(name)
        if inst is None:
            for i in self.prog.extern_insts.values():
                if i.name.split(".")[-1] == name and i.extern in kinds:
                    inst = i
        if inst is None or inst.extern not in kinds:
            raise RuntimeAPIError(f"no {'/'.join(kinds)} named {name}")
        return self.inst.externs[inst.name]

    def register_read(self, name: str, index: int) -> int:
        r = self._inst(name, ("register",))
        if not 0 <= index < r.size:
            raise RuntimeAPIError(f"register {r.name}: index {index} out of range 0..{r.size - 1}")
        v = r.cells[index]
        return v & ((1 << r.width) - 1)

    def register_write(self, name: str, index: int, value: int) -> None:
        r = self._inst(name, ("register",))
        if not 0 <= index < r.size:
            raise RuntimeAPIError(f"register {r.name}: index {index} out of range 0..{r.size - 1}")
        if not 0 <= value < 1 << r.width:
            raise ValueError(f"register {r.name}: value {value} does not fit in {r.width} bits")
        if r.signed and value >> (r.width - 1):
            value -= 1 << r.width
        r.cells[index] = value

    def register_reset(self, name: str) -> None:
        r = self._inst(name, ("register",))
        r.cells = [0] * r.size

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        c = self._inst(name, ("counter",))
        if not 0 <= index < c.size:
            raise RuntimeAPIError(f"counter {c.name}: index {index} out of range 0..{c.size - 1}")
        return tuple(c.cells[index])  # type: ignore[return-value]

    def counter_write(self, name: str, index: int, packets: int, bytes_: int) -> None:
        c = self._inst(name, ("counter",))
        if not 0 <= index < c.size:
            raise RuntimeAPIError(f"counter {c.name}: index {index} out of range 0..{c.size - 1}")
        c.cells[index] = [packets, bytes_]

    def direct_counter_read(self, table: str, match: dict[str, MatchValue],
                            priority: int | None = None) -> tuple[int, int]:
        t = self._table(table)
        if t.info.direct_counter is None:
            raise RuntimeAPIError(f"table {t.info.name} has no direct counter")
        return tuple(t.find(match, priority).counter)  # type: ignore[return-value]

    def direct_counter_write(self, table: str, match: dict[str, MatchValue], packets: int, bytes_: int,
                             priority: int | None = None) -> None:
        t = self._table(table)
        if t.info.direct_counter is None:
            raise RuntimeAPIError(f"table {t.info.name} has no direct counter")
        t.find(match, priority).counter[:] = [packets, bytes_]

    # ------------------------------------------------------------ meters, custom CRCs
    def set_clock(self, clock) -> None:
        """Meter time: ``clock()`` gives microseconds since the switch started (None: monotonic)."""
        self.inst.state.clock = clock

    def _meter_cells(self, name: str, index: int | None):
        m = self._inst(name, ("meter",))
        if index is None:
            return m, range(m.size)
        if not isinstance(index, int) or not 0 <= index < m.size:
            raise RuntimeAPIError(f"meter {m.name}: index {index} out of range 0..{m.size - 1}")
        return m, [index]

    def meter_set_config(self, name: str, index: int | None, config: MeterConfig | None) -> None:
        """Rates and bursts of one cell, or of every cell when ``index`` is None (BMv2
        ``meter_set_rates`` / ``meter_array_set_rates``); ``None`` makes cells unconfigured."""
        m, idxs = self._meter_cells(name, index)
        if config is not None:
            check_config(config, f"meter {m.name}")
        for i in idxs:
            if config is None:
                m.cells.pop(i, None)
            else:
                m.cells.setdefault(i, MeterCell()).configure(config)

    def meter_get_config(self, name: str, index: int) -> MeterConfig | None:
        m, _ = self._meter_cells(name, index)
        c = m.cells.get(index)
        return None if c is None else c.read_config()

    def _direct_meter_entry(self, table: str, match, priority):
        t = self._table(table)
        if t.meter_kind is None:
            raise RuntimeAPIError(f"table {t.info.name} has no direct meter")
        return t, t.find(match, priority)

    def direct_meter_set_config(self, table: str, match: dict[str, MatchValue], config: MeterConfig | None,
                                priority: int | None = None) -> None:
        t, e = self._direct_meter_entry(table, match, priority)
        if config is None:
            e.meter = None
            return
        check_config(config, f"direct meter of {t.info.name}")
        if e.meter is None:
            e.meter = MeterCell()
        e.meter.configure(config)

    def direct_meter_get_config(self, table: str, match: dict[str, MatchValue],
                                priority: int | None = None) -> MeterConfig | None:
        _t, e = self._direct_meter_entry(table, match, priority)
        return None if e.meter is None else e.meter.read_config()

    def seed_random(self, seed: int) -> None:
        """Restart ``random()`` / ``HashAlgorithm.random`` from ``seed`` (repeatable runs; both
        backends give the same values).  Switches start from a seed drawn from the OS."""
        self.inst.state.rng.seed(seed)

    def crc_calculations(self) -> dict[str, int]:
        """The program's ``crc16_custom``/``crc32_custom`` calculations by BMv2 name (``calc``,
        ``calc_0``...: one per ``hash``/checksum call site, as p4c names them) -> CRC width."""
        return {name: c.width for name, c in self.inst.state.crcs.items()}

    def _crc_targets(self, params: CrcParams, calc: str | None) -> list[str]:
        crcs = self.inst.state.crcs
        if calc is None:
            return [n for n, c in crcs.items() if c.width == params.width]
        c = crcs.get(calc)
        if c is None:
            known = ", ".join(f"{n} (crc{x.width})" for n, x in crcs.items()) or "none"
            raise RuntimeAPIError(f"no custom CRC calculation {calc!r}; the program's are: {known}")
        if c.width != params.width:
            raise RuntimeAPIError(f"calculation {calc} is crc{c.width}_custom: it takes "
                                  f"set_crc{c.width}_parameters, not crc{params.width} parameters")
        return [calc]

    def crc_set_parameters(self, params: CrcParams, calc: str | None = None) -> list[str]:
        """Parameters of custom CRC calculation ``calc`` (BMv2 ``set_crc16_parameters <calc> ...``
        / ``set_crc32_parameters``); ``calc`` None: every calculation of ``params.width``.
        Returns the calculations changed."""
        names = self._crc_targets(params, calc)
        for name in names:
            self.inst.state.crcs[name].configure(params)
        return names

    def crc_get_parameters(self, calc: str) -> CrcParams:
        c = self.inst.state.crcs.get(calc)
        if c is None:
            raise RuntimeAPIError(f"no custom CRC calculation {calc!r}; "
                                  f"the program's are {sorted(self.inst.state.crcs)}")
        return c.params

    # ------------------------------------------------------------ parser value sets (extension)
    def value_set_set(self, name: str, members: list[dict[str, MatchValue]]) -> None:
        """Replace the members of a parser value set (P4Runtime ValueSetEntry semantics)."""
        from ..api import Exact, Lpm, Ternary

        vs = self._value_set(name)
        if len(members) > vs.size:
            raise RuntimeAPIError(f"value set {vs.name} holds at most {vs.size} members")
        out = []
        for m in members:
            unknown = set(m) - {f for f, _, _ in vs.fields}
            if unknown:
                raise RuntimeAPIError(f"value set {vs.name}: unknown field(s) {sorted(unknown)}")
            row = []
            for fname, width, _kind in vs.fields:
                mv = m.get(fname)
                full = (1 << width) - 1
                if isinstance(mv, Exact):
                    v, mask = mv.value, full
                elif isinstance(mv, Ternary):
                    v, mask = mv.value, mv.mask
                elif isinstance(mv, Lpm):
                    v, mask = mv.value, (full << (width - mv.prefix_len)) & full
                elif mv is None:
                    v, mask = 0, 0
                else:
                    raise RuntimeAPIError(f"value set {vs.name}: unsupported match {mv!r} for {fname}")
                if not 0 <= v <= full or not 0 <= mask <= full:
                    raise ValueError(f"value set {vs.name}: {fname} value does not fit in {width} bits")
                row.append((v & mask, mask))
            out.append(tuple(row))
        vs.members = out

    def value_set_members(self, name: str) -> list[tuple[tuple[int, int], ...]]:
        return list(self._value_set(name).members)

    def _value_set(self, name: str):
        vs = self.inst.value_sets.get(name)
        if vs is None:
            for v in self.inst.value_sets.values():
                if v.name.split(".")[-1] == name:
                    vs = v
        if vs is None:
            raise RuntimeAPIError(f"no value set {name}")
        return vs

    def digests(self) -> list[tuple[str, tuple[int, ...]]]:
        out, self.digest_queue = self.digest_queue, deque()
        return list(out)


def _ref(member_id: int | None, group_id: int | None) -> tuple[str, int]:
    if (member_id is None) == (group_id is None):
        raise RuntimeAPIError("an indirect entry names exactly one of member_id and group_id")
    if (member_id if member_id is not None else group_id) < 0:  # type: ignore[operator]
        raise ValueError("member and group ids are not negative")
    return ("m", member_id) if member_id is not None else ("g", group_id)  # type: ignore[return-value]


def _check_replicas(replicas: list[Replica]) -> None:
    for r in replicas:
        if not 0 <= r.port < 511:
            raise ValueError(f"replica port {r.port} out of range 0..510")
        if not 0 <= r.rid < 1 << 16:
            raise ValueError(f"replica rid {r.rid} out of range 0..65535")


def load_program(path: str | Path, **kw) -> Switch:
    """Convenience: ``Switch.load``."""
    return Switch.load(path, **kw)

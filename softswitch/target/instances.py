"""The run-time state of one switch that generated code reads and writes: ``SwitchState``
(packet length, meter clock, direct-meter colour, custom CRCs, random source) and the per-pass
``PacketCtx``; and ``Instances``, the stateful objects a switch makes from a compiled program's
declarations (tables, registers, counters, meters, value sets, action profiles).  None of this is
in a ``CompiledProgram``: each switch built from one gets its own."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .crc import CustomCrc
from .externs import ValueSet, make_extern
from .profiles import ActionProfile
from .rng import XorShift64
from .tables import Table


@dataclass
class SwitchState:
    """Mutable per-switch state the generated code reads: packet length (counters, byte meters),
    the meter clock, the colour of the last direct-meter execution, the custom CRCs (one per
    calculation)."""

    cur_len: int = 0
    clock: Callable[[], int] | None = None  # injected: microseconds since the switch started
    t0_ns: int = field(default_factory=time.monotonic_ns)
    dm_color: int = -1                        # -1: the last table with a direct meter missed
    crcs: dict[str, CustomCrc] = field(default_factory=dict)  # custom CRC per BMv2 calculation
    rng: XorShift64 = field(default_factory=XorShift64)  # random() and HashAlgorithm.random

    def set_calcs(self, calcs: dict[str, int]) -> None:
        """One custom CRC per ``crc16_custom``/``crc32_custom`` calculation (name -> width), each
        starting at its algorithm's defaults (BMv2 ``crc_custom``); kept in place, as generated
        code holds this dict."""
        self.crcs.clear()
        self.crcs.update({name: CustomCrc(w) for name, w in calcs.items()})

    def now_us(self) -> int:
        if self.clock is not None:
            return self.clock()
        return (time.monotonic_ns() - self.t0_ns) // 1000


@dataclass
class PacketCtx:
    """Per-pass context the generated code writes: clone/resubmit/recirculate requests, digests."""

    clone: tuple | None = None
    resubmit: int | None = None
    recirculate: int | None = None
    truncate: int | None = None
    checksum_error: int = 0
    payload: bytes = b""
    digests: list = field(default_factory=list)
    trace: list = field(default_factory=list)
    std: Any = None  # this pass's standard_metadata: a bare mark_to_drop() (BMv2's drop) drops it


@dataclass
class Instances:
    """The stateful objects of one switch, by P4Info name."""

    state: SwitchState
    tables: dict[str, Table]
    externs: dict[str, Any]             # registers, counters, meters (``externs.py``)
    value_sets: dict[str, ValueSet]
    profiles: dict[str, ActionProfile]

    @classmethod
    def make(cls, prog, calcs: dict[str, int]) -> Instances:
        """Fresh objects for checked program ``prog`` (``program.Program``): empty tables but for
        the entries the program writes, zeroed cells, one custom CRC per calculation in
        ``calcs`` (name -> width); the meter clock starts now, the random source is seeded."""
        state = SwitchState()
        state.set_calcs(calcs)
        externs = {name: make_extern(inst.extern, inst.obj) for name, inst in prog.extern_insts.items()
                   if inst.extern not in ("action_profile", "action_selector")}
        tables = {}
        for name, info in prog.tables.items():
            dm = prog.extern_insts.get(info.direct_meter) if info.direct_meter else None
            tables[name] = Table(info, state, dm.obj.kind if dm is not None else None)
        profiles = {}
        for name, info in prog.profiles.items():
            prof = profiles[name] = ActionProfile(info)
            for tname in info.tables:
                tables[tname].profile = prof
                prof.tables.append(tables[tname])
        value_sets = {name: ValueSet.of(vs) for name, vs in prog.value_sets.items()}
        return cls(state, tables, externs, value_sets, profiles)


__all__ = ["Instances", "PacketCtx", "SwitchState"]

"""The in-process runtime API of the software target: data types and the contract.

Everything above the core (the STF runner, the P4Runtime server, packet tests
of ``p4src/``) talks to a loaded program only through ``Switch`` as described by
``SwitchAPI`` here.  Names are P4Info names: tables and actions fully qualified
as p4c writes them (``MyIngress.ipv4_lpm``, ``MyIngress.set_nhop``, ``NoAction``),
match fields by their key name (``hdr.ipv4.dstAddr`` or the ``@name`` given),
action parameters by parameter name.  Values are non-negative Python ints that
fit the declared width; a value that does not fit raises ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


class P4CompileError(Exception):
    """The program was rejected.  ``str(err)`` is ``file:line:col: reason``."""

    def __init__(self, reason: str, file: str = "<unknown>", line: int = 0, col: int = 0):
        self.reason, self.file, self.line, self.col = reason, file, line, col
        super().__init__(f"{file}:{line}:{col}: {reason}")


class RuntimeAPIError(Exception):
    """A runtime request was refused (unknown name, bad width, duplicate entry...)."""


class EntryExistsError(RuntimeAPIError):
    """Insert of an entry whose match key (and priority) is already present."""


class EntryNotFoundError(RuntimeAPIError):
    """Modify or delete of an entry that is not present."""


class TableFullError(RuntimeAPIError):
    """Insert into a table that holds ``size`` entries already (P4Runtime: RESOURCE_EXHAUSTED)."""


@dataclass(frozen=True)
class Exact:
    value: int


@dataclass(frozen=True)
class Lpm:
    value: int
    prefix_len: int


@dataclass(frozen=True)
class Ternary:
    value: int
    mask: int


@dataclass(frozen=True)
class Range:
    low: int
    high: int


@dataclass(frozen=True)
class Optional:
    """``optional`` match kind: ``value=None`` is the wildcard."""

    value: int | None


MatchValue = Exact | Lpm | Ternary | Range | Optional


@dataclass
class TableEntry:
    """One entry as stored by a table (what reads return).

    ``match`` omits fields that are wildcards (ternary mask 0, lpm prefix 0,
    optional None, full range), as P4Runtime does.  ``priority`` is None for
    tables whose keys are exact/lpm only.  Higher priority wins (P4Runtime).
    """

    table: str
    match: dict[str, MatchValue]
    action: str
    params: dict[str, int] = field(default_factory=dict)
    priority: int | None = None
    is_default: bool = False
    is_const: bool = False
    counter: tuple[int, int] | None = None  # (packets, bytes) of the table's direct counter
    member_id: int | None = None   # an indirect table's entry: the action profile member it runs
    group_id: int | None = None    # ... or the selector group it picks a member from
    action_set: list[tuple] | None = None  # ... or its one-shot set: (action, params, weight, watch)


@dataclass(frozen=True)
class MeterConfig:
    """Rates and bursts of a two-rate three-colour meter, in P4Runtime's units: rates in
    packets or bytes per second (the meter's ``MeterType``), bursts in packets or bytes."""

    cir: int
    cburst: int
    pir: int
    pburst: int


@dataclass(frozen=True)
class Replica:
    port: int
    rid: int  # egress_rid seen by the egress pipeline ("instance" in P4Runtime)


class SwitchAPI(Protocol):
    """What ``softswitch.Switch`` provides.  Not thread-safe: callers serialise."""

    p4info: object      # p4.config.v1.p4info_pb2.P4Info
    cpu_port: int | None

    # packets
    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Run one frame through the pipeline; return (egress port, frame) in emission order."""

    # tables
    def table_add(self, table: str, action: str, match: dict[str, MatchValue],
                  params: dict[str, int] | None = None, priority: int | None = None) -> None: ...
    def table_modify(self, table: str, action: str, match: dict[str, MatchValue],
                     params: dict[str, int] | None = None, priority: int | None = None) -> None: ...
    def table_delete(self, table: str, match: dict[str, MatchValue],
                     priority: int | None = None) -> None: ...
    def table_set_default(self, table: str, action: str,
                          params: dict[str, int] | None = None) -> None: ...
    def table_reset_default(self, table: str) -> None: ...
    def table_entries(self, table: str) -> list[TableEntry]:
        """Non-default, non-const entries, in insertion order."""
    def table_default(self, table: str) -> TableEntry: ...
    def table_clear(self, table: str) -> None: ...

    # packet replication engine
    def mc_group_set(self, group_id: int, replicas: list[Replica]) -> None: ...
    def mc_group_delete(self, group_id: int) -> None: ...
    def mc_groups(self) -> dict[int, list[Replica]]: ...
    def clone_session_set(self, session_id: int, replicas: list[Replica],
                          packet_length_bytes: int = 0, class_of_service: int = 0) -> None: ...
    def clone_session_delete(self, session_id: int) -> None: ...
    def clone_sessions(self) -> dict[int, list[Replica]]: ...

    # stateful externs
    def register_read(self, name: str, index: int) -> int: ...
    def register_write(self, name: str, index: int, value: int) -> None: ...
    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        """(packets, bytes) of an indirect counter cell."""
    def counter_write(self, name: str, index: int, packets: int, bytes_: int) -> None: ...
    def direct_counter_read(self, table: str, match: dict[str, MatchValue],
                            priority: int | None = None) -> tuple[int, int]: ...
    def digests(self) -> list[tuple[str, tuple[int, ...]]]:
        """Drain queued digests: (P4Info name of the digest struct type, field values)."""

    # introspection and extras (tests, the P4Runtime server)
    header_types: dict[str, list[tuple[str, int]]]  # header type -> [(field, width)] in order
    last_trace: list[str]                           # with Switch.load(..., trace=True)
    def table_const_entries(self, table: str) -> list[TableEntry]: ...
    def direct_counter_write(self, table: str, match: dict[str, MatchValue], packets: int,
                             bytes_: int, priority: int | None = None) -> None: ...
    def register_reset(self, name: str) -> None: ...

    # meters (BMv2's trTCM; ``None`` = unconfigured, every packet GREEN)
    def meter_set_config(self, name: str, index: int | None, config: MeterConfig | None) -> None:
        """Configure one cell, or every cell when ``index`` is None."""
    def meter_get_config(self, name: str, index: int) -> MeterConfig | None: ...
    def direct_meter_set_config(self, table: str, match: dict[str, MatchValue],
                                config: MeterConfig | None, priority: int | None = None) -> None: ...
    def direct_meter_get_config(self, table: str, match: dict[str, MatchValue],
                                priority: int | None = None) -> MeterConfig | None: ...
    def set_clock(self, clock) -> None:
        """Meter time source: a callable returning microseconds since the switch started (tests
        advance it by hand); ``None`` restores the monotonic clock."""

    # custom CRCs (BMv2 set_crc16_parameters / set_crc32_parameters), one per calculation
    def crc_calculations(self) -> dict[str, int]:
        """BMv2 calculation name (``calc``, ``calc_0``... as p4c names them) -> CRC width, for
        every ``crc16_custom``/``crc32_custom`` call site."""
    def crc_set_parameters(self, params, calc: str | None = None) -> list[str]:
        """Parameters (``crc.CrcParams``) of one calculation, or of every calculation of that
        width when ``calc`` is None; returns the calculations changed."""
    def crc_get_parameters(self, calc: str): ...

    # random() and HashAlgorithm.random (rng.py)
    def seed_random(self, seed: int) -> None:
        """Restart the switch's generator from ``seed``: repeatable, equal on both backends."""
    def value_set_set(self, name: str, members: list) -> None: ...

"""Runtime of v1model externs: hash algorithms (as BMv2 computes them) and stateful objects."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from .meters import MeterCell


def _crc16_table() -> list[int]:
    tbl = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
        tbl.append(c)
    return tbl


_CRC16 = _crc16_table()


def crc16(data: bytes) -> int:
    """CRC-16/ARC (poly 0x8005 reflected, init 0, no xorout): BMv2's ``crc16``."""
    c = 0
    for b in data:
        c = (c >> 8) ^ _CRC16[(c ^ b) & 0xFF]
    return c


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE 802.3, reflected, init/xorout 0xFFFFFFFF): BMv2's ``crc32``."""
    return zlib.crc32(data) & 0xFFFFFFFF


def csum16(data: bytes) -> int:
    """Internet checksum (RFC 1071): ones' complement of the ones' complement sum of 16-bit words."""
    if len(data) % 2:
        data += b"\x00"
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def xor16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    x = 0
    for i in range(0, len(data), 2):
        x ^= int.from_bytes(data[i:i + 2], "big")
    return x


def identity(data: bytes) -> int:
    return int.from_bytes(data, "big")


# HashAlgorithm enum order of v1model.p4: crc32, crc32_custom, crc16, crc16_custom, random, identity,
# csum16, xor16.  The *_custom variants are per calculation (``crc.CustomCrc`` in
# ``SwitchState.crcs``, by BMv2 calculation name, set by the control plane).
ALGORITHMS = {"crc32": crc32, "crc16": crc16, "identity": identity, "csum16": csum16, "xor16": xor16}


def hash_functions(state) -> dict:
    """The algorithms one switch computes alike at every call site: the fixed ones and its
    random source (``rng.py``)."""
    return {**ALGORITHMS, "random": state.rng.hash}


def pack_bits(vals: tuple, widths: tuple) -> bytes:
    """Concatenate fields MSB first into bytes, zero-padding the last byte (BMv2 field lists)."""
    v, w = 0, 0
    for x, n in zip(vals, widths, strict=False):
        v = (v << n) | (int(x) & ((1 << n) - 1))
        w += n
    pad = (-w) % 8
    return (v << pad).to_bytes((w + pad) // 8, "big")


@dataclass
class Register:
    name: str
    size: int
    width: int
    signed: bool = False
    cells: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cells = [0] * self.size

    def read(self, i: int, old: int = 0) -> int:
        # BMv2 register_read (simple_switch primitives.cpp): an index >= size logs an error and
        # the destination is not updated, so the caller passes the destination's current value.
        if 0 <= i < self.size:
            return self.cells[i]
        return old

    def write(self, i: int, v: int) -> None:
        # v1model.p4: "When index >= size, no register state is modified."
        if 0 <= i < self.size:
            self.cells[i] = v


@dataclass
class Counter:
    name: str
    size: int
    kind: int  # CounterType: 0 packets, 1 bytes, 2 packets_and_bytes
    cells: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cells = [[0, 0] for _ in range(self.size)]

    def count(self, i: int, nbytes: int) -> None:
        if 0 <= i < self.size:
            c = self.cells[i]
            c[0] += 1
            c[1] += nbytes


@dataclass
class DirectCounter:
    name: str
    kind: int
    table: str | None = None


@dataclass
class Meter:
    """A ``meter`` (indirect: ``size`` cells) or ``direct_meter`` (its cells live in the owning
    table's entries).  Cells are made when the control plane first configures them; an
    unconfigured cell marks GREEN (0) as BMv2 does.  ``kind`` is MeterType: 0 packets, 1 bytes."""

    name: str
    size: int
    kind: int
    direct: bool = False
    table: str | None = None
    cells: dict[int, MeterCell] = field(default_factory=dict)

    def execute(self, i: int, old: int, nbytes: int, now_us: int) -> int:
        # BMv2 execute_meter: out-of-bounds index leaves the destination unchanged
        if not 0 <= i < self.size:
            return old
        c = self.cells.get(i)
        return 0 if c is None else c.execute(nbytes if self.kind else 1, now_us)


def make_extern(extern: str, d) -> Register | Counter | DirectCounter | Meter:
    """The stateful object of one declaration ``d`` (``calls.StatefulExtern``) of extern type
    ``extern``, as a switch starts with it: cells zero, meters unconfigured."""
    if extern == "register":
        return Register(d.name, d.size, d.width, d.signed)
    if extern == "counter":
        return Counter(d.name, d.size, d.kind)
    if extern == "direct_counter":
        return DirectCounter(d.name, d.kind, d.table)
    if extern == "meter":
        return Meter(d.name, d.size, d.kind)
    if extern == "direct_meter":
        return Meter(d.name, 0, d.kind, direct=True, table=d.table)
    raise ValueError(f"extern {extern} has no stateful object")


@dataclass
class ValueSet:
    """A parser value set: members are per-field (value, mask) tuples set by the control plane."""

    name: str
    size: int
    fields: list[tuple[str, int, str]]  # (control-plane name, width, match kind)
    members: list[tuple[tuple[int, int], ...]] = field(default_factory=list)

    @classmethod
    def of(cls, decl) -> ValueSet:
        """The run-time set of a declaration (``parsergen.ValueSetDecl``), empty."""
        return cls(decl.name, decl.size, list(decl.fields))

    def match(self, keys: tuple) -> bool:
        for m in self.members:
            if all((k & mask) == v for k, (v, mask) in zip(keys, m, strict=True)):
                return True
        return False

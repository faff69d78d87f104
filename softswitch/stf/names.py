"""Resolve STF names against a loaded program's P4Info and turn key text into match values.

STF files name tables, actions, key fields, registers and counters loosely (as
p4c's runner allows): the full P4Info name (``MyIngress.ipv4_lpm``) or any
dot-separated suffix of it (``ipv4_lpm``) as long as only one object matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..api import Exact, Lpm, MatchValue, Optional, Range, Ternary
from .syntax import parse_number

# p4.config.v1.MatchField.MatchType numbers
_MATCH_KINDS = {2: "exact", 3: "lpm", 4: "ternary", 5: "range", 6: "optional"}


@dataclass(frozen=True)
class FieldInfo:
    name: str
    width: int
    kind: str  # exact, lpm, ternary, range, optional


@dataclass(frozen=True)
class StfAction:
    name: str
    params: tuple[tuple[str, int], ...]  # (name, width)


@dataclass(frozen=True)
class StfTable:
    name: str
    fields: tuple[FieldInfo, ...]
    actions: tuple[StfAction, ...]

    @property
    def needs_priority(self) -> bool:
        return any(f.kind in ("ternary", "range", "optional") for f in self.fields)


def _suffix_pick(wanted: str, names: list[str], what: str, scope: str = "") -> str:
    """The one name equal to ``wanted`` or ending in ``.wanted``; else a clear error."""
    if wanted in names:
        return wanted
    hits = [n for n in names if n.endswith("." + wanted)]
    where = f" in {scope}" if scope else ""
    if len(hits) == 1:
        return hits[0]
    if not hits:
        known = ", ".join(sorted(names)) or "none"
        raise LookupError(f"no {what} {wanted!r}{where} (known: {known})")
    raise LookupError(f"{what} {wanted!r}{where} is ambiguous: {', '.join(sorted(hits))}")


def _match_kind(mf: object) -> str:
    kind = _MATCH_KINDS.get(int(getattr(mf, "match_type", 0) or 0))
    if kind is None:
        kind = str(getattr(mf, "other_match_type", "") or "")
    if not kind:
        raise LookupError(f"match field {mf.name!r} has no match kind in P4Info")
    return kind


class ProgramNames:
    """Index of a program's P4Info for STF name lookups."""

    def __init__(self, p4info: object):
        actions = {a.preamble.id: StfAction(a.preamble.name,
                                             tuple((p.name, p.bitwidth) for p in a.params))
                   for a in p4info.actions}
        self.tables: dict[str, StfTable] = {}
        for t in p4info.tables:
            fields = tuple(FieldInfo(mf.name, mf.bitwidth, _match_kind(mf)) for mf in t.match_fields)
            acts = tuple(actions[r.id] for r in t.action_refs if r.id in actions)
            self.tables[t.preamble.name] = StfTable(t.preamble.name, fields, acts)
        tnames = {t.preamble.id: t.preamble.name for t in p4info.tables}
        self.profiles = {ap.preamble.name: [tnames[i] for i in ap.table_ids if i in tnames]
                         for ap in getattr(p4info, "action_profiles", [])}
        self.registers = {r.preamble.name: r for r in getattr(p4info, "registers", [])}
        self.counters = {c.preamble.name: c for c in getattr(p4info, "counters", [])}
        self.direct_counters = {c.preamble.name: tnames.get(c.direct_table_id, "")
                                for c in getattr(p4info, "direct_counters", [])}
        self.meters = {m.preamble.name: m for m in getattr(p4info, "meters", [])}

    def table(self, name: str) -> StfTable:
        return self.tables[_suffix_pick(name, list(self.tables), "table")]

    def action(self, table: StfTable, name: str) -> StfAction:
        by_name = {a.name: a for a in table.actions}
        return by_name[_suffix_pick(name, list(by_name), "action", f"table {table.name}")]

    def profile(self, name: str) -> tuple[str, StfTable]:
        """An action profile's P4Info name and one of its tables (whose actions its members run)."""
        full = _suffix_pick(name, list(self.profiles), "action profile")
        if not self.profiles[full]:
            raise LookupError(f"action profile {full} belongs to no table")
        return full, self.tables[self.profiles[full][0]]

    def register(self, name: str) -> str:
        return _suffix_pick(name, list(self.registers), "register")

    def meter(self, name: str) -> str:
        return _suffix_pick(name, list(self.meters), "meter")

    def counter(self, name: str) -> str:
        return _suffix_pick(name, list(self.counters), "counter")

    def direct_counter(self, name: str) -> tuple[str, str]:
        """A direct counter's P4Info name and the name of the table that owns it."""
        full = _suffix_pick(name, list(self.direct_counters), "direct counter")
        return full, self.direct_counters[full]

    def field(self, table: StfTable, name: str) -> FieldInfo:
        # p4c writes header-stack elements as h$0 in some STF files
        name = re.sub(r"\$([0-9]+)", r"[\1]", name)
        by_name = {f.name: f for f in table.fields}
        return by_name[_suffix_pick(name, list(by_name), "key field", f"table {table.name}")]


def _check_width(value: int, width: int, what: str) -> int:
    if value < 0 or value >> width:
        raise ValueError(f"{what}: value {value:#x} does not fit in {width} bits")
    return value


def _dotted(text: str) -> int | None:
    parts = text.split(".")
    if len(parts) == 4 and all(p.isdigit() and int(p) < 256 for p in parts):
        return int.from_bytes(bytes(int(p) for p in parts), "big")
    return None


def _number(text: str, width: int, what: str) -> int:
    dotted = _dotted(text)
    if dotted is not None:
        return _check_width(dotted, width, what)
    try:
        return _check_width(parse_number(text), width, what)
    except ValueError as exc:
        if "does not fit" in str(exc):
            raise
        raise ValueError(f"{what}: {text!r} is not a number") from None


_RADIX = {"0x": (16, 4), "0b": (2, 1), "0o": (8, 3)}


def _wild_digits(text: str) -> tuple[int, int, int] | None:
    """Value, mask and bit count of a radix literal with ``*`` digits (mask covers written digits)."""
    prefix = text[:2].lower()
    if prefix not in _RADIX:
        return None
    base, bits = _RADIX[prefix]
    digits = text[2:].replace("_", "")
    if not digits:
        return None
    value = mask = 0
    full = base - 1
    for d in digits:
        value <<= bits
        mask <<= bits
        if d == "*":
            continue
        value |= int(d, base)
        mask |= full
    return value, mask, bits * len(digits)


def match_value(f: FieldInfo, text: str) -> MatchValue | None:
    """The match value for one key text, or ``None`` when it is a wildcard (to be omitted)."""
    what = f"key {f.name}"
    full = (1 << f.width) - 1
    t = text.strip()
    if f.kind == "exact":
        return Exact(_number(t, f.width, what))
    if t == "*":
        if f.kind in ("ternary", "lpm", "optional", "range"):
            return None
    if f.kind == "optional":
        return Optional(_number(t, f.width, what))
    if f.kind == "range":
        parts = re.split(r"->|\.\.", t)
        if len(parts) == 2:
            low, high = (_number(p, f.width, what) for p in parts)
        elif len(parts) == 1:
            low = high = _number(t, f.width, what)
        else:
            raise ValueError(f"{what}: range {t!r} is not low->high")
        if low > high:
            raise ValueError(f"{what}: range {t!r} has low > high")
        return None if (low, high) == (0, full) else Range(low, high)
    if f.kind == "ternary":
        if "&&&" in t:
            v, m = t.split("&&&", 1)
            value, mask = _number(v, f.width, what), _number(m, f.width, what)
        else:
            wild = _wild_digits(t)
            if wild is not None:  # as p4c: the mask covers the digits written, * digits are 0
                value, mask, _ = wild
                _check_width(value, f.width, what)
                mask &= full
            else:
                value, mask = _number(t, f.width, what), full
        if value & ~mask:
            raise ValueError(f"{what}: value {value:#x} has bits outside mask {mask:#x}")
        return None if mask == 0 else Ternary(value, mask)
    if f.kind == "lpm":
        if "/" in t:
            v, p = t.split("/", 1)
            value = _number(v, f.width, what)
            prefix = _number(p, 16, what + " prefix length")
        else:
            wild = _wild_digits(t) if "*" in t else None
            if wild is not None:  # as p4c: prefix = the non-* digits written
                value, mask, _ = wild
                _check_width(value, f.width, what)
                prefix = bin(mask).count("1")
            else:
                value, prefix = _number(t, f.width, what), f.width
        if prefix > f.width:
            raise ValueError(f"{what}: prefix length {prefix} exceeds width {f.width}")
        host_bits = full >> prefix if prefix < f.width else 0
        if prefix == 0:
            return None
        if value & host_bits:
            raise ValueError(f"{what}: {t!r} has bits set beyond the /{prefix} prefix")
        return Lpm(value, prefix)
    raise ValueError(f"{what}: match kind {f.kind!r} is not supported by the STF runner")


def entry_match(table: StfTable, names: ProgramNames, keys: list[tuple[str, str]]) -> dict[str, MatchValue]:
    """Match dict for ``add``: every exact field must be given; others default to wildcard."""
    out: dict[str, MatchValue] = {}
    given: set[str] = set()
    for name, text in keys:
        f = names.field(table, name)
        if f.name in given:
            raise ValueError(f"key field {f.name} given twice")
        given.add(f.name)
        mv = match_value(f, text)
        if mv is not None:
            out[f.name] = mv
    missing = [f.name for f in table.fields if f.kind == "exact" and f.name not in given]
    if missing:
        raise ValueError(f"table {table.name}: exact key field(s) {', '.join(missing)} not given")
    return out


def action_params(action: StfAction, args: list[tuple[str, int]]) -> dict[str, int]:
    """Check names and widths of action arguments; all parameters must be given."""
    widths = dict(action.params)
    out: dict[str, int] = {}
    for name, value in args:
        if name not in widths:
            raise ValueError(f"action {action.name} has no parameter {name!r} "
                             f"(parameters: {', '.join(widths) or 'none'})")
        out[name] = _check_width(value, widths[name], f"{action.name} parameter {name}")
    missing = [n for n in widths if n not in out]
    if missing:
        raise ValueError(f"action {action.name}: parameter(s) {', '.join(missing)} not given")
    return out

"""Match keys of table entries in canonical form: what the checker validates for the entries a
program writes and the target uses for every control-plane write and lookup (BMv2's and PI's
rules: values fit their width, lpm masks from prefix lengths, don't-care fields)."""

from __future__ import annotations

from typing import Any

from ..api import Exact, Lpm, MatchValue, Optional, Range, RuntimeAPIError, Ternary


def normalise(table: str, names: list[str], kinds: list[str], widths: list[int],
              match: dict[str, MatchValue]) -> tuple[tuple, dict[str, MatchValue], int]:
    """(per key: (value, mask), or (low, high) for range; the match as stored; lpm prefix
    length) of one entry of ``table``; a value that does not fit or a wrong kind is refused."""
    unknown = set(match) - set(names)
    if unknown:
        raise RuntimeAPIError(f"table {table}: unknown match field(s) {sorted(unknown)}; "
                              f"fields are {names}")
    norm, stored, plen = [], {}, 0
    for name, kind, w in zip(names, kinds, widths, strict=False):
        full = (1 << w) - 1
        mv = match.get(name)
        if kind == "exact":
            if mv is None:
                raise RuntimeAPIError(f"table {table}: exact field {name} is required")
            if not isinstance(mv, Exact):
                raise RuntimeAPIError(f"table {table}: field {name} is exact, got {mv!r}")
            fit(mv.value, w, name)
            norm.append((mv.value, full))
            stored[name] = mv
        elif kind == "lpm":
            if mv is None:
                mv = Lpm(0, 0)
            if isinstance(mv, Exact):
                mv = Lpm(mv.value, w)
            if not isinstance(mv, Lpm):
                raise RuntimeAPIError(f"table {table}: field {name} is lpm, got {mv!r}")
            fit(mv.value, w, name)
            if not 0 <= mv.prefix_len <= w:
                raise ValueError(f"{name}: prefix length {mv.prefix_len} out of range 0..{w}")
            m = ((1 << mv.prefix_len) - 1) << (w - mv.prefix_len) if mv.prefix_len else 0
            norm.append((mv.value & m, m))
            plen = mv.prefix_len
            if mv.prefix_len:
                stored[name] = Lpm(mv.value & m, mv.prefix_len)
        elif kind == "ternary":
            if mv is None:
                mv = Ternary(0, 0)
            if isinstance(mv, Exact):
                mv = Ternary(mv.value, full)
            if not isinstance(mv, Ternary):
                raise RuntimeAPIError(f"table {table}: field {name} is ternary, got {mv!r}")
            fit(mv.value, w, name)
            fit(mv.mask, w, name)
            norm.append((mv.value & mv.mask, mv.mask))
            if mv.mask:
                stored[name] = Ternary(mv.value & mv.mask, mv.mask)
        elif kind == "optional":
            if mv is None:
                mv = Optional(None)
            if isinstance(mv, Exact):
                mv = Optional(mv.value)
            if not isinstance(mv, Optional):
                raise RuntimeAPIError(f"table {table}: field {name} is optional, got {mv!r}")
            if mv.value is None:
                norm.append((0, 0))
            else:
                fit(mv.value, w, name)
                norm.append((mv.value, full))
                stored[name] = mv
        elif kind == "range":
            if mv is None:
                mv = Range(0, full)
            if isinstance(mv, Exact):
                mv = Range(mv.value, mv.value)
            if not isinstance(mv, Range):
                raise RuntimeAPIError(f"table {table}: field {name} is range, got {mv!r}")
            fit(mv.low, w, name)
            fit(mv.high, w, name)
            if mv.low > mv.high:
                raise ValueError(f"{name}: range low {mv.low} > high {mv.high}")
            norm.append((mv.low, mv.high))
            if (mv.low, mv.high) != (0, full):
                stored[name] = mv
        else:
            raise RuntimeAPIError(f"match kind {kind} not supported")
    return tuple(norm), stored, plen


def fit(v: Any, w: int, name: str) -> None:
    if not isinstance(v, int) or v < 0 or v >> w:
        raise ValueError(f"{name}: value {v!r} does not fit in {w} bits")


def entry_norms(info) -> list[tuple]:
    """The canonical keys of the entries a table's program writes (``TableInfo.const_entries``),
    in order; refuses one that does not normalise."""
    names = [k.name for k in info.keys]
    kinds = [k.match_kind for k in info.keys]
    widths = [k.width for k in info.keys]
    return [normalise(info.name, names, kinds, widths, dict(zip(names, vals, strict=False)))[0]
            for vals, _a, _args, _prio in info.const_entries]


__all__ = ["entry_norms", "fit", "normalise"]

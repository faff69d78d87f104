"""Match-action table runtime: entries, lookup by match kind, default action, direct counters and
direct meters (executed on a hit, as BMv2 does before the action runs)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..api import (
    EntryExistsError,
    EntryNotFoundError,
    MatchValue,
    RuntimeAPIError,
    TableEntry,
    TableFullError,
)
from ..check.decls import cp_name
from ..check.matchkeys import fit, normalise
from .meters import MeterCell


@dataclass
class _Entry:
    match: dict[str, MatchValue]
    norm: tuple           # per key: (value, mask) for exact/lpm/ternary/optional, (lo, hi) for range
    ai: int
    args: tuple
    priority: int | None
    plen: int = 0         # lpm prefix length
    seq: int = 0
    is_const: bool = False
    counter: list[int] = field(default_factory=lambda: [0, 0])
    ref: tuple[str, int] | None = None   # indirect tables: ("m", member id) or ("g", group id)
    meter: MeterCell | None = None  # the direct meter's cell, made when first configured


class Table:
    """One table; ``lookup`` is called by generated code with a tuple of key values."""

    def __init__(self, info, switch_state, meter_kind: int | None = None):
        self.info = info
        self.st = switch_state  # has .cur_len (bytes of the packet being processed), .now_us()
        self.meter_kind = meter_kind  # MeterType of the direct meter (0 packets, 1 bytes), or None
        self.kinds = [k.match_kind for k in info.keys]
        self.widths = [k.width for k in info.keys]
        self.names = [k.name for k in info.keys]
        self.needs_priority = any(k in ("ternary", "range", "optional") for k in self.kinds)
        self.exact_only = all(k == "exact" for k in self.kinds)
        self.lpm_idx = self.kinds.index("lpm") if "lpm" in self.kinds else None
        self.entries: dict[tuple, _Entry] = {}
        self.const: list[_Entry] = []
        self.seq = 0
        self._exact: dict[tuple, _Entry] = {}
        self._lpm: dict[int, dict[tuple, _Entry]] = {}
        self._plens: list[int] = []
        self._scan: list[_Entry] = []
        da, dargs = info.default
        self.default_ai = info.actions.index(da)
        self.default_args = tuple(dargs)
        self.initial_default = (self.default_ai, self.default_args)
        self.profile = None   # profiles.ActionProfile of an indirect table (program.py sets it)
        rule = getattr(info, "priority_rule", None)
        self.largest_wins = rule.largest_wins if rule is not None else True
        for vals, a, args, prio in info.const_entries:
            match = dict(zip(self.names, vals, strict=False))
            e = self._make(match, info.actions.index(a), tuple(args), prio, const=info.entries_const)
            if info.entries_const:
                self.const.append(e)
            else:  # P4_16 1.2.4 initial entries: ordinary entries the control plane may change
                self.entries[self._key(e.norm, e.priority)] = e
        self._rebuild()

    # ------------------------------------------------------------ lookup
    def lookup(self, key: tuple, h: int = 0):
        """(hit, action index, action data); ``h`` is the selector hash of an indirect table.
        Action index -1 runs no action (an indirect table's miss or empty group, as BMv2)."""
        e = None
        if self.exact_only:
            e = self._exact.get(key)
        elif not self.needs_priority and self.lpm_idx is not None:
            li = self.lpm_idx
            w = self.widths[li]
            kv = key[li]
            for plen in self._plens:
                m = ((1 << plen) - 1) << (w - plen) if plen else 0
                k2 = key[:li] + (kv & m,) + key[li + 1:]
                e = self._lpm[plen].get(k2)
                if e is not None:
                    break
        else:
            for cand in self._scan:
                if self._matches(cand.norm, key):
                    e = cand
                    break
        if e is None:
            if self.meter_kind is not None:
                self.st.dm_color = -1  # BMv2 runs no meter on a miss: read() leaves its target as is
            if self.profile is not None:
                return False, -1, ()
            return False, self.default_ai, self.default_args
        if self.info.direct_counter is not None:
            c = e.counter
            c[0] += 1
            c[1] += self.st.cur_len
        if self.meter_kind is not None:
            m = e.meter
            self.st.dm_color = 0 if m is None else m.execute(
                self.st.cur_len if self.meter_kind else 1, self.st.now_us())
        if e.ref is not None:
            m = self.profile.resolve(e.ref, h)
            if m is None:
                return True, -1, ()
            return True, self.member_ai(m.action), m.args
        return True, e.ai, e.args

    def member_ai(self, action: str) -> int:
        return next(i for i, a in enumerate(self.info.actions) if a.name == action)

    def _matches(self, norm: tuple, key: tuple) -> bool:
        for kind, n, k in zip(self.kinds, norm, key, strict=False):
            if kind == "range":
                if not n[0] <= k <= n[1]:
                    return False
            elif (k & n[1]) != n[0]:
                return False
        return True

    def _rebuild(self) -> None:
        allents = self.const + list(self.entries.values())
        if self.exact_only:
            self._exact = {tuple(v for v, _ in e.norm): e for e in reversed(allents)}
        elif not self.needs_priority and self.lpm_idx is not None:
            self._lpm = {}
            for e in reversed(allents):
                k = tuple(v for v, _ in e.norm)
                self._lpm.setdefault(e.plen, {})[k] = e
            self._plens = sorted(self._lpm, reverse=True)
        else:
            self._scan = self.lookup_order()

    def lookup_order(self) -> list[_Entry]:
        """Entries of a ternary/range/optional table, first match wins (both backends use it)."""
        sign = -1 if self.largest_wins else 1
        rows = self.const + list(self.entries.values())
        return sorted(rows, key=lambda e: (sign * (e.priority or 0), e.seq))

    # ------------------------------------------------------------ entries
    def _normalise(self, match: dict[str, MatchValue]) -> tuple[tuple, dict[str, MatchValue], int]:
        return normalise(self.info.name, self.names, self.kinds, self.widths, match)

    def _make(self, match, ai, args, priority, const=False) -> _Entry:
        norm, stored, plen = self._normalise(match)
        self.seq += 1
        return _Entry(stored, norm, ai, args, priority, plen, self.seq, const)

    def _key(self, norm: tuple, priority: int | None) -> tuple:
        return (norm, priority if self.needs_priority else None)

    def action_index(self, action: str, for_default: bool) -> int:
        for i, a in enumerate(self.info.actions):
            if a.name == action or a.local == action:
                ann = self.info.action_annotations[i]
                if for_default and "tableonly" in ann:
                    raise RuntimeAPIError(f"action {action} is @tableonly in {self.info.name}")
                if not for_default and "defaultonly" in ann:
                    raise RuntimeAPIError(f"action {action} is @defaultonly in {self.info.name}")
                return i
        raise RuntimeAPIError(f"table {self.info.name} has no action {action}; actions are "
                              f"{[a.name for a in self.info.actions]}")

    def action_args(self, ai: int, params: dict[str, int] | None) -> tuple:
        a = self.info.actions[ai]
        params = dict(params or {})
        out = []
        for p in a.data_params:
            pname = cp_name(p)
            if pname not in params:
                raise RuntimeAPIError(f"action {a.name}: missing parameter {pname}")
            v = params.pop(pname)
            w = getattr(p.type, "width", None) or getattr(getattr(p.type, "underlying", None), "width", 1)
            fit(int(v), w, p.name)
            if getattr(p.type, "signed", False) and v >> (w - 1):
                v -= 1 << w
            out.append(v)
        if params:
            raise RuntimeAPIError(f"action {a.name}: unknown parameter(s) {sorted(params)}")
        return tuple(out)

    def _check_prio(self, priority):
        if self.needs_priority:
            if priority is None or priority <= 0:
                raise RuntimeAPIError(f"table {self.info.name} needs a priority > 0 for each entry")
            return priority
        return None

    def _direct_only(self) -> None:
        if self.profile is not None:
            raise RuntimeAPIError(f"table {self.info.name} is indirect (implementation "
                                  f"{self.profile.info.name}): its entries point at members or groups")

    def add(self, action, match, params, priority) -> None:
        self._direct_only()
        if self.info.entries_const:
            raise RuntimeAPIError(f"table {self.info.name} has const entries")
        priority = self._check_prio(priority)
        ai = self.action_index(action, False)
        self._insert(self._make(match, ai, self.action_args(ai, params), priority))

    def _insert(self, e: _Entry) -> None:
        """Store a new entry: refused if its key is taken or the table is full."""
        k = self._key(e.norm, e.priority)
        if k in self.entries:
            raise EntryExistsError(f"table {self.info.name}: entry already exists")
        if len(self.entries) >= self.info.size:
            raise TableFullError(f"table {self.info.name} is full ({self.info.size} entries)")
        self.entries[k] = e
        self._rebuild()

    def modify(self, action, match, params, priority) -> None:
        self._direct_only()
        priority = self._check_prio(priority)
        norm, _s, _p = self._normalise(match)
        k = self._key(norm, priority)
        e = self.entries.get(k)
        if e is None:
            raise EntryNotFoundError(f"table {self.info.name}: no such entry")
        ai = self.action_index(action, False)
        e.ai, e.args = ai, self.action_args(ai, params)
        self._rebuild()

    def delete(self, match, priority) -> None:
        priority = self._check_prio(priority)
        norm, _s, _p = self._normalise(match)
        e = self.entries.pop(self._key(norm, priority), None)
        if e is None:
            raise EntryNotFoundError(f"table {self.info.name}: no such entry")
        if e.ref is not None:
            self.profile.ref(e.ref, -1)
            self.profile.release_one_shot(e.ref)
        self._rebuild()

    # ------------------------------------------------------------ indirect entries
    def _indirect(self, ref: tuple[str, int]):
        if self.profile is None:
            raise RuntimeAPIError(f"table {self.info.name} has no action profile: entries name an action")
        self.profile.check_ref(ref)
        return self.profile

    def add_indirect(self, match, ref: tuple[str, int], priority) -> None:
        """An entry pointing at member ``("m", id)`` or group ``("g", id)`` of the table's profile."""
        prof = self._indirect(ref)
        priority = self._check_prio(priority)
        e = self._make(match, -1, (), priority)
        e.ref = ref
        self._insert(e)
        prof.ref(ref, 1)

    def modify_indirect(self, match, ref: tuple[str, int], priority) -> None:
        prof = self._indirect(ref)
        priority = self._check_prio(priority)
        norm, _s, _p = self._normalise(match)
        e = self.entries.get(self._key(norm, priority))
        if e is None:
            raise EntryNotFoundError(f"table {self.info.name}: no such entry")
        prof.ref(e.ref, -1)
        prof.release_one_shot(e.ref)
        e.ref = ref
        prof.ref(ref, 1)
        self._rebuild()

    def add_one_shot(self, match, actions: list, priority) -> None:
        """An entry running one of ``actions`` [(action, params)] picked by the selector."""
        self._one_shot(self.add_indirect, match, actions, priority)

    def modify_one_shot(self, match, actions: list, priority) -> None:
        self._one_shot(self.modify_indirect, match, actions, priority)

    def _one_shot(self, place, match, actions: list, priority) -> None:
        """The hidden members and group of a one-shot action set, released if ``place`` fails."""
        prof = self._profile_of()
        ref = prof.one_shot(actions)
        try:
            place(match, ref, priority)
        except (RuntimeAPIError, ValueError):
            prof.release_one_shot(ref)
            raise

    def _profile_of(self):
        if self.profile is None:
            raise RuntimeAPIError(f"table {self.info.name} has no action profile: entries name an action")
        return self.profile

    def find(self, match, priority) -> _Entry:
        priority = self._check_prio(priority)
        norm, _s, _p = self._normalise(match)
        e = self.entries.get(self._key(norm, priority))
        if e is None:
            for c in self.const:
                if c.norm == norm:
                    return c
            raise EntryNotFoundError(f"table {self.info.name}: no such entry")
        return e

    def set_default(self, action, params) -> None:
        if self.profile is not None:
            raise RuntimeAPIError(f"table {self.info.name} is indirect: p4c's BMv2 back end gives it "
                                  "no default action to change")
        if self.info.default_const:
            raise RuntimeAPIError(f"table {self.info.name} has a const default action")
        ai = self.action_index(action, True)
        self.default_ai, self.default_args = ai, self.action_args(ai, params)

    def reset_default(self) -> None:
        self.default_ai, self.default_args = self.initial_default

    def clear(self) -> None:
        for e in self.entries.values():
            if e.ref is not None:
                self.profile.ref(e.ref, -1)
                self.profile.release_one_shot(e.ref)
        self.entries.clear()
        self._rebuild()

    def to_entry(self, e: _Entry) -> TableEntry:
        if e.ref is not None:
            shot = e.ref[1] < 0
            return TableEntry(self.info.name, dict(e.match), "", {}, e.priority, False, False,
                              tuple(e.counter) if self.info.direct_counter else None,
                              e.ref[1] if e.ref[0] == "m" else None,
                              e.ref[1] if e.ref[0] == "g" and not shot else None,
                              self.profile.action_set(e.ref) if shot else None)
        a = self.info.actions[e.ai]
        params = {cp_name(p): (v & ((1 << p.type.width) - 1)
                               if isinstance(v, int) and hasattr(p.type, "width")
                               else int(v))
                  for p, v in zip(a.data_params, e.args, strict=False)}
        return TableEntry(self.info.name, dict(e.match), a.name, params, e.priority, False, e.is_const,
                          tuple(e.counter) if self.info.direct_counter else None)

    def default_entry(self) -> TableEntry:
        a = self.info.actions[self.default_ai]
        params = {cp_name(p): int(v) for p, v in zip(a.data_params, self.default_args, strict=False)}
        return TableEntry(self.info.name, {}, a.name, params, None, True, self.info.default_const)

"""Table entries written in the program: ``const entries`` and P4_16 1.2.4 initial ``entries``.

Keysets are checked as p4c's BMv2 back end checks them (an lpm mask must be a prefix, an
optional key takes a value or ``_``, a range only ``lo .. hi``, an exact key only a value), so a
bad entry is a ``P4CompileError`` at the entry instead of a runtime error later.

Priorities (held as in P4Runtime: the larger number wins, ties in textual order):

- ``const entries``: BMv2's order -- an ``@priority(N)`` annotation gives BMv2 priority N, any
  other entry its 1-based position; the smaller BMv2 priority wins.  ``priority = N:`` is an
  error there, as in p4c's ``EntryPriorities`` pass.
- initial ``entries``: p4c's ``EntryPriorities`` -- without ``priority =`` the entries get
  1, 1 + delta, ... counted from the last entry (``largest_priority_wins = true``, the default)
  or from the first; with them, the first entry must have one and the others continue from the
  previous one by ``-delta`` (``+delta`` when the smallest wins); an underflow is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from lark import Tree

from ..api import Exact, Lpm, MatchValue, Optional, Range, Ternary
from .decls import ann_dict
from .exprs import is_const
from .types import BitT, BoolT, EnumT, ErrorT

PRIORITY_KINDS = frozenset({"ternary", "range", "optional"})
#: const entries with @priority: internal priority = BMV2_TOP - BMv2 priority (smaller wins there)
BMV2_TOP = 1 << 32


@dataclass
class PriorityRule:
    """The table properties that decide how entry priorities compare."""

    largest_wins: bool = True
    delta: int = 1


def keyset_values(gen, info, ks: Tree) -> list[MatchValue]:
    """Keyset of one entry -> one match value per key, rejecting what p4c's BMv2 back end does."""
    items = ks.children if ks.data == "ks_tuple" else [ks]
    if not info.keys:
        raise gen.err(ks, f"table {info.local} has entries but no key")
    if len(items) != len(info.keys):
        raise gen.err(ks, f"entry has {len(items)} key values, table {info.local} has {len(info.keys)} keys")
    return [_one_value(gen, it, k) for it, k in zip(items, info.keys, strict=True)]


def _kind(t) -> str:
    """What a key of type ``t`` can be matched with: bool, error, an enum or a number."""
    if isinstance(t, BoolT):
        return "bool"
    if isinstance(t, ErrorT):
        return "error"
    if isinstance(t, EnumT) and t.underlying is None:
        return f"enum {t.name}"
    return "number"


def _const(gen, node, t: BitT, key=None) -> int:
    c, et = gen.ex(node, t)
    ktype = getattr(key, "type", None)
    if ktype is not None and _kind(ktype) != _kind(et) and not (
            isinstance(et, EnumT) and et.underlying is not None and _kind(ktype) == "number"):
        raise gen.err(node, f"key {key.name}: a value of type {et} cannot match a key of type {ktype}")
    if isinstance(et, BoolT):  # a bool key: true/false match as 1/0 (p4c's BMv2 back end)
        if c not in ("True", "False"):
            raise gen.err(node, "table entry keys must be compile-time constants")
        return int(c == "True")
    if isinstance(et, ErrorT) or isinstance(et, EnumT) and et.underlying is None:
        if not is_const(c):  # error.X / E.A: their codes (the key holds the code)
            raise gen.err(node, "table entry keys must be compile-time constants")
        return int(c)
    c = gen.ex_to(node, t)
    if not is_const(c):
        raise gen.err(node, "table entry keys must be compile-time constants")
    return int(c) & t.mask


def _one_value(gen, it: Tree, k) -> MatchValue:
    kind, w = k.match_kind, k.width
    t = BitT(w)
    if it.data == "ks_default":
        if kind == "exact":
            raise gen.err(it, f"key {k.name}: default/_ is not allowed for an exact key")
        return {"lpm": Lpm(0, 0), "ternary": Ternary(0, 0), "optional": Optional(None),
                "range": Range(0, t.mask)}[kind]
    if it.data == "ks_mask":
        v, m = _const(gen, it.children[0], t, k), _const(gen, it.children[1], t)
        if kind == "lpm":
            plen = bin(m).count("1")
            if m != ((1 << plen) - 1) << (w - plen):
                raise gen.err(it, f"key {k.name}: invalid mask for LPM key ({m:#x} is not a prefix)")
            return Lpm(v & m, plen)
        if kind != "ternary":
            raise gen.err(it, f"key {k.name}: a mask (&&&) is not allowed for a key of match kind {kind}")
        return Ternary(v & m, m)
    if it.data == "ks_range":
        if kind != "range":
            raise gen.err(it, f"key {k.name}: a range (..) is not allowed for a key of match kind {kind}")
        lo, hi = _const(gen, it.children[0], t, k), _const(gen, it.children[1], t, k)
        if lo > hi:
            raise gen.err(it, f"key {k.name}: range {lo} .. {hi} is empty")
        return Range(lo, hi)
    v = _const(gen, it.children[0], t, k)
    return {"exact": Exact(v), "lpm": Lpm(v, w), "ternary": Ternary(v, t.mask),
            "optional": Optional(v), "range": Range(v, v)}[kind]


def priority_rule(gen, props: dict[str, Tree]) -> PriorityRule:
    """``largest_priority_wins`` / ``priority_delta`` table properties (P4_16 1.2.4)."""
    rule = PriorityRule()
    if "largest_priority_wins" in props:
        code, _t = gen.ex(props["largest_priority_wins"])
        if code not in ("True", "False"):
            raise gen.err(props["largest_priority_wins"], "largest_priority_wins must be true or false")
        rule.largest_wins = code == "True"
    if "priority_delta" in props:
        node = props["priority_delta"]
        code, _t = gen.ex(node)
        if not is_const(code) or int(code) < 0:
            raise gen.err(node, "priority_delta must be a positive value")
        rule.delta = int(code)
    return rule


def _explicit(gen, ent: Tree) -> int | None:
    prio = ent.children[1]
    if prio is None:
        return None
    node = prio.children[-1]
    code = gen.ex(node if isinstance(node, Tree) else Tree("int_lit", [node]))[0]
    if not is_const(code) or int(code) < 0:
        raise gen.err(prio, "entry priority must be a non-negative constant")
    return int(code)


def _annotated(gen, ent: Tree) -> int | None:
    ann = ent.children[-1]
    if ann is None:
        return None
    vals = ann_dict(ann, gen.d).get("priority")
    if vals is None:
        return None
    if len(vals) != 1 or not isinstance(vals[0], int):
        raise gen.err(ann, "invalid priority value: @priority takes one integer constant")
    return vals[0]


def priorities(gen, info, ents: list[Tree], is_const: bool, rule: PriorityRule) -> list[int | None]:
    """The priority of each entry (None for tables whose keys need none)."""
    needs = any(k.match_kind in PRIORITY_KINDS for k in info.keys)
    explicit = [_explicit(gen, e) for e in ents]
    first = next((e for e, p in zip(ents, explicit, strict=True) if p is not None), None)
    if is_const:
        if first is not None:
            raise gen.err(first, "table with 'const' entries cannot have priorities")
        if not needs:
            return [None] * len(ents)
        bmv2 = [_annotated(gen, e) for e in ents]
        return [BMV2_TOP - (b if b is not None else i + 1) for i, b in enumerate(bmv2)]
    if first is None:
        n = len(ents)
        order = [1 + (n - 1 - i) * rule.delta if rule.largest_wins else 1 + i * rule.delta for i in range(n)]
        return order if needs else [None] * n
    if not needs:
        raise gen.err(info.node, f"table {info.local}: key match type does not require priorities, "
                                 "but some are specified")
    out: list[int | None] = []
    cur = 0
    for i, (ent, p) in enumerate(zip(ents, explicit, strict=True)):
        if p is None and i == 0:
            raise gen.err(ent, "entry must have a priority")
        cur = p if p is not None else cur
        out.append(cur)
        cur = cur - rule.delta if rule.largest_wins else cur + rule.delta
        if cur < 0:
            raise gen.err(info.node, f"table {info.local}: overflow in priority computation")
    return out


def _mask_val(v: MatchValue, width: int) -> tuple[int, int]:
    """(mask, value) of a keyset component: a key k matches iff k & mask == value."""
    full = (1 << width) - 1
    if isinstance(v, Ternary):
        return v.mask, v.value & v.mask
    if isinstance(v, Lpm):
        m = full ^ ((1 << (width - v.prefix_len)) - 1)
        return m, v.value & m
    if isinstance(v, Optional):
        return (0, 0) if v.value is None else (full, v.value)
    if isinstance(v, Exact):
        return full, v.value
    return full, -1  # a range: compared by its bounds only


def _same(a: MatchValue, b: MatchValue, width: int) -> bool:
    if isinstance(a, Range) or isinstance(b, Range):
        return a == b
    return _mask_val(a, width) == _mask_val(b, width)


def _covers(a: MatchValue, b: MatchValue, width: int) -> bool:
    """Does ternary/optional component ``a`` match every key that ``b`` matches?"""
    (ma, va), (mb, vb) = _mask_val(a, width), _mask_val(b, width)
    return ma & mb == ma and va == vb & ma


def warn_shadowed(gen, info, rows: list[tuple[Tree, list[MatchValue]]]) -> None:
    """p4c's CheckTableEntries: an entry with the keys of an earlier one ("Duplicate entry
    keys"), or one whose ternary/optional keys an earlier entry covers, can never be hit.
    p4c warns (the earlier entry wins, as it does here)."""
    seen: list[tuple[Tree, list[MatchValue]]] = []
    for ks, vals in rows:
        for pks, pvals in seen:
            dup, covered = True, True
            for k, a, b in zip(info.keys, pvals, vals, strict=True):
                if _same(a, b, k.width):
                    continue
                dup = False
                if k.match_kind in ("ternary", "optional") and _covers(a, b, k.width):
                    continue
                covered = False
                break
            where = f"line {gen.d.lines.where(pks.meta.line)[1]}" if not pks.meta.empty else "earlier"
            if dup:
                gen.d.warn(ks, "table-keys", f"table {info.local}: duplicate entry keys "
                                             f"(same keys as the entry at {where})")
                break
            if covered:
                gen.d.warn(ks, "table-keys", f"table {info.local}: ternary entry covered by "
                                             f"the previous entry at {where}")
                break
        seen.append((ks, vals))

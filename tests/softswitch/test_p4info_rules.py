"""The softswitch's P4Info follows p4c's rules, for every program of the suites.

p4c's rules, restated here independently of ``softswitch/p4info.py``:

- ids: ``(resource prefix << 24) | (Jenkins one-at-a-time hash of the fully qualified name)``
  (low 24 bits; ``@id`` overrides), prefixes of ``p4info.proto``, all ids distinct;
- aliases: the shortest suffix of the name (at ``.`` boundaries) that no other name ends with;
- actions listed: every non-``@hidden`` action a table can run *and* every action called
  directly from an ``apply`` block (p4c's mid end wraps such a call in a hidden table); an
  action only called from another action is inlined and not listed, nor is an unused one;
- every reference (action refs, const default action, direct resources) resolves.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lark import Tree

from softswitch import Switch
from softswitch.frontend.parser import parse, preprocess

from .unit.helpers import switch

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.p4")) + [ROOT / "p4src" / "dhc.p4"]
PREFIX = {"actions": 0x01, "tables": 0x02, "value_sets": 0x03, "controller_packet_metadata": 0x04,
          "action_profiles": 0x11,
          "counters": 0x12, "direct_counters": 0x13, "meters": 0x14, "direct_meters": 0x15,
          "registers": 0x16, "digests": 0x17}


def oaat(name: str) -> int:
    """Bob Jenkins' one-at-a-time hash (32-bit), as p4c's P4RuntimeSymbolTable uses it."""
    h = 0
    for byte in name.encode():
        h = (h + byte) % 2**32
        h = (h + h * 1024) % 2**32
        h ^= h >> 6
    h = (h + h * 8) % 2**32
    h ^= h >> 11
    return (h + h * 32768) % 2**32


def _objects(info):
    for kind, prefix in PREFIX.items():
        for o in getattr(info, kind):
            yield kind, prefix, o.preamble


def _direct_calls(tree: Tree) -> set[str]:
    """Names called as ``name(...);`` statements in the apply blocks of controls."""
    out: set[str] = set()
    for ctl in tree.find_data("control_decl"):
        body = ctl.children[-1]
        for st in body.find_data("call_stmt"):
            callee = st.children[0]
            if isinstance(callee, Tree) and callee.data == "call":
                fn = callee.children[0]
                if isinstance(fn, Tree) and fn.data == "ident":
                    out.add(str(fn.children[-1]))
    return out


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_p4info_follows_p4c_rules(path: Path):
    sw = Switch.load(str(path), defines={}, include_dirs=[], cpu_port=None)
    info = sw.p4info
    ids = [pre.id for _k, _p, pre in _objects(info)]
    assert len(ids) == len(set(ids)), "ids must be distinct"
    names = [pre.name for _k, _p, pre in _objects(info)]
    for kind, prefix, pre in _objects(info):
        assert pre.id >> 24 == prefix, (kind, pre.name)
        if not any(a.startswith("@id") for a in pre.annotations):
            assert pre.id & 0xFFFFFF == oaat(pre.name) & 0xFFFFFF, pre.name
        assert "@hidden" not in pre.annotations
    for kind in ("tables", "actions"):
        group = [o.preamble.name for o in getattr(info, kind)]
        for o in getattr(info, kind):
            parts = o.preamble.name.split(".")
            want = next(".".join(parts[i:]) for i in range(len(parts) - 1, -1, -1)
                        if sum(n == ".".join(parts[i:]) or n.endswith("." + ".".join(parts[i:]))
                               for n in group) == 1)
            assert o.preamble.alias == want
    action_ids = {a.preamble.id: a.preamble.name for a in info.actions}
    by_table: set[str] = set()
    for t in info.tables:
        assert t.size > 0 and all(m.bitwidth > 0 for m in t.match_fields)
        assert len({m.name for m in t.match_fields}) == len(t.match_fields)
        for ar in t.action_refs:
            by_table.add(action_ids[ar.id])
        if t.const_default_action_id:
            assert t.const_default_action_id in action_ids
        for rid in t.direct_resource_ids:
            assert rid in ids
        if t.implementation_id:  # an action profile / selector that lists the table back
            prof = [p for p in info.action_profiles if p.preamble.id == t.implementation_id]
            assert len(prof) == 1 and t.preamble.id in prof[0].table_ids, t.preamble.name
    for p in info.action_profiles:
        assert p.size > 0 and p.table_ids
        for tid in p.table_ids:
            assert any(t.preamble.id == tid and t.implementation_id == p.preamble.id for t in info.tables)
    direct = _direct_calls(parse(preprocess(str(path), defines={}, include_dirs=[])).tree)
    listed = set(action_ids.values())
    assert by_table <= listed
    extra = {n.split(".")[-1] for n in listed - by_table}
    assert extra <= direct, f"listed but neither in a table nor called from apply: {extra - direct}"
    assert len(names) == len(set(names))


ILOCALS = """
    action in_table(bit<9> port) { sm.egress_spec = port; }
    action only_inner() { hdr.d.w0 = 1; }
    action outer() { only_inner(); }
    action direct(bit<8> v) { hdr.d.w1 = (bit<32>)v; }
    @name("named_direct") action renamed() { hdr.d.w2 = 3; }
    @hidden action hidden_direct() { hdr.d.w3 = 4; }
    action unused() { }
    table t { key = { hdr.eth.dst: exact; } actions = { in_table; outer; } }
"""


def test_directly_called_actions_are_listed():
    """As p4c: direct calls from apply are listed (params too); inlined-only and unused ones are not."""
    sw = switch("t.apply(); direct(8w7); renamed(); hidden_direct();", ilocals=ILOCALS)
    actions = {a.preamble.name: a for a in sw.p4info.actions}
    assert set(actions) == {"I.in_table", "I.outer", "I.direct", "I.named_direct", "NoAction"}
    assert [(p.id, p.name, p.bitwidth) for p in actions["I.direct"].params] == [(1, "v", 8)]
    assert actions["I.direct"].preamble.id == (0x01 << 24) | (oaat("I.direct") & 0xFFFFFF)


def test_dhc_lists_its_directly_called_actions():
    sw = Switch.load(str(ROOT / "p4src" / "dhc.p4"), defines={}, include_dirs=[], cpu_port=None)
    names = {a.preamble.name for a in sw.p4info.actions}
    assert {"DhcIngress.drops.absorb", "DhcIngress.drops.count_drop", "DhcIngress.forwarding.drop_as",
            "DhcIngress.dhc_index.drop_as"} <= names

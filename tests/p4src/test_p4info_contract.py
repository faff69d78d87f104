"""p4src/README.md's control-plane contract equals the P4Info of the compiled program: every
table, key (name, width, kind), action and parameter (name, width) the controller programs, and
every counter and register named there."""

from __future__ import annotations

import re

import pytest

from tests.p4src.dhcnet import REPO, load_switch

README = (REPO / "p4src" / "README.md").read_text()
MATCH_KIND = {2: "exact", 3: "lpm"}


def section(title: str) -> str:
    start = README.index(title)
    end = README.find("\n### ", start + 1)
    return README[start:end if end > 0 else None]


def contract_tables() -> dict[str, tuple[list[tuple[str, int, str]], str, list[tuple[str, int]]]]:
    out = {}
    for line in section("### Tables").splitlines():
        if not line.startswith("| `Dhc"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = cells[0].strip("`")
        keys = [(k, int(w), "lpm" if "(lpm)" in cells[1] else "exact")
                for k, w in re.findall(r"`(\w+)`: (\d+)", cells[1])]
        m = re.match(r"`([\w.]+)\((.*)\)`", cells[2])
        assert m, f"README row for {name}: cannot read action {cells[2]!r}"
        params = [(p, int(w)) for p, w in re.findall(r"(\w+): (\d+)", m.group(2))]
        out[name] = (keys, m.group(1), params)
    return out


@pytest.fixture(scope="module")
def p4info():
    return load_switch(lanes=4).p4info


def test_tables_match_readme(p4info) -> None:
    contract = contract_tables()
    assert len(contract) == 11
    actions = {a.preamble.id: a for a in p4info.actions}
    tables = {t.preamble.name: t for t in p4info.tables}
    for name, (keys, action, params) in contract.items():
        assert name in tables, f"README names table {name}, P4Info has {sorted(tables)}"
        t = tables[name]
        assert [(f.name, f.bitwidth, MATCH_KIND[f.match_type]) for f in t.match_fields] == keys, name
        assert not t.is_const_table, name
        by_name = {actions[r.id].preamble.name: actions[r.id] for r in t.action_refs}
        assert action in by_name, f"{name} has no action {action}: {sorted(by_name)}"
        assert [(p.name, p.bitwidth) for p in by_name[action].params] == params, action


def test_const_tables_are_const(p4info) -> None:
    """Every other table is const (entries in the program); the README lists them all, the K lane
    tables as ``DhcIngress.lanes.lane_<i>_update`` and ``DhcIngress.lanes.lane_<i>_result``."""
    start = README.index("Const tables")
    listed = README[start:README.index("\n\n", start)]
    names = re.findall(r"`(DhcIngress\.[\w.]+)`", listed)
    assert "`DhcIngress.lanes.lane_<i>_update`" in listed
    assert "`DhcIngress.lanes.lane_<i>_result`" in listed
    lanes = {f"DhcIngress.lanes.lane_{i}_{t}" for i in range(4) for t in ("update", "result")}
    tables = {t.preamble.name: t for t in p4info.tables}
    for n in [*names, *lanes]:
        assert tables[n].is_const_table, n
    assert set(tables) == set(contract_tables()) | set(names) | lanes


def test_counters_and_registers_match_readme(p4info) -> None:
    counters = set(re.findall(r"`(Dhc[\w.]+)`", section("### Counters")))
    assert counters == {c.preamble.name for c in p4info.counters}
    regs = section("### Registers")
    for r in p4info.registers:
        short = r.preamble.name.rsplit(".", 1)[1]
        assert r.preamble.name in regs or f"`{short}`" in regs or short.startswith("lane_"), r.preamble.name
    assert {r.preamble.name for r in p4info.registers if "lane_" in r.preamble.name} == {
        f"DhcIngress.lanes.lane_{i}" for i in range(4)}

"""Rule 7 of p4src/README.md: the stage chain.  The table below is the README's stage table in
program order (Tofino build, K = 16).  Reading the actions and keys of the preprocessed source, the
test checks that it is a valid placement under Tofino's dependency rules: a table reads a field
only in a later stage than every earlier writer of it (match and action dependencies), never in a
later stage than a later writer (reverse dependency), two tables of one stage do not write one
field unless they are mutually exclusive, at most 4 register tables (stateful ALUs) share a
stage, and everything fits in 12 stages.  The order of the table is checked against the apply
blocks.  It does not model PHV or memory limits, and gateway conditions (`if`) are covered by
rule 5 (one field against a constant) only."""

from __future__ import annotations

import re

from tests.p4src.test_tofino_rules import _blocks, _source

LANES = 16
# (control, table or directly called action, stage), in program order (p4src/dhc.p4)
CHAIN: list[tuple[str, str, int]] = [
    ("DhcIndex", "local_addr", 0), ("DhcIndex", "host_port", 0), ("DhcIndex", "host_source", 0),
    ("DhcIndex", "job_table", 0), ("DhcIndex", "epoch_table", 0),
    ("DhcIndex", "level_table", 0), ("DhcIndex", "child_table", 0), ("DhcIndex", "arp_check", 0),
    ("DhcIndex", "verdict", 1),
    ("DhcShadow", "compare_epoch", 2),
    ("DhcShadow", "bitmap_set0_update", 3), ("DhcShadow", "bitmap_set1_update", 3),
    ("DhcShadow", "own_set", 4), ("DhcShadow", "count_update", 5), ("DhcShadow", "compute_gap", 6),
    *[("DhcLanes", f"lane_{i}_update", 6 + i // 4) for i in range(LANES)],
    ("DhcLanes", "lanes_result", 10),
    ("DhcCompletion", "decide", 7),
    ("DhcForwarding", "switch_config", 0), ("DhcForwarding", "arp_table", 8),
    ("DhcForwarding", "drop_as", 8), ("DhcForwarding", "ipv4_lpm", 8),
    ("DhcStats", "contribution_stats", 8), ("DhcStats", "completion_stats", 8),
    ("DhcStats", "duplicate_stats", 8), ("DhcStats", "result_stats", 8),
    ("DhcDrops", "count_drop", 9), ("DhcDrops", "absorb", 9),
]
# applied in exclusive branches of one if/else chain
EXCLUSIVE = [{"DhcForwarding.arp_table", "DhcForwarding.drop_as", "DhcForwarding.ipv4_lpm"},
             {"DhcDrops.count_drop", "DhcDrops.absorb"}]
# bare parameter names -> what they are bound to in DhcIngress
BARE = {"ingress_port": "std.ingress_port", "egress_spec": "std.egress_spec", "mcast_grp": "std.mcast_grp",
        "checksum_error": "std.checksum_error", "standard_metadata": "std.drop", "outcome": "outcome",
        "stats_idx": "stats_idx", "drop": "drop", "drop_reason": "drop_reason", "consume": "consume"}
REF = re.compile(r"[A-Za-z_]\w*(?:\.\w+)*")


def _norm(ref: str) -> str | None:
    for prefix in ("hdr.", "meta.dhc.", "meta.", "m."):
        if ref.startswith(prefix):
            return ref[len(prefix):]
    if "." in ref:
        return ref                                   # dhc.epoch, lanes.lane_3, old.lane_3, ...
    return BARE.get(ref)


def _refs(expr: str, params: frozenset[str] = frozenset()) -> set[str]:
    expr = re.sub(r"\[\d+:\d+\]", "", re.sub(r"\((\w+)\)\.", r"\1.", expr))
    return {n for r in REF.findall(expr) if r not in params and (n := _norm(r)) and not r[0].isupper()}


def _effects(block: str, registers: set[str]) -> tuple[set[str], set[str], set[str]]:
    """(reads, writes, registers) of an action: ``(params) body``."""
    head, body = block.split(")", 1)
    params = frozenset(re.findall(r"(\w+)\s*(?:,|$)", head.strip("( ")))
    reads, writes, regs = set(), set(), set()
    for stmt in body.split(";"):
        stmt = stmt.strip().strip("{}").strip()
        if m := re.match(r"(\w+)\.(read|write|count)\((.*)\)$", stmt, flags=re.S):
            if m.group(1) in registers:
                regs.add(m.group(1))
            first, _, rest = m.group(3).partition(",")
            if m.group(2) == "read":
                writes |= _refs(first, params)
                reads |= _refs(rest, params)
            else:
                reads |= _refs(m.group(3), params)
        elif stmt.startswith("mark_to_drop"):
            writes.add("std.drop")
        elif m := re.match(r"(?:bit<\d+>\s+)?([\w.\[\]:]+)\s*=(?!=)(.*)$", stmt, flags=re.S):
            writes |= _refs(m.group(1), params)
            reads |= _refs(m.group(2), params)
    return reads, writes, regs


def _units(src: str) -> dict[str, tuple[set[str], set[str], set[str]]]:
    registers = set(re.findall(r"register\s*<(?:[^<>]|<[^<>]*>)*>\s*\(.*?\)\s*(\w+)\s*;", src))
    out = {}
    for control, cbody in _blocks(src, "control").items():
        actions = {a: _effects(b, registers) for a, b in _blocks(cbody, "action").items()}
        for name, eff in actions.items():
            out[f"{control}.{name}"] = eff
        for table, tbody in _blocks(cbody, "table").items():
            keys = re.search(r"key\s*=\s*{([^}]*)}", tbody)
            reads = (
                set().union(*(_refs(k.split(":")[0]) for k in keys.group(1).split(";") if ":" in k))
                if keys
                else set()
            )
            writes, regs = set(), set()
            for a in re.findall(r"\w+", re.search(r"actions\s*=\s*{([^}]*)}", tbody).group(1)):
                if a in actions:
                    reads |= actions[a][0]
                    writes |= actions[a][1]
                    regs |= actions[a][2]
            out[f"{control}.{table}"] = (reads, writes, regs)
    return out


def _apply_order(body: str) -> list[str]:
    """Names applied or called, in order, in a control's apply block."""
    block = body[body.rindex("apply {"):]
    return [m.group(1) or m.group(2) for m in re.finditer(r"(\w+)\.apply\(|\b(\w+)\([^()]*\);", block)]


def test_chain_is_in_program_order() -> None:
    src = _source({"__TARGET_TOFINO__": "1"})
    controls = _blocks(src, "control")
    instances = dict(re.findall(r"(Dhc\w+)\(\)\s+(\w+)\s*;", controls["DhcIngress"]))
    by_instance = {inst: ctrl for ctrl, inst in instances.items()}
    order = [by_instance[n] for n in _apply_order(controls["DhcIngress"]) if n in by_instance]
    assert order == list(dict.fromkeys(c for c, _, _ in CHAIN))
    for control in order:
        listed = [n for c, n, _ in CHAIN if c == control]
        applied = [n for n in _apply_order(controls[control]) if n in listed]
        assert applied == listed, f"{control}: applied {applied}, chain {listed}"


def test_stage_chain_is_a_valid_placement_in_12_stages() -> None:
    src = _source({"__TARGET_TOFINO__": "1"})
    units = _units(src)
    tables = {f"{c}.{t}" for c, body in _blocks(src, "control").items() for t in _blocks(body, "table")
              if c != "DhcResultRewrite"}                  # egress: a pipeline of its own
    chain = [(f"{c}.{n}", s) for c, n, s in CHAIN]
    assert tables <= {n for n, _ in chain}, (
        f"tables missing from the chain: {sorted(tables - {n for n, _ in chain})}"
    )
    assert max(s for _, s in chain) <= 11
    for stage in range(12):
        regs = [n for n, s in chain if s == stage and units[n][2]]
        assert len(regs) <= 4, f"stage {stage}: {len(regs)} stateful tables {regs}"
    for i, (name, stage) in enumerate(chain):
        reads, writes, _ = units[name]
        for j, (other, ostage) in enumerate(chain):
            if other == name:
                continue
            oreads, owrites, _ = units[other]
            exclusive = any({name, other} <= group for group in EXCLUSIVE)
            if j < i and owrites & reads:
                assert ostage < stage, (
                    f"{name} (stage {stage}) reads {owrites & reads} written by {other} (stage {ostage})"
                )
            if j > i and owrites & reads:
                assert ostage >= stage, (
                    f"{name} (stage {stage}) reads {owrites & reads} before {other} "
                    f"(stage {ostage}) writes it"
                )
            if j < i and owrites & writes and not exclusive:
                assert ostage < stage, f"{name} and {other} both write {owrites & writes} in stage {stage}"

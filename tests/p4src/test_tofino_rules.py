"""The Tofino rules of p4src/README.md ("Tofino", "Rules, as the compiler enforces them"), checked
on the preprocessed source so a change that would bring back one of p4c-tofino's errors fails even
where the compiler is absent (test_real_compilers.py runs the compiler itself; rule 7, the stage
count, only it can check).  Also the two p4c warnings the program must not produce."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.p4src.dhcnet import PROGRAM

#: <tofino/stateful_alu.p4> (RegisterAction), which the Tofino variant includes
TOFINO_INCLUDE = str(Path(__file__).resolve().parent / "tofino_include")


def _source(defines: dict[str, str]) -> str:
    from softswitch import frontend

    text = frontend.preprocess(PROGRAM, defines=defines, include_dirs=[TOFINO_INCLUDE])
    text = text[text.index("header ethernet_h"):]          # the program, not core/v1model
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _blocks(text: str, keyword: str) -> dict[str, str]:
    """name -> body of every ``keyword name(...) { body }`` (balanced braces)."""
    out = {}
    for m in re.finditer(rf"\b{keyword}\s+(\w+)\s*(\([^)]*\))?\s*{{", text):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out[m.group(1)] = (m.group(2) or "") + text[m.end():i - 1]
    return out


@pytest.fixture(scope="module", params=[{"DHC_LANES": "4"}, {"__TARGET_TOFINO__": "1"}], ids=["k4", "tofino"])
def src(request) -> str:
    return _source(request.param)


def test_rule1_no_parser_error(src: str) -> None:
    assert "parser_error" not in src


def test_rule2_each_counter_counted_by_one_action(src: str) -> None:
    actions = _blocks(src, "action")
    for name in re.findall(r"counter\s*\([^;]*\)\s*(\w+)\s*;", src):
        users = [a for a, body in actions.items() if re.search(rf"\b{name}\.count\(", body)]
        assert len(users) == 1, f"counter {name} counted by {users}"
        assert len(set(re.findall(rf"\b{name}\.count\(([^;]*)\);", actions[users[0]]))) == 1


def test_rule3_action_data_never_subtracted(src: str) -> None:
    for name, body in _blocks(src, "action").items():
        params = re.findall(r"bit<\d+>\s+(\w+)", body.split(")", 1)[0])
        for p in params:
            assert not re.search(rf"-\s*{p}\b", body), f"action {name} subtracts its parameter {p}"


def test_rule4_one_register_per_action_one_table_per_register(src: str) -> None:
    registers = re.findall(r"register\s*<(?:[^<>]|<[^<>]*>)*>\s*\(.*?\)\s*(\w+)\s*;", src)
    shadow_state = {"slot_session", "slot_chunk", "bitmap_set0", "bitmap_set1", "slot_count"}
    assert shadow_state | {"lane_0"} <= set(registers)
    actions = _blocks(src, "action")
    tables = {t: set(re.findall(r"\w+", re.search(r"actions\s*=\s*{([^}]*)}", body).group(1)))
              for t, body in _blocks(src, "table").items()}
    # Tofino: a RegisterAction bound to a register is that register's one stateful ALU program;
    # an action that calls ``<instance>.execute(`` touches the register
    bound = re.findall(r"RegisterAction\s*<(?:[^<>]|<[^<>]*>)*>\s*\(\s*(\w+)\s*\)\s*(\w+)\s*=", src)
    reg_actions = {inst: reg for reg, inst in bound}
    assert set(reg_actions.values()) <= set(registers)

    def touches(body: str, r: str) -> bool:
        direct = re.search(rf"\b{r}\.(read|write)\(", body)
        return bool(direct) or any(re.search(rf"\b{i}\.execute\(", body)
                                   for i, reg in reg_actions.items() if reg == r)

    for name, body in actions.items():
        used = {r for r in registers if touches(body, r)}
        assert len(used) <= 1, f"action {name} touches registers {sorted(used)}"
        for r in used:
            assert (
                len(re.findall(rf"\b{r}\.read\(", body)) <= 1
                and len(re.findall(rf"\b{r}\.write\(", body)) <= 1
                and len(re.findall(r"\.execute\(", body)) <= 1
            )
    for r in registers:
        users = {a for a, body in actions.items() if touches(body, r)}
        owners = {t for t, acts in tables.items() if users & acts}
        assert users and len(owners) == 1, f"register {r}: actions {sorted(users)} in tables {sorted(owners)}"
        assert all(users <= tables[t] for t in owners)
        indexes = set(re.findall(rf"\b{r}\.read\(\s*[\w.]+\s*,\s*([^;]*)\);", src))
        indexes |= set(re.findall(rf"\b{r}\.write\(\s*([^,]*\([^)]*\)[^,]*|[^,]*),", src))
        for i, reg in reg_actions.items():
            if reg == r:
                indexes |= set(re.findall(rf"\b{i}\.execute\(\s*([^;]*)\);", src))
        assert len({i.replace(" ", "") for i in indexes}) == 1, f"register {r} indexed by {indexes}"


ATOM = re.compile(
    r"!?[\w.]+\.isValid\(\)|[\w.\[\]:]+\s*(==|!=|<=|>=|<|>)\s*(\d+|0x[0-9a-fA-F]+|[A-Z][A-Z0-9_]*)"
)


def _without_register_actions(text: str) -> str:
    """The source minus RegisterAction bodies: their ``if`` is a stateful ALU's two comparators
    (register word against a packet field), not a gateway, and rule 5 is about gateways."""
    while (m := re.search(r"RegisterAction\s*<(?:[^<>]|<[^<>]*>)*>\s*\(\s*\w+\s*\)\s*\w+\s*=\s*{", text)):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        text = text[:m.start()] + text[i:]
    return text


def test_rule5_conditions_compare_a_field_with_a_constant(src: str) -> None:
    for cond in re.findall(r"\bif\s*\((.*?)\)\s*{", _without_register_actions(src)):
        for atom in re.split(r"&&|\|\|", cond):
            atom = atom.strip()
            assert ATOM.fullmatch(atom), f"condition {cond!r}: {atom!r} is not field-vs-constant"


def _field_bytes(src: str) -> dict[str, dict[str, set[int]]]:
    """header type -> field -> the byte offsets it occupies; ``field[hi:lo]`` slices too."""
    out = {}
    for name, body in _blocks(src, "header").items():
        fields, bit = {}, 0
        for width, field in re.findall(r"bit<(\d+)>\s+(\w+)\s*;", body):
            w = int(width)
            fields[field] = set(range(bit // 8, (bit + w - 1) // 8 + 1))
            for hi in range(w):
                for lo in range(hi + 1):   # network order: bit w-1 of the field comes first
                    first, last = bit + w - 1 - hi, bit + w - 1 - lo
                    fields[f"{field}[{hi}:{lo}]"] = set(range(first // 8, last // 8 + 1))
            bit += w
        out[name] = fields
    return out


def test_rule6_parser_selects_fit_the_match_registers(src: str) -> None:
    """Per state at most 4 bytes of the packet, in at most one 16-bit and two 8-bit matchers."""
    types = dict(re.findall(r"\b(\w+_h)\s+(\w+)\s*;", src))            # header type per instance
    instances = {inst: t for t, inst in types.items()}
    layout = _field_bytes(src)
    for state, body in _blocks(src, "state").items():
        m = re.search(r"select\s*\(([^)]*)\)", body)
        if not m:
            continue
        used: set[tuple[str, int]] = set()
        for expr in m.group(1).split(","):
            _, inst, field = expr.strip().split(".")
            used |= {(inst, b) for b in layout[instances[inst]][field]}
        assert len(used) <= 4, f"state {state} selects on {len(used)} bytes {sorted(used)}"
        assert "parse_arp" != state, "ARP format is checked in ingress (arp_check), not selected on"


def test_const_entry_table_sizes_and_constants_not_warned(src: str) -> None:
    """p4c's mid end warns about a size on a const-entry table, p4c-tofino about none: Tofino
    builds get the number of entries as the size, other builds no size."""
    tofino = "RegisterAction" in src         # the session checks of a __TARGET_TOFINO__ build
    for name, body in _blocks(src, "table").items():
        if "const entries" not in body:
            continue
        size = re.search(r"\bsize\s*=\s*(\d+)\s*;", body)
        if not tofino:
            assert size is None, f"table {name} has const entries and a size"
            continue
        entries = body.split("const entries", 1)[1].split("}", 1)[0]
        count = len(re.findall(r":\s*\w+\s*\([^)]*\)\s*;", entries))
        assert size is not None, f"table {name}: const entries and no size (p4c-tofino picks 512)"
        assert int(size.group(1)) == count, f"table {name}: size {size.group(1)}, {count} entries"
    for line in re.findall(r"^.*\bconst\s+bit<\d+>\s+\w+\s*=.*$", src, flags=re.M):
        if "const default_action" not in line:
            assert '@noWarn("unused")' in line, line


def test_rule8_no_default_action_addresses_a_register(src: str) -> None:
    """p4c-tofino: 'Cannot specify <action> as the default action, as it requires the hash
    distribution unit' for an action that indexes a register by a computed index."""
    actions = _blocks(src, "action")
    with_register = {a for a, body in actions.items() if re.search(r"\b\w+\.(read|write)\(", body)}
    for name, body in _blocks(src, "table").items():
        m = re.search(r"default_action\s*=\s*(\w+)", body)
        assert m, f"table {name} has no default action"
        assert m.group(1) not in with_register, f"table {name}: default action {m.group(1)} uses a register"


def test_rule9_action_data_is_not_widened_or_mixed_in_arithmetic(src: str) -> None:
    """p4c-tofino: 'IR structure not yet handled by the ActionAnalysis pass' for a widened slice of
    action data (``(bit<32>)base[31:1]``); an add of an action parameter is between equal widths."""
    for name, body in _blocks(src, "action").items():
        params = re.findall(r"bit<\d+>\s+(\w+)", body.split(")", 1)[0])
        for p in params:
            assert not re.search(rf"\(bit<\d+>\)\s*{p}\s*\[", body), f"action {name} widens a slice of {p}"
    assert re.search(r"m\.slot\s*=\s*base\[31:1\]\s*\+\s*m\.slot_31\s*;", src)
    meta = _blocks(src, "struct")["dhc_meta_t"]
    widths = {f: int(w) for w, f in re.findall(r"bit<(\d+)>\s+(\w+)\s*;", meta)}
    assert widths["slot"] == widths["slot_31"] == 31


def test_rule10_the_egress_parser_stays_within_160_bytes() -> None:
    """p4c-tofino: 'longest path through parser exceeds maximum parse depth (160B)': Tofino's egress
    parser also extracts the lanes, after 27 bytes of egress intrinsic metadata, so at the Tofino
    default K the headers of a DHC packet are at most 133 bytes (K <= 19)."""
    from softswitch import Switch

    sw = Switch.load(PROGRAM, defines={"__TARGET_TOFINO__": "1", "DHC_TAG_V1MODEL": "1"})
    path = ("ethernet_h", "ipv4_h", "udp_h", "dhc_h", "dhc_lanes_h")
    header_bits = sum(sum(f[1] for f in sw.header_types[h]) for h in path)
    assert 27 + header_bits // 8 <= 160, header_bits // 8


def test_rule11_lanes_are_applied_last_in_ingress(src: str) -> None:
    """A table that follows the lane tables in the program is placed after the last of them
    (p4c-tofino kept `decide` behind `lanes_result`): nothing comes after them in DhcIngress, and
    they are under no `if` (which also pushed `decide` back)."""
    body = _blocks(src, "control")["DhcIngress"]
    apply = body[[m.end() for m in re.finditer(r"\bapply\s*{", body)][-1]:]
    calls = re.findall(r"(\w+)\.apply\(", apply)
    assert calls[-1] == "lanes", calls
    before = apply[:apply.index("lanes.apply(")]
    assert before.count("{") == before.count("}"), "the lanes are applied under an if (11 stages then)"

"""dhcwire spells what p4src/dhc.p4 declares: every P4Info name of ``dhcwire.p4names`` exists in
the compiled program with the right kind, the drop reasons and wire constants equal the program's
``const`` declarations, and header packing round-trips."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dhcwire import addresses, header, lanes, p4names
from tests.p4src.dhcnet import REPO, load_switch

DEFINE_P4 = (REPO / "p4src" / "include" / "define.p4").read_text()


def p4_const(name: str) -> int:
    m = re.search(rf"const bit<\d+> {name} = (0x[0-9a-fA-F]+|\d+);", DEFINE_P4)
    assert m, f"define.p4 declares no const {name}"
    return int(m.group(1), 0)


def p4_define(name: str) -> int:
    m = re.search(rf"#define {name} (\d+)", DEFINE_P4)
    assert m, f"define.p4 has no #define {name}"
    return int(m.group(1))


@pytest.fixture(scope="module")
def p4info():
    return load_switch(lanes=4).p4info


def _names(p4info) -> dict[str, set[str]]:
    return {"T_": {t.preamble.name for t in p4info.tables},
            "A_": {a.preamble.name for a in p4info.actions},
            "C_": {c.preamble.name for c in p4info.counters}}


def test_every_p4name_is_in_the_program(p4info) -> None:
    names = _names(p4info)
    spelled = {k: v for k, v in vars(p4names).items() if k[:2] in names and isinstance(v, str)}
    assert len(spelled) >= 20
    missing = {k: v for k, v in spelled.items() if v not in names[k[:2]]}
    assert not missing


def test_drop_reasons_equal_define_p4() -> None:
    declared = {int(v): n[len("DROP_"):].lower()
                for n, v in re.findall(r"const bit<8> (DROP_\w+) = (\d+);", DEFINE_P4) if n != "DROP_NONE"}
    assert p4names.DROP_REASONS == declared
    assert p4names.DROP_COUNTER_SIZE == p4_define("DHC_DROP_REASONS")
    assert p4names.DEFAULT_MAX_JOBS == p4_define("DHC_MAX_JOBS")


def test_wire_constants_equal_define_p4() -> None:
    assert header.DHC_UDP_PORT == p4_const("DHC_UDP_PORT")
    assert header.DHC_VERSION == p4_const("DHC_VERSION")
    assert header.PacketType.DATA == p4_const("DHC_TYPE_DATA")
    assert header.PacketType.RESULT == p4_const("DHC_TYPE_RESULT")
    assert lanes.Op.SUM == p4_const("DHC_OP_SUM") and lanes.Op.OR == p4_const("DHC_OP_OR")


@given(st.lists(st.integers(0, 255), min_size=10, max_size=10))
def test_pack_unpack_round_trip(raw: list[int]) -> None:
    values = {f.name: v % (1 << f.bits) for f, v in zip(header.DHC_HEADER_FIELDS, raw, strict=True)}
    data = header.pack_header(**values)
    assert len(data) == header.DHC_HEADER_BYTES and header.unpack_header(data) == values


def test_pack_header_refuses_bad_fields() -> None:
    with pytest.raises(ValueError, match="unknown dhc_h fields"):
        header.pack_header(colour=1)
    with pytest.raises(ValueError, match="does not fit"):
        header.pack_header(epoch=header.MAX_EPOCH + 1)


def test_addresses_round_trip() -> None:
    assert addresses.ip2int("10.0.1.2") == 0x0A000102 and addresses.int2ip(0x0A000102) == "10.0.1.2"
    assert addresses.mac2int("02:00:00:00:01:0a") == 0x02000000010A
    assert addresses.int2mac(0x02000000010A) == "02:00:00:00:01:0a"
    with pytest.raises(ValueError):
        addresses.ip2int("10.0.1")

"""dhc_h in p4src/include/headers.p4 equals dhcwire/header.py DHC_HEADER_FIELDS (names, widths, order),
and the lane header has exactly DHC_LANES 32-bit lanes, as the softswitch front end reads them."""

from __future__ import annotations

import pytest

from dhcwire import header as wire
from tests.p4src.dhcnet import PROGRAM


def _header_fields(lanes: int) -> dict[str, list[tuple[str, int]]]:
    """Header types of the program as (field, width) lists, via the softswitch front end."""
    from softswitch import frontend
    from softswitch.check.decls import Decls
    from softswitch.check.types import BitT, HeaderT

    text = frontend.preprocess(PROGRAM, defines={"DHC_LANES": str(lanes)})
    parsed = frontend.parse(text, PROGRAM)
    decls = Decls(parsed.lines)
    decls.collect(parsed.tree)
    out: dict[str, list[tuple[str, int]]] = {}
    for name, t in decls.types.items():
        if isinstance(t, HeaderT):
            out[name] = [(f, ft.width) for f, ft in t.fields if isinstance(ft, BitT)]
            assert len(out[name]) == len(t.fields), f"{name} has a non-bit<W> field"
    return out


@pytest.mark.parametrize("lanes", [4, 32])
def test_dhc_header_matches_wire(lanes: int) -> None:
    headers = _header_fields(lanes)
    assert headers["dhc_h"] == [(f.name, f.bits) for f in wire.DHC_HEADER_FIELDS]
    assert sum(w for _, w in headers["dhc_h"]) == 8 * wire.DHC_HEADER_BYTES
    assert headers["dhc_lanes_h"] == [(f"lane_{i}", 32) for i in range(lanes)]


def test_all_headers_byte_aligned() -> None:
    for name, fields in _header_fields(4).items():
        assert sum(w for _, w in fields) % 8 == 0, name


def test_loaded_switch_exposes_dhc_header() -> None:
    """The loaded program (not just the parse) declares the same dhc_h."""
    from tests.p4src.dhcnet import load_switch

    sw = load_switch(lanes=4)
    types = getattr(sw, "header_types", None)
    if types is None:
        pytest.fail("softswitch Switch has no header_types; p4src needs "
                    "switch.header_types['dhc_h'] -> [(name, width)] (asked of the core engineer)")
    assert list(types["dhc_h"]) == [(f.name, f.bits) for f in wire.DHC_HEADER_FIELDS]

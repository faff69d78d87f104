"""The program compiles for every supported lane count and default sizes, and rejects bad
compile-time options with the reason given in define.p4 (as p4c's preprocessor would)."""

from __future__ import annotations

import pytest

from tests.p4src.dhcnet import PROGRAM


@pytest.mark.parametrize("lanes", [1, 2, 8, 16, 64, 128, 256])
def test_supported_lane_counts_compile(lanes: int) -> None:
    from softswitch import Switch

    sw = Switch.load(PROGRAM, defines={"DHC_LANES": str(lanes)})
    names = {r.preamble.name for r in sw.p4info.registers}
    assert {f"DhcIngress.lanes.lane_{i}" for i in range(lanes)} <= names
    assert f"DhcIngress.lanes.lane_{lanes}" not in names
    assert sw.header_types["dhc_lanes_h"] == [(f"lane_{i}", 32) for i in range(lanes)]


def test_defaults() -> None:
    from softswitch import Switch

    sw = Switch.load(PROGRAM)
    regs = {r.preamble.name: r.size for r in sw.p4info.registers}
    assert len(regs) == 32 + 5
    assert regs["DhcIngress.lanes.lane_31"] == 4096 and regs["DhcIngress.shadow.bitmap_set0"] == 2048
    assert regs["DhcIngress.shadow.slot_count"] == regs["DhcIngress.dhc_index.slot_session"] == 4096


@pytest.mark.parametrize(("defines", "reason"), [
    ({"DHC_LANES": "5"}, "DHC_LANES must be 1, 2, 4, 8, 16, 32, 64, 128 or 256"),
    ({"DHC_POOL_SIZE": "7"}, "DHC_POOL_SIZE must be even"),
])
def test_bad_options_are_rejected_with_the_reason(defines: dict[str, str], reason: str) -> None:
    from softswitch import P4CompileError, Switch

    with pytest.raises(P4CompileError, match=reason):
        Switch.load(PROGRAM, defines=defines)


def test_tofino_builds_default_to_sixteen_lanes() -> None:
    """p4c's Tofino backend defines __TARGET_TOFINO__; its egress parser reads at most 160 bytes
    (p4src/README.md, "Tofino"), so K = 16 there, 32 elsewhere."""
    from softswitch import Switch

    assert len(Switch.load(PROGRAM).header_types["dhc_lanes_h"]) == 32
    tofino_defaults = {"__TARGET_TOFINO__": "1", "DHC_TAG_V1MODEL": "1"}   # v1model tag check: see define.p4
    tofino = Switch.load(PROGRAM, defines=tofino_defaults)
    assert len(tofino.header_types["dhc_lanes_h"]) == 16
    assert len(Switch.load(PROGRAM, defines={**tofino_defaults, "DHC_LANES": "8"})
               .header_types["dhc_lanes_h"]) == 8

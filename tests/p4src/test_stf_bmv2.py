"""Every STF file of tests/p4src/stf on real BMv2 (simple_switch_grpc), with the softswitch's STF
parser, runner and expectations (``tests/p4src/bmv2_switch.py``).  Skipped, saying why, where
the P4 toolchain (p4c, BMv2) is absent.  Needs root (a network namespace); runs under the
shared network lock like every test that creates interfaces."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from softswitch.stf.runner import run_stf_file
from softswitch.stf.syntax import ExpectPacket, McNodeCreate, SendPacket, load_stf
from tests.p4src.dhcnet import STF_DIR
from tests.toolchain import bmv2_toolchain  # noqa: F401 - a fixture

STF_FILES = sorted(p.name for p in STF_DIR.glob("*.stf"))

def stf_ports(stf) -> list[int]:
    """Ports 0-7 and every port the file sends to, expects on or replicates to: output anywhere
    else than expected then fails, as in the softswitch runs (``all_ports``)."""
    named = {c.port for c in stf.commands if isinstance(c, (SendPacket, ExpectPacket))}
    named |= {p for c in stf.commands if isinstance(c, McNodeCreate) for p in c.ports}
    return sorted(set(range(8)) | named)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (creates a network namespace)")
@pytest.mark.parametrize("name", STF_FILES)
def test_stf_on_bmv2(name: str, tmp_path: Path, bmv2_toolchain) -> None:  # noqa: F811
    from tests.p4src.bmv2_switch import bmv2_switch

    stf = load_stf(str(STF_DIR / name))
    with bmv2_switch(stf.defines, stf_ports(stf), tmp_path, stf.cpu_port) as sw:
        result = run_stf_file(sw, stf, "p4src/dhc.p4 on simple_switch_grpc", all_ports=True)
    assert result.passed, result.report()
    assert result.packets_received == result.packets_expected > 0

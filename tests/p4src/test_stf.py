"""Run the STF files of tests/p4src/stf through the softswitch STF runner."""

from __future__ import annotations

import pytest

from tests.p4src.dhcnet import PROGRAM, STF_DIR
from tests.p4src.stf import make_stf

STF_FILES = sorted(p.name for p in STF_DIR.glob("*.stf"))


def test_stf_files_are_current() -> None:
    """The checked-in STF files are what make_stf.py writes (regenerate after changing it)."""
    assert sorted(make_stf.FILES) == STF_FILES
    for name, make in make_stf.FILES.items():
        stale = f"{name} is stale: run python -m tests.p4src.stf.make_stf"
        assert (STF_DIR / name).read_text() == make(), stale


@pytest.mark.parametrize("name", STF_FILES)
def test_stf(name: str) -> None:
    from softswitch.stf.runner import run_stf

    result = run_stf(PROGRAM, str(STF_DIR / name), all_ports=True)
    assert result.passed, result.report()
    assert result.packets_received == result.packets_expected > 0


@pytest.mark.parametrize("name", STF_FILES)
def test_stf_is_in_p4c_dialect(name: str) -> None:
    """p4c's BMv2 STF runner parses every command as meant (register checks are #!softswitch lines)."""
    from softswitch.stf.syntax import p4c_dialect_problems

    assert p4c_dialect_problems((STF_DIR / name).read_text()) == []

"""Programs p4c rejects must be rejected by the softswitch front end, at the right line.

Each ``negative/*.p4`` starts with ``// expect-error: <line>[:<col>]: <alt>|<alt>...``;
the compile error must be reported in that file at that line (and column, if
given) and its reason must contain one of the alternatives (case-insensitive).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from softswitch.api import P4CompileError

NEG = Path(__file__).parent / "negative"
HEADER = re.compile(r"^//\s*expect-error:\s*(?:(\d+):\s*(?:(\d+):\s*)?)?(.+?)\s*$")
CASES = sorted(NEG.glob("*.p4"))


def _expectation(path: Path) -> tuple[int | None, int | None, list[str]]:
    m = HEADER.match(path.read_text().splitlines()[0])
    assert m, f"{path.name}: first line must be // expect-error: <line>: <reason>"
    line, col, reason = m.groups()
    return (int(line) if line else None, int(col) if col else None,
            [alt.strip() for alt in reason.split("|") if alt.strip()])


def test_enough_negative_programs():
    assert len(CASES) >= 15


def test_template_without_the_error_compiles(tmp_path):
    """The shared skeleton is legal, so each negative fails only for its one planted error."""
    from softswitch import Switch

    sys.path.insert(0, str(NEG))
    try:
        import gen_negative
    finally:
        sys.path.remove(str(NEG))
    prog = tmp_path / "ok.p4"
    prog.write_text(gen_negative.render({}))
    Switch.load(str(prog), defines={}, include_dirs=[], cpu_port=None)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_negative_program_is_rejected(path: Path):
    from softswitch import Switch

    line, col, alts = _expectation(path)
    with pytest.raises(P4CompileError) as ei:
        Switch.load(str(path), defines={}, include_dirs=[], cpu_port=None)
    err = ei.value
    where = f"{path.name}: got {err}"
    assert Path(err.file).name == path.name, where
    if line is not None:
        assert err.line == line, where
    if col is not None:
        assert err.col == col, where
    assert any(re.search(re.escape(a) if "?" not in a else a, err.reason, re.I) for a in alts), where

"""The project's lint rules hold everywhere, line length (E501) included.

ruff runs with the configuration of ``pyproject.toml`` over the whole checkout, as ``make lint``
does; a finding fails the test and is printed (file:line:col and the rule).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: ruff of the venv (the dev extra `make setup` installs)
RUFF = Path(sys.executable).with_name("ruff")


def test_ruff_finds_nothing() -> None:
    proc = subprocess.run([str(RUFF), "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr

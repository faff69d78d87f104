"""The Examples of the softswitch's public entry points run as written (numpydoc style):
``softswitch.compile``, ``Switch`` and the shared P4Runtime byte strings (``p4rt``)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = ["softswitch.compiler", "softswitch.target.switch", "p4rt.bytes_utils"]


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name: str, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples name programs by their path in the repository
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"

"""The Examples in the docstrings of the public entry points run, and print what they say.

Each module below documents its entry points numpydoc-style (Parameters / Returns / Raises /
Examples); ``doctest.testmod`` runs every example.  A module whose examples were removed fails
too (each must keep at least ``MIN_EXAMPLES``), so the documentation cannot silently stop being
checked.  h/ss adds the softswitch's own in ``tests/softswitch/``.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

#: module -> the fewest examples it must run (its documented entry points)
MODULES: dict[str, int] = {
    "bench.e2e.e2e_profile": 1,         # machine_share
    "bench.e2e.e2e_profile_worker": 1,  # machine_ticks
    "dhc.codec": 3,
    "dhc.protocol": 5,
    "dhcwire.header": 8,
    "dhcwire.frames": 4,
    "hostagent.agent": 1,
    "hostagent.torch_hook": 2,   # DHCHookState and the DDP hook dhc_hook
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_examples_run(name: str) -> None:
    if name == "hostagent.torch_hook":
        pytest.importorskip("torch", reason="the DDP hook needs PyTorch (pip install 'dhc[torch]')")
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    documented = [t for t in finder.find(module) if t.examples]
    assert len(documented) >= MODULES[name], (
        f"{name}: {len(documented)} docstrings with examples, expected at least {MODULES[name]}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, raise_on_error=False, report=True)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (see above)"

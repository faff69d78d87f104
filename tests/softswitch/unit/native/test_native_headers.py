"""Header-typed values on both backends: random frames through the header_union, header
assignment, run-time stack index, varbit field list and struct-in-header programs must give
identical output on the native and the python backend (the STF files pin the values)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from softswitch.native.build import compiler
from softswitch.native.switch import NativeSwitch
from softswitch.target.switch import Switch

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

PROGRAMS = Path(__file__).parents[2] / "programs"

# program -> first bytes that select its paths (the rest of each frame is random)
CASES = {
    "header_union": [0, 1, 2, 3, 4, 5, 9],
    "header_assign": [0, 1, 2, 3, 4],
    "stack_index": [0, 1, 2, 7, 200],
    "varbit_checksum": [0, 1, 2, 4, 8, 9],
    "struct_header": [0x12, 0x1F, 0x25, 0x10],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_backends_agree_on_header_values(name: str):
    path = PROGRAMS / f"{name}.p4"
    py = Switch.load(str(path))
    nat = NativeSwitch.load(str(path))
    r = random.Random(name)
    for _ in range(150):
        frame = bytes([r.choice(CASES[name])]) + r.randbytes(r.randint(0, 12))
        assert nat.process(0, frame) == py.process(0, frame), frame.hex()

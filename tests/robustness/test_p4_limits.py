"""Hostile P4 programs: includes in a device config, huge constants, macro bombs, size limits.

Each must end in a P4CompileError naming the problem, quickly, without reading any file."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from softswitch import Switch, frontend
from softswitch.api import P4CompileError

ROOT = Path(__file__).resolve().parents[2]

_SKELETON = """
struct m_t {} struct h_t {}
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t s) {
    state start { transition accept; } }
control V(inout h_t h, inout m_t m) { apply {} }
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply {} }
control C(inout h_t h, inout m_t m) { apply {} }
control D(packet_out p, in h_t h) { apply {} }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
_HEAD = "#include <core.p4>\n#include <v1model.p4>\n"


def _bomb(levels: int = 8) -> str:
    lines = ["#define A0 x x x x x x x x x x"]
    lines += [f"#define A{i} " + " ".join([f"A{i - 1}"] * 10) for i in range(1, levels)]
    return "\n".join(lines) + f"\nA{levels - 1}\n"


@pytest.mark.parametrize("target", ["/proc/self/status", "/etc/passwd", "v1model.p4"])
def test_device_config_include_refused(target: str) -> None:
    with pytest.raises(P4CompileError, match="#include is not allowed"):
        Switch.from_source(f'#include "{target}"\n' + _SKELETON, allow_include=False)


def test_device_config_include_of_fifo_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done: list[BaseException] = []

    def run() -> None:
        try:
            Switch.from_source(f'#include "{fifo}"\n', allow_include=False)
        except P4CompileError as err:
            done.append(err)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    assert done and "#include is not allowed" in str(done[0])


def test_fifo_include_in_a_file_does_not_block(tmp_path: Path) -> None:
    """Even where includes are allowed (a program on disk), a FIFO is not opened."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    src = tmp_path / "p.p4"
    src.write_text(f'#include "{fifo}"\n')
    with pytest.raises(P4CompileError):
        Switch.load(str(src))


def test_preprocessed_dhc_compiles_without_includes() -> None:
    text = frontend.preprocess(str(ROOT / "p4src/dhc.p4"))
    sw = Switch.from_source(text, "<p4_device_config>", allow_include=False)
    assert sw.p4info.tables


@pytest.mark.parametrize("expr", ["1 << 100000000", "(1 << 4000) * (1 << 4000)",
                                  "(1 << 3000) << 3000"])
def test_huge_constant_rejected(expr: str) -> None:
    with pytest.raises(P4CompileError, match="constant too large"):
        Switch.from_source(_HEAD + f"const bit<8> X = (bit<8>)({expr});\n" + _SKELETON)


def test_macro_bomb_rejected() -> None:
    with pytest.raises(P4CompileError, match="macro expansion produces more than"):
        frontend.preprocess_text(_bomb())


def test_program_size_limit(tmp_path: Path) -> None:
    big = "// " + "x" * frontend.MAX_SOURCE_BYTES + "\n"
    with pytest.raises(P4CompileError, match="limit"):
        frontend.preprocess_text(big)
    f = tmp_path / "big.p4"
    f.write_text(big)
    with pytest.raises(P4CompileError, match="limit"):
        frontend.preprocess(str(f))


def test_non_p4_file(tmp_path: Path) -> None:
    f = tmp_path / "x.p4"
    f.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe\x00\x00")
    with pytest.raises(P4CompileError, match="not a P4 source file"):
        frontend.preprocess(str(f))

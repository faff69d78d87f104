"""Bad input files, one of each kind a careless or hostile user hands a CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np


def _binary(p: Path) -> None:
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe" + bytes(range(256)))


def _deep(p: Path) -> None:
    p.write_text("[" * 1500 + "]" * 1500)


def _alias_bomb(p: Path) -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        lines.append(f"{chr(ord('a') + i)}: &{chr(ord('a') + i)} [" + ",".join([f"*{prev}"] * 9) + "]")
    lines.append("switches: *i")
    p.write_text("\n".join(lines) + "\n")


def _npy_object(p: Path) -> None:
    np.save(p, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)


def _npy_complex(p: Path) -> None:
    np.save(p, np.ones(8, dtype=np.complex64))


def _npy_truncated(p: Path) -> None:
    np.save(p, np.ones(1000, dtype=np.float32))
    p.write_bytes(p.read_bytes()[:200])


#: kind -> writer (None: the path is left missing).  Text kinds apply to every file argument.
KINDS: dict[str, Callable[[Path], None] | None] = {
    "missing": None,
    "directory": lambda p: p.mkdir(),
    "empty": lambda p: p.write_text(""),
    "binary": _binary,
    "latin1": lambda p: p.write_bytes("name: caf\xe9\n".encode("latin-1")),
    "json_list": lambda p: p.write_text("[]"),
    "json_number": lambda p: p.write_text("42"),
    "json_truncated": lambda p: p.write_text('{"version": 1, "jobs": ['),
    "yaml_tab_garbage": lambda p: p.write_text("switches:\n\t- : : [\n"),
    "deep_nesting": _deep,
    "alias_bomb": _alias_bomb,
    "huge_line": lambda p: p.write_text("x" * (256 << 10)),
}
#: extra kinds for tensor (.npy) arguments
NPY_KINDS: dict[str, Callable[[Path], None]] = {
    "npy_object": _npy_object,
    "npy_complex": _npy_complex,
    "npy_truncated": _npy_truncated,
}


def make(kind: str, directory: Path, suffix: str = "") -> Path:
    path = directory / f"bad-{kind}{suffix}"
    writer = KINDS.get(kind) or NPY_KINDS.get(kind)
    if writer is not None:
        writer(path)
    return path

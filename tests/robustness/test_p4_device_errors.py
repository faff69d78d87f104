"""Device configs that fail to compile (issue 30, item 6, the softswitch's part): a huge literal is
a P4 error at its position, an ``#error`` after ``#line`` does not echo the server's working
directory, and failed compiles leave no lock files in the program cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2

from softswitch import Switch
from softswitch.api import P4CompileError
from softswitch.server.device import compile_pipeline
from softswitch.server.errors import P4RuntimeError


def _compile_error(source: str) -> str:
    cfg = p4runtime_pb2.ForwardingPipelineConfig(p4_device_config=source.encode())
    with pytest.raises(P4RuntimeError) as info:
        compile_pipeline(cfg, 255)
    return info.value.message


@pytest.mark.parametrize("digits,literal", [(1_000_000, "9"), (5000, "0x" + "f"), (1300, "")])
def test_huge_literal_is_a_located_p4_error(digits: int, literal: str) -> None:
    text = literal + "9" * digits if not literal.startswith("0x") else "0x" + "f" * digits
    msg = _compile_error(f"#line 3 \"prog.p4\"\nconst bit<8> big = {text};\n")
    assert "constant too large" in msg and "exceeds 4096 bits" in msg, msg
    assert "prog.p4:3:" in msg and "unsupported program construct" not in msg


def test_literal_width_prefix_is_bounded() -> None:
    with pytest.raises(P4CompileError, match="width"):
        Switch.from_source("const bit<8> x = " + "9" * 5000 + "w1;\n", allow_include=False)


def test_largest_literal_still_folds() -> None:
    # 4096 bits exactly (1234 decimal digits) passes the token check; the folding check decides
    with pytest.raises(P4CompileError) as info:
        Switch.from_source(f"const bit<8> x = {(1 << 4096) - 1};\n", allow_include=False)
    assert "unsupported program construct" not in str(info.value)


@pytest.mark.parametrize("source", ['#line 7 "x.p4"\n#error boom\n', "#error boom\n",
                                    '# 5 "inner.p4"\n#error boom\n', "#if 1 +\n#endif\n"])
def test_preprocessor_errors_do_not_echo_the_working_directory(source: str) -> None:
    msg = _compile_error(source)
    assert os.getcwd() not in msg, msg
    assert msg.count("/") <= 1   # no absolute path of the server's (the SyntaxError text has none)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("SOFTSWITCH_CACHE", str(d))
    monkeypatch.setenv("SOFTSWITCH_PROGRAM_CACHE", "1")
    return d / "programs"


def test_failed_compiles_leave_no_lock_files(cache: Path) -> None:
    for i in range(20):
        with pytest.raises(P4CompileError):
            Switch.from_source(f"const bit<8> x{i} = ;\n", allow_include=False)   # parse error
        with pytest.raises(P4CompileError):
            Switch.from_source(f"#error failing {i}\n", allow_include=False)    # preprocessor error
    left = sorted(p.name for p in cache.iterdir()) if cache.exists() else []
    assert not [n for n in left if n.endswith(".lock")], left
    # a program that compiles keeps its entries; no lock outlives its build either way
    ok = Switch.from_source("const bit<8> y = 1;\n" + _skeleton(), allow_include=True)
    assert ok is not None and any(p.name.endswith(".prog.pickle") for p in cache.iterdir())
    assert not [p for p in cache.iterdir() if p.suffix == ".lock"]


def _skeleton() -> str:
    from tests.robustness.test_p4_limits import _HEAD, _SKELETON
    return _HEAD + _SKELETON

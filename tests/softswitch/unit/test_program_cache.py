"""The front end's disk cache (``softswitch/progcache.py``): a cached load behaves as a fresh one,
and every input that decides the result (the text, an included file, a file that would shadow an
include, the defines) makes an entry stale."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from softswitch import P4CompileError, Switch, frontend, progcache
from softswitch.api import Lpm
from softswitch.native.build import c_source

ROOT = Path(__file__).resolve().parents[3]
DHC = ROOT / "p4src" / "dhc.p4"
BASIC = ROOT / "tests" / "softswitch" / "programs" / "basic_ipv4.p4"
FRAME = bytes.fromhex("000000000002000000000001080045000014000000004011000000000000000a000202")

MAIN = """#include <core.p4>
#include <v1model.p4>
#include "consts.p4"
header h_t { bit<8> a; }
struct hs { h_t h; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs h, inout m_t m) { apply { } }
control I(inout hs h, inout m_t m, inout standard_metadata_t s) {
    apply { h.h.a = h.h.a + ADD; s.egress_spec = 1; }
}
control E(inout hs h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs h, inout m_t m) { apply { } }
control D(packet_out p, in hs h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("SOFTSWITCH_CACHE", str(d))
    monkeypatch.setenv("SOFTSWITCH_PROGRAM_CACHE", "1")
    return d / "programs"


def _entries(d: Path, suffix: str) -> list[Path]:
    return sorted(d.glob(f"*{suffix}"))


@pytest.mark.parametrize("path,defines", [(DHC, {"DHC_LANES": "32"}), (BASIC, {})])
def test_cached_program_generates_the_same_code(cache, path, defines):
    fresh = Switch.load(path, defines=defines)
    assert len(_entries(cache, ".prog.pickle")) == 1 and len(_entries(cache, ".pre.json")) == 1
    cached = Switch.load(path, defines=defines)
    assert cached.prog is not fresh.prog
    assert cached.code.source == fresh.code.source
    assert c_source(cached.compiled)[0] == c_source(fresh.compiled)[0]
    assert cached.p4info == fresh.p4info
    assert cached.process(0, FRAME) == fresh.process(0, FRAME)


def test_cached_program_has_fresh_state(cache):
    first = Switch.load(BASIC)
    first.table_add("ipv4_lpm", "ipv4_forward", {"hdr.ipv4.dstAddr": Lpm(0x0A000202, 32)},
                    {"dstAddr": 2, "port": 3})
    assert len(first.table_entries("ipv4_lpm")) == 1
    # the pickle is taken before any switch uses the program: no table write reaches it
    assert Switch.load(BASIC).table_entries("ipv4_lpm") == []


def test_an_edited_include_is_seen(cache, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.p4").write_text(MAIN)
    (src / "consts.p4").write_text("const bit<8> ADD = 1;\n")
    frame = bytes([5])
    assert Switch.load(src / "main.p4").process(0, frame) == [(1, bytes([6]))]
    (src / "consts.p4").write_text("const bit<8> ADD = 7;\n")
    assert Switch.load(src / "main.p4").process(0, frame) == [(1, bytes([12]))]


def test_a_file_shadowing_an_include_is_seen(cache, tmp_path):
    lib, src = tmp_path / "lib", tmp_path / "src"
    lib.mkdir()
    src.mkdir()
    (src / "main.p4").write_text(MAIN)
    (lib / "consts.p4").write_text("const bit<8> ADD = 1;\n")
    frame = bytes([5])
    sw = Switch.load(src / "main.p4", include_dirs=[str(lib)])
    assert sw.process(0, frame) == [(1, bytes([6]))]
    # a quoted #include looks in the including file's directory first: a new file there shadows
    (src / "consts.p4").write_text("const bit<8> ADD = 2;\n")
    assert Switch.load(src / "main.p4", include_dirs=[str(lib)]).process(0, frame) == [(1, bytes([7]))]
    (src / "consts.p4").unlink()
    assert Switch.load(src / "main.p4", include_dirs=[str(lib)]).process(0, frame) == [(1, bytes([6]))]


def test_defines_are_part_of_the_key(cache):
    a = frontend.preprocess(str(DHC), {"DHC_LANES": "32"})
    b = frontend.preprocess(str(DHC), {"DHC_LANES": "64"})
    assert a != b
    assert len(_entries(cache, ".pre.json")) == 2
    assert frontend.preprocess(str(DHC), {"DHC_LANES": "32"}) == a


def test_compile_errors_are_never_cached(cache, tmp_path):
    bad = tmp_path / "bad.p4"
    bad.write_text(MAIN.replace('#include "consts.p4"', "const bit<8> ADD = 1;").replace("+ ADD", "+ NOPE"))
    for _ in range(2):
        with pytest.raises(P4CompileError, match="NOPE"):
            Switch.load(bad)
    assert _entries(cache, ".prog.pickle") == []


def test_a_damaged_entry_is_rebuilt(cache):
    fresh = Switch.load(BASIC)
    for p in _entries(cache, ".prog.pickle") + _entries(cache, ".pre.json"):
        p.write_bytes(b"\x80\x05garbage")
    again = Switch.load(BASIC)
    assert again.code.source == fresh.code.source
    assert progcache.clear() == 2


def test_the_cache_can_be_turned_off(cache, monkeypatch):
    monkeypatch.setenv("SOFTSWITCH_PROGRAM_CACHE", "0")
    Switch.load(BASIC)
    assert not cache.exists() or not any(cache.iterdir())


def test_a_directory_others_can_write_is_not_trusted(cache):
    cache.mkdir(parents=True)
    os.chmod(cache, 0o777)
    Switch.load(BASIC)
    assert not any(cache.iterdir())


def test_the_key_holds_the_front_ends_own_code(cache, monkeypatch):
    Switch.load(BASIC)
    monkeypatch.setattr(progcache, "code_version", lambda: "another front end")
    Switch.load(BASIC)
    assert len(_entries(cache, ".prog.pickle")) == 2

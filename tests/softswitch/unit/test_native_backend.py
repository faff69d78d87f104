"""Backend choice: native by default when a C compiler is present, python with one warning
otherwise; a construct the native backend lacks is a clear error when native is asked for."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from softswitch import backend
from softswitch.native import build
from softswitch.native.build import NativeBuildError
from softswitch.native.switch import NativeSwitch
from softswitch.target.switch import Switch

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


@pytest.mark.skipif(build.compiler() is None, reason="no C compiler")
def test_auto_is_native_when_cc_is_present():
    sw = backend.load(PROGRAMS / "basic_ipv4.p4", "auto")
    assert isinstance(sw, NativeSwitch)
    assert type(backend.load(PROGRAMS / "basic_ipv4.p4", "python")) is Switch


def test_without_cc_auto_falls_back_with_one_warning(monkeypatch, caplog):
    monkeypatch.setattr(backend, "compiler", lambda: None)
    monkeypatch.setattr(backend, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="softswitch"):
        a = backend.load(PROGRAMS / "basic_ipv4.p4", "auto")
        b = backend.load(PROGRAMS / "arith.p4", "auto")
    assert type(a) is Switch and type(b) is Switch
    warnings = [r for r in caplog.records if "no C compiler" in r.getMessage()]
    assert len(warnings) == 1


VARBIT = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> t; varbit<160> opt; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h, 32w16); transition accept; }
}
control V(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    table t { key = { hdr.h.opt: exact; } actions = { NoAction; } }
    apply { t.apply(); }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.skipif(build.compiler() is None, reason="no C compiler")
def test_unsupported_construct_is_named(caplog):
    """A varbit wider than 128 bits is a byte array in C, which a table key cannot be."""
    with pytest.raises(NativeBuildError, match=r"vb\.p4.*field opt wider than 128 bits in table"):
        backend.from_source(VARBIT, "vb.p4", "native")
    with caplog.at_level(logging.WARNING, logger="softswitch"):
        sw = backend.from_source(VARBIT, "vb.p4", "auto")
    assert type(sw) is Switch
    assert any("field opt" in r.getMessage() for r in caplog.records)


def test_compiler_rejection_is_a_clear_error(monkeypatch, tmp_path):
    """If the C compiler fails, the error says so and keeps the generated source (no crash)."""
    monkeypatch.setenv("SOFTSWITCH_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "false")
    monkeypatch.setattr(build, "compiler", lambda: "/bin/false")
    sw = Switch.load(PROGRAMS / "basic_ipv4.p4")
    with pytest.raises(NativeBuildError, match="C compiler rejected"):
        build.build(sw.compiled)
    assert list(tmp_path.glob("*.failed.c"))


def test_unknown_backend_name():
    with pytest.raises(ValueError, match="unknown backend"):
        backend.set_default("fpga")


@pytest.mark.skipif(build.compiler() is None, reason="no C compiler")
def test_hashes_over_a_wide_fixed_width_field_agree_with_python():
    """A bit<200> field (a byte array in C) in hash and checksum field lists: the native
    packing gives the python backend's values bit for bit."""
    text = (PROGRAMS / "wide_field.p4").read_text().replace(
        "        hdr.b.hi = hdr.b.lo;",
        "        bit<32> h;\n"
        "        hash(h, HashAlgorithm.crc32, 32w0, {hdr.b.lo, hdr.b.x, hdr.b.hi}, 32w0xffffffff);\n"
        "        bit<32> g;\n"
        "        hash(g, HashAlgorithm.csum16, 32w0, {hdr.b.x, hdr.b.hi, hdr.b.lo}, 32w65536);\n"
        "        hdr.b.hi = hdr.b.lo;\n"
        "        hdr.b2.lo = h[3:0]; hdr.b2.hi = g[3:0];\n"
        "        hdr.c.eq = h[31:24] ^ h[23:16] ^ h[15:8] ^ h[7:0] ^ g[15:8] ^ g[7:0];", 1).replace(
        "pkt.emit(hdr.b); pkt.emit(hdr.c);", "pkt.emit(hdr.b); pkt.emit(hdr.b2); pkt.emit(hdr.c);")
    assert "csum16" in text
    frame = bytes(range(1, 53))
    out = [backend.from_source(text, "wide_hash.p4", b).process(0, frame) for b in ("python", "native")]
    assert out[0] == out[1] and out[0] and out[0][0][1] != frame

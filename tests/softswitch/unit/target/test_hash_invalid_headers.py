"""Hash and checksum inputs leave out the fields of invalid headers, as BMv2's ``BufBuilder``
does (a field of an invalid header adds no bits; metadata always counts), on both backends."""

from __future__ import annotations

import pytest

from softswitch.native.build import compiler
from softswitch.target.externs import crc16, crc32

from ..helpers import frame, switch, words

BACKENDS = ["python", pytest.param("native", marks=pytest.mark.skipif(compiler() is None, reason="no cc"))]

# w7 == 1: x made valid with a = 0xBEEF; w7 == 2: made valid, written, made invalid again
INGRESS = """
        meta.m16 = 16w0x1234;
        if (hdr.d.w7 == 1) { hdr.x.setValid(); hdr.x.a = 16w0xBEEF; }
        if (hdr.d.w7 == 2) { hdr.x.setValid(); hdr.x.a = 16w0xBEEF; hdr.x.setInvalid(); }
        hash(hdr.d.w3, HashAlgorithm.crc16, 32w0, {hdr.d.w0, hdr.x.a, hdr.d.w1}, 64w0x10000);
        hash(hdr.d.w4, HashAlgorithm.crc32, 32w0, {hdr.x, hdr.d.w0}, 64w0x100000000);
        hash(hdr.d.w5, HashAlgorithm.crc16, 32w0, {meta.m16, hdr.x.a}, 64w0x10000);
"""
COMPUTE = "update_checksum(true, {hdr.x.a, hdr.d.w1}, hdr.d.w6, HashAlgorithm.crc32);"


def _b(v: int, n: int) -> bytes:
    return v.to_bytes(n, "big")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_fields_of_invalid_headers_are_left_out(backend: str, mode: int):
    sw = switch(INGRESS, backend=backend, decls="header x_t { bit<16> a; }", hfields="x_t x;",
                compute=COMPUTE)
    w0, w1 = 0x01020304, 0xA0B0C0D0
    out = sw.process(0, frame(w0, w1, 0, 0, 0, 0, 0, mode))
    ws = words(out[0][1])
    x = _b(0xBEEF, 2) if mode == 1 else b""
    assert ws[3] == crc16(_b(w0, 4) + x + _b(w1, 4))
    assert ws[4] == crc32(x + _b(w0, 4))
    assert ws[5] == crc16(_b(0x1234, 2) + x)
    assert ws[6] == crc32(x + _b(w1, 4))

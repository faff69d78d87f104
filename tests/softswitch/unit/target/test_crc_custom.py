"""``crc16_custom`` / ``crc32_custom`` with control-plane parameters (BMv2 ``set_crc16_parameters``
/ ``set_crc32_parameters``) on both backends: CRC catalogue check values of "123456789", the
defaults equal to ``crc16``/``crc32``, and random parameters and data where the pure-Python
reference and the C runtime agree bit for bit."""

from __future__ import annotations

import random

import pytest

from softswitch.cli import parse_args
from softswitch.native.build import compiler
from softswitch.server import Device
from softswitch.target.crc import CrcParams, CustomCrc
from softswitch.target.externs import crc16, crc32

from ..helpers import frame, switch, words

BACKENDS = ["python", pytest.param("native", marks=pytest.mark.skipif(compiler() is None, reason="no cc"))]

# hash the 9 bytes w0 . w1 . w2[31:24]; crc16_custom -> w3, crc32_custom -> w4, crc16 -> w5
INGRESS = """
        hash(hdr.d.w3, HashAlgorithm.crc16_custom, 32w0, {hdr.d.w0, hdr.d.w1, hdr.d.w2[31:24]},
             64w0x100000000);
        hash(hdr.d.w4, HashAlgorithm.crc32_custom, 32w0, {hdr.d.w0, hdr.d.w1, hdr.d.w2[31:24]},
             64w0x100000000);
        hash(hdr.d.w5, HashAlgorithm.crc16, 32w0, {hdr.d.w0, hdr.d.w1, hdr.d.w2[31:24]},
             64w0x100000000);
"""

# (name, width, poly, init, xorout, refin, refout, check value of "123456789")
CATALOGUE = [
    ("CRC-16/ARC", 16, 0x8005, 0, 0, True, True, 0xBB3D),
    ("CRC-16/CCITT-FALSE", 16, 0x1021, 0xFFFF, 0, False, False, 0x29B1),
    ("CRC-16/KERMIT", 16, 0x1021, 0, 0, True, True, 0x2189),
    ("CRC-16/MAXIM", 16, 0x8005, 0, 0xFFFF, True, True, 0x44C2),
    ("CRC-32", 32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True, 0xCBF43926),
    ("CRC-32C", 32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True, 0xE3069283),
    ("CRC-32/BZIP2", 32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, False, False, 0xFC891918),
    ("CRC-32/MPEG-2", 32, 0x04C11DB7, 0xFFFFFFFF, 0, False, False, 0x0376E6E7),
]


def _run(sw, data: bytes) -> tuple[int, int, int]:
    w = [int.from_bytes(data[0:4], "big"), int.from_bytes(data[4:8], "big"), data[8] << 24]
    out = sw.process(0, frame(*w))
    ws = words(out[0][1])
    return ws[3], ws[4], ws[5]


@pytest.mark.parametrize("backend", BACKENDS)
def test_catalogue_check_values(backend: str):
    sw = switch(INGRESS, backend=backend)
    c16, c32, fixed16 = _run(sw, b"123456789")
    assert (c16, c32) == (0xBB3D, 0xCBF43926)        # defaults: crc16 (ARC) and crc32
    assert fixed16 == 0xBB3D
    for name, width, poly, init, xo, ri, ro, check in CATALOGUE:
        calc = "calc" if width == 16 else "calc_0"
        assert sw.crc_set_parameters(CrcParams(width, poly, init, xo, ri, ro), calc) == [calc]
        assert sw.crc_get_parameters(calc) == CrcParams(width, poly, init, xo, ri, ro)
        got = _run(sw, b"123456789")
        assert got[0 if width == 16 else 1] == check, name
        assert got[2] == 0xBB3D, name                 # the fixed crc16 is not affected


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_parameters_match_reference(backend: str):
    rng = random.Random(1414)
    sw = switch(INGRESS, backend=backend)
    ref16, ref32 = CustomCrc(16), CustomCrc(32)
    for _ in range(12):
        p16 = CrcParams(16, rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16),
                        rng.random() < 0.5, rng.random() < 0.5)
        p32 = CrcParams(32, rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32),
                        rng.random() < 0.5, rng.random() < 0.5)
        sw.crc_set_parameters(p16)
        sw.crc_set_parameters(p32)
        ref16.configure(p16)
        ref32.configure(p32)
        data = rng.randbytes(9)
        assert _run(sw, data)[:2] == (ref16(data), ref32(data)), (p16, p32, data)


def test_defaults_equal_fixed_algorithms():
    rng = random.Random(5)
    c16, c32 = CustomCrc(16), CustomCrc(32)
    for n in (0, 1, 2, 7, 64):
        data = rng.randbytes(n)
        assert c16(data) == crc16(data)
        assert c32(data) == crc32(data)


def test_bad_parameters():
    with pytest.raises(ValueError, match="does not fit in 16 bits"):
        CrcParams(16, 0x18005, 0, 0, True, True)
    with pytest.raises(ValueError, match="width must be 16 or 32"):
        CrcParams(8, 0x07, 0, 0, False, False)
    with pytest.raises(ValueError, match="cannot take crc32 parameters"):
        CustomCrc(16).configure(CrcParams(32, 1, 0, 0, False, False))


def test_cli_parameters_reach_every_installed_pipeline(capsys):
    args, _t = parse_args(["--no-p4", "--crc16-parameters", "0x1021", "0xffff", "0", "false", "false",
                           "--crc32-parameters", "0x1EDC6F41", "0xFFFFFFFF", "0xFFFFFFFF", "true", "1"])
    assert args.crc_params == [(None, CrcParams(16, 0x1021, 0xFFFF, 0, False, False)),
                               (None, CrcParams(32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True))]
    device = Device()
    device.crc_params = args.crc_params
    sw = switch(INGRESS, backend="python")
    device.install_program(sw, b"")
    assert _run(sw, b"123456789")[:2] == (0x29B1, 0xE3069283)
    for bad, text in ((["0x1021", "0xffff", "0", "maybe", "false"], "reflect data 'maybe' is not true/false"),
                      (["0x11021", "0", "0", "0", "0"], "does not fit in 16 bits"),
                      (["poly", "0", "0", "0", "0"], "polynomial 'poly' is not an integer")):
        with pytest.raises(SystemExit) as exc:
            parse_args(["--no-p4", "--crc16-parameters", *bad])
        assert exc.value.code == 2 and text in capsys.readouterr().err

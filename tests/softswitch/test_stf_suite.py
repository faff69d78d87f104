"""Every ``programs/X.p4`` with its ``X.stf`` passes on the softswitch.

The expected packets in the .stf files were computed in plain Python
(``programs/gen_stf.py``); the hash test below recomputes the hash fields from
the sent bytes here, with its own CRC code, so a wrong expectation cannot hide.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import pytest

from softswitch.native.build import NativeBuildError
from softswitch.stf.runner import run_stf
from softswitch.stf.syntax import ExpectPacket, SendPacket, load_stf

PROGRAMS = Path(__file__).parent / "programs"
STFS = sorted(PROGRAMS.glob("*.stf"))


def test_suite_is_complete():
    names = {p.stem for p in STFS}
    assert names == {p.stem for p in PROGRAMS.glob("*.p4")}
    assert len(names) >= 12


# programs the native backend refuses, with the construct its error must name
NATIVE_UNSUPPORTED: dict[str, str] = {}


@pytest.mark.parametrize("backend", ["python", "native"])
@pytest.mark.parametrize("stf", STFS, ids=[p.stem for p in STFS])
def test_program_passes_its_stf(stf: Path, backend: str):
    if backend == "native" and stf.stem in NATIVE_UNSUPPORTED:
        with pytest.raises(NativeBuildError, match=re.escape(NATIVE_UNSUPPORTED[stf.stem])):
            run_stf(str(stf.with_suffix(".p4")), str(stf), backend=backend, all_ports=True)
        return
    result = run_stf(str(stf.with_suffix(".p4")), str(stf), backend=backend, all_ports=True)
    assert result.passed, result.report()
    assert result.packets_sent > 0


def _crc16_arc_msb_first(data: bytes) -> int:
    """CRC-16/ARC computed the non-reflected way: reverse bits in, poly 0x8005, reverse out."""
    def rev(v: int, n: int) -> int:
        return int(f"{v:0{n}b}"[::-1], 2)
    crc = 0
    for byte in data:
        crc ^= rev(byte, 8) << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return rev(crc, 16)


def _ones_complement_sum(data: bytes) -> int:
    total = 0
    for i in range(0, len(data), 2):
        total += (data[i] << 8) | data[i + 1]
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def test_crc16_reference_check_value():
    assert _crc16_arc_msb_first(b"123456789") == 0xBB3D  # the catalogue check value of CRC-16/ARC


def test_hash_stf_expectations_are_the_real_hashes():
    stf = load_stf(str(PROGRAMS / "hash.stf"))
    sends = [c for c in stf.commands if isinstance(c, SendPacket)]
    expects = [c for c in stf.commands if isinstance(c, ExpectPacket)]
    assert len(sends) == len(expects) >= 3
    for send, exp in zip(sends, expects, strict=True):
        fields = send.data[14:21]  # a:32 b:16 c:8
        out = bytes.fromhex(exp.pattern)[14:]
        assert out[:7] == fields
        assert int.from_bytes(out[7:9], "big") == _crc16_arc_msb_first(fields)
        assert int.from_bytes(out[9:13], "big") == zlib.crc32(fields)
        assert int.from_bytes(out[13:15], "big") == _ones_complement_sum(fields[:6])
        assert int.from_bytes(out[15:17], "big") == 100 + zlib.crc32(fields[:4]) % 10


def test_benchmark_programs_run_and_are_checked():
    """bench/softswitch/softswitch.py verifies every output; a short run proves both programs work."""
    import argparse

    from bench.softswitch import softswitch as bench

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    out = bench.run(parser.parse_args(["--packets", "40", "--runs", "1"]))
    assert set(out["programs"]) == {"basic_ipv4", "register_rmw32"}
    assert all(p["pps_median"] > 0 for p in out["programs"].values())

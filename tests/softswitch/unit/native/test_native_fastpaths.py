"""The native backend's cheaper code must not change what a program does: byte-aligned extract and
emit fast paths (and the bit-level path they skip when a header starts inside a byte), register
cells of the narrowest C type, and long runs of const-entry tables inlined in groups of
``cgen.FIXED_GROUP`` (``exit`` inside a group).  Each program runs on both backends, which must
emit identical frames and hold identical registers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from softswitch.native.build import compiler
from softswitch.native.cgen import FIXED_GROUP, reg_cell_t, reg_cells_padded
from softswitch.native.switch import NativeSwitch
from softswitch.target.switch import Switch

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

V1 = "#include <core.p4>\n#include <v1model.p4>\n"
EMPTY = """
control VC(inout headers h, inout meta_t m) { apply { } }
control EG(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
"""
MAIN = "V1Switch(P(), VC(), IG(), EG(), CC(), D()) main;\n"

ALIGN = V1 + """
header sel_t { bit<8> s; }
header odd_t { bit<8> a; bit<32> b; bit<48> c; bit<3> d; bit<13> e; bit<64> f; bit<72> g;
               bit<7> h; bit<1> i; bit<16> j; bit<100> k; bit<4> l; }
struct headers { sel_t sel; odd_t odd; }
struct meta_t { }
parser P(packet_in pk, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.sel); transition select(h.sel.s[0:0]) { 1: nib; default: body; } }
    state nib { pk.advance(4); transition body; }  /* odd_t then starts inside a byte */
    state body { pk.extract(h.odd); transition select(h.sel.s[0:0]) { 1: pad; default: accept; } }
    state pad { pk.advance(4); transition accept; }
}
control IG(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.odd.b = h.odd.b + 1;
        h.odd.c = h.odd.c ^ 48w0x0102030405;
        h.odd.e = h.odd.e + 3;
        h.odd.g = h.odd.g + 1;
        h.odd.k = h.odd.k ^ (100w1 << 99);
    }
}
""" + EMPTY + """
control D(packet_out pk, in headers h) { apply { pk.emit(h.sel); pk.emit(h.odd); } }
""" + MAIN

REGS = V1 + """
header r_t { bit<8> idx; bit<8> v1; bit<8> v8; bit<16> v16; bit<32> v32; bit<48> v48; bit<64> v64;
             bit<128> v128; bit<8> vi; }
struct headers { r_t r; }
struct meta_t { }
parser P(packet_in pk, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.r); transition accept; }
}
control IG(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<1>>(5) r1; register<bit<8>>(5) r8; register<bit<16>>(5) r16;
    register<bit<32>>(5) r32; register<bit<48>>(5) r48; register<bit<64>>(5) r64;
    register<bit<128>>(5) r128; register<int<8>>(5) ri;
    apply {
        bit<32> i = (bit<32>)h.r.idx;
        bit<1> o1; bit<8> o8; bit<16> o16; bit<32> o32; bit<48> o48; bit<64> o64; bit<128> o128;
        int<8> oi;
        r1.read(o1, i); r1.write(i, o1 ^ h.r.v1[0:0]); h.r.v1 = (bit<8>)o1;
        r8.read(o8, i); r8.write(i, o8 + h.r.v8); h.r.v8 = o8;
        r16.read(o16, i); r16.write(i, o16 * h.r.v16); h.r.v16 = o16 + r16.read(i);
        r32.read(o32, i); r32.write(i, o32 + h.r.v32); h.r.v32 = o32;
        r48.read(o48, i); r48.write(i, o48 - h.r.v48); h.r.v48 = o48;
        r64.read(o64, i); r64.write(i, o64 ^ h.r.v64); h.r.v64 = o64;
        r128.read(o128, i); r128.write(i, o128 + h.r.v128); h.r.v128 = o128;
        ri.read(oi, i); ri.write(i, oi - (int<8>)h.r.vi); h.r.vi = (bit<8>)(oi >> 1);
        sm.egress_spec = 1;
    }
}
""" + EMPTY + """
control D(packet_out pk, in headers h) { apply { pk.emit(h.r); } }
""" + MAIN

REG_NAMES = ["IG.r1", "IG.r8", "IG.r16", "IG.r32", "IG.r48", "IG.r64", "IG.r128", "IG.ri"]
REG_WIDTHS = [1, 8, 16, 32, 48, 64, 128, 8]


def _tables_program(n: int) -> str:
    """n const-entry tables applied in a row: table i writes o<i> for key i, exits for 100 + i."""
    fields = " ".join(f"bit<8> o{i};" for i in range(n))
    decls = "\n".join(
        f"""    action a{i}() {{ h.d.o{i} = h.d.k + {i}; }}
    action x{i}() {{ h.d.o{i} = 0xee; exit; }}
    table t{i} {{ key = {{ h.d.k : exact; }} actions = {{ a{i}; x{i}; NoAction; }}
        const entries = {{ {i % 50} : a{i}(); {100 + i} : x{i}(); }} default_action = NoAction(); }}"""
        for i in range(n))
    applies = " ".join(f"t{i}.apply();" for i in range(n))
    return V1 + f"""
header d_t {{ bit<8> k; {fields} }}
struct headers {{ d_t d; }}
struct meta_t {{ }}
parser P(packet_in pk, out headers h, inout meta_t m, inout standard_metadata_t sm) {{
    state start {{ pk.extract(h.d); transition accept; }}
}}
control IG(inout headers h, inout meta_t m, inout standard_metadata_t sm) {{
{decls}
    apply {{ sm.egress_spec = 1; {applies} h.d.k = h.d.k + 1; }}
}}
""" + EMPTY + """
control D(packet_out pk, in headers h) { apply { pk.emit(h.d); } }
""" + MAIN


def _both(tmp_path: Path, name: str, source: str) -> tuple[Switch, NativeSwitch]:
    path = tmp_path / f"{name}.p4"
    path.write_text(source)
    return Switch.load(str(path)), NativeSwitch.load(str(path))


def test_extract_and_emit_aligned_and_unaligned(tmp_path: Path) -> None:
    py, nat = _both(tmp_path, "align", ALIGN)
    r = random.Random(7)
    for _ in range(300):
        frame = bytes([r.randrange(256)]) + r.randbytes(r.randint(30, 40))  # short ones too
        assert nat.process(0, frame) == py.process(0, frame), frame.hex()


def test_narrow_register_cells_hold_what_the_python_backend_holds(tmp_path: Path) -> None:
    py, nat = _both(tmp_path, "regs", REGS)
    r = random.Random(11)
    for sw in (py, nat):  # the control plane writes each width's largest value
        for name, w in zip(REG_NAMES, REG_WIDTHS, strict=True):
            sw.register_write(name, 4, (1 << w) - 1)
    for _ in range(300):
        frame = bytes([r.randrange(6)]) + r.randbytes(1 + 1 + 2 + 4 + 6 + 8 + 16 + 1)
        assert nat.process(0, frame) == py.process(0, frame), frame.hex()
    for name, w in zip(REG_NAMES, REG_WIDTHS, strict=True):
        got = [nat.register_read(name, i) for i in range(5)]
        assert got == [py.register_read(name, i) for i in range(5)], name
        assert all(0 <= v < 1 << w for v in got)
    nat.register_reset("IG.r48")
    assert [nat.register_read("IG.r48", i) for i in range(5)] == [0] * 5


def test_register_cell_types_and_padding() -> None:
    assert [reg_cell_t(w) for w in (1, 8, 9, 16, 32, 33, 64, 65, 128)] == [
        "uint8_t", "uint8_t", "uint16_t", "uint16_t", "uint32_t", "u64", "u64", "u128", "u128"]
    for w, size, esz in ((32, 4096, 4), (64, 4096, 8), (8, 1, 1), (128, 3, 16), (16, 100, 2)):
        cells = reg_cells_padded(w, size)
        assert cells >= size and (cells * esz) % 64 == 0 and (cells * esz // 64) % 2 == 1


@pytest.mark.parametrize("n", [FIXED_GROUP + 1, 2 * FIXED_GROUP + 5])
def test_long_runs_of_const_tables(tmp_path: Path, n: int) -> None:
    py, nat = _both(tmp_path, f"tables{n}", _tables_program(n))
    keys = list(range(n)) + [100 + i for i in range(n)] + [99, 200, 255]
    for k in keys:
        frame = bytes([k]) + bytes(n)
        out = nat.process(0, frame)
        assert out == py.process(0, frame), k
        exits = 100 <= k < 100 + n
        assert out and out[0][1][0] == (k if exits else (k + 1) & 0xFF)  # exit skips the increment
        i = k - 100 if exits else k
        if i < n:  # the table that matched wrote its byte; exit stopped the tables after it
            assert out[0][1][1 + i] == (0xEE if exits else (k + i) & 0xFF)
            assert not exits or not any(out[0][1][2 + i:])

"""Expressions: width inference, wraparound, casts, saturating ops, slices, concatenation, shifts."""

from __future__ import annotations

import pytest

from ..helpers import run_words, switch


def test_wraparound_and_literal_width_inference():
    sw = switch("""
        hdr.d.w0 = hdr.d.w0 + 1;                 // wraps at 2^32
        hdr.d.w1 = hdr.d.w1 - 2;                 // wraps below 0
        hdr.d.w2 = hdr.d.w2 * 3;
        hdr.d.w3 = (bit<32>)((bit<8>)hdr.d.w3 + 8w255);   // bit<8> arithmetic
    """)
    assert run_words(sw, 0xFFFFFFFF, 1, 0x80000001, 0x01)[:4] == [0, 0xFFFFFFFF, 0x80000003, 0]


def test_constant_folding_infinite_precision():
    sw = switch("""
        hdr.d.w0 = (1 << 40) >> 20;              // int arithmetic before the width is applied
        hdr.d.w1 = -1;                           // -1 as bit<32>
        hdr.d.w2 = 32w7 / 2 + 100 % 7;
    """)
    assert run_words(sw)[:3] == [1 << 20, 0xFFFFFFFF, 3 + 2]


def test_saturating_ops_unsigned_and_signed():
    sw = switch("""
        bit<8> a = (bit<8>)hdr.d.w0;
        bit<8> b = (bit<8>)hdr.d.w1;
        hdr.d.w2 = (bit<32>)(a |+| b);
        hdr.d.w3 = (bit<32>)(a |-| b);
        int<8> s = (int<8>)a;
        int<8> t = (int<8>)b;
        hdr.d.w4 = (bit<32>)(bit<8>)(s |+| t);
        hdr.d.w5 = (bit<32>)(bit<8>)(s |-| t);
    """)
    # 200 +| 100 saturates to 255, 100 -| 200 to 0; as int<8>: -56 + 100 = 44, -56 - 100 -> -128
    w = run_words(sw, 200, 100)
    assert w[2:6] == [255, 100, 44, 0x80]
    w = run_words(sw, 100, 200)
    assert w[2:4] == [255, 0]
    assert w[4] == ((100 - 56) & 0xFF) and w[5] == 127    # 100 - (-56) saturates at 127


def test_slices_concat_and_slice_assignment():
    sw = switch("""
        hdr.d.w1 = (bit<32>)hdr.d.w0[15:8];
        hdr.d.w2 = hdr.d.w0[7:0] ++ hdr.d.w0[31:8];     // rotate right by 8
        hdr.d.w3[31:24] = 8w0xAB;
        hdr.d.w3[3:0] = hdr.d.w0[3:0];
    """)
    w = run_words(sw, 0x11223344, 0, 0, 0x00FFFF00)
    assert w[1] == 0x33 and w[2] == 0x44112233 and w[3] == 0xABFFFF04


def test_shifts_and_signed_shift():
    sw = switch("""
        hdr.d.w1 = hdr.d.w0 << 4;
        hdr.d.w2 = hdr.d.w0 >> (bit<8>)hdr.d.w7;
        hdr.d.w3 = hdr.d.w0 << 40;                          // shift >= width gives 0
        int<32> s = (int<32>)hdr.d.w0;
        hdr.d.w4 = (bit<32>)(s >> 4);                        // arithmetic shift
    """)
    w = run_words(sw, 0xF0000001, 0, 0, 0, 0, 0, 0, 28)
    assert w[1] == 0x00000010 and w[2] == 0xF and w[3] == 0 and w[4] == 0xFF000000


def test_casts_between_widths_bool_and_signedness():
    sw = switch("""
        hdr.d.w1 = (bit<32>)(bit<4>)hdr.d.w0;                // truncation
        int<16> s = (int<16>)(bit<16>)hdr.d.w0;
        hdr.d.w2 = (bit<32>)(bit<16>)(s + -2);
        bool b = hdr.d.w0 == 0x1234567F;
        hdr.d.w3 = (bit<32>)(bit<1>)b;
        hdr.d.w4 = (bit<1>)b == 1 ? 32w9 : 32w8;
        hdr.d.w5 = (bit<32>)(int<32>)(int<16>)(bit<16>)0xFFFE;  // sign extension via int<16>->int<32>
    """)
    w = run_words(sw, 0x1234567F)
    assert w[1] == 0xF and w[2] == 0x567D and w[3] == 1 and w[4] == 9 and w[5] == 0xFFFFFFFE


def test_bitwise_precedence_follows_p4c():
    # in P4 '&' binds tighter than '==' (unlike C)
    sw = switch("if (hdr.d.w0 & 0xF == 0x3) { hdr.d.w1 = 1; } else { hdr.d.w1 = 2; }")
    assert run_words(sw, 0x13)[1] == 1
    assert run_words(sw, 0x14)[1] == 2


def test_comparisons_logic_and_ternary():
    sw = switch("""
        hdr.d.w1 = hdr.d.w0 > 10 && !(hdr.d.w0 >= 20) ? 32w1 : 32w0;
        hdr.d.w2 = (hdr.d.w0 < 5 || hdr.d.w0 <= 11) ? 32w1 : 32w0;
        hdr.d.w3 = ~hdr.d.w0;
        hdr.d.w4 = hdr.d.w0 ^ 0xFF | 0x100 & 0x1FF;
    """)
    w = run_words(sw, 11)
    assert w[1:5] == [1, 1, 0xFFFFFFF4, (11 ^ 0xFF) | (0x100 & 0x1FF)]


def test_struct_and_header_assignment_and_list_init():
    sw = switch("""
        data_t tmp = hdr.d;
        tmp.w0 = 5;
        hdr.d = tmp;
        hdr.d.w7 = tmp.w1;
        meta = {1, 2, 3, 4};
        hdr.d.w6 = meta.m1 + (bit<32>)meta.m16;
    """)
    w = run_words(sw, 0, 42)
    assert w[0] == 5 and w[7] == 42 and w[6] == 6


@pytest.mark.parametrize("expr,expect", [("32w0xFFFF_FFFF", 0xFFFFFFFF), ("0b1010", 10), ("0o17", 15),
                                         ("8s5 ++ 8w1", None)])
def test_literal_forms(expr, expect):
    if expect is None:
        sw = switch(f"hdr.d.w0 = (bit<32>)(bit<16>)({expr});")
        assert run_words(sw)[0] == 0x0501
    else:
        sw = switch(f"hdr.d.w0 = {expr};")
        assert run_words(sw)[0] == expect


def test_user_functions_with_return_values_and_out_parameters():
    decls = """
    bit<32> max32(in bit<32> a, in bit<32> b) { if (a > b) { return a; } return b; }
    void split(in bit<32> v, out bit<16> hi, out bit<16> lo) { hi = v[31:16]; lo = v[15:0]; }
    """
    ingress = """
        hdr.d.w2 = max32(hdr.d.w0, hdr.d.w1) + 1;
        split(hdr.d.w0, meta.m16, hdr.d.w3[15:0]);
        hdr.d.w4 = (bit<32>)meta.m16;
    """
    sw = switch(ingress, decls=decls)
    assert run_words(sw, 0x12345678, 9)[2:5] == [0x12345679, 0x5678, 0x1234]
    assert run_words(sw, 3, 9)[2] == 10

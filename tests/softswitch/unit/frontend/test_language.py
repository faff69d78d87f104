"""Language features p4c accepts (desugar.py, subparsers.py and their neighbours), beyond the
STF programs: odd-but-valid programs compile on both backends and agree, or fail with a
P4CompileError naming file:line:col, never a Python exception; misuse is rejected at its line."""

from __future__ import annotations

import pytest

from softswitch.api import P4CompileError

from ..helpers import frame, program, run_words, switch

# (name, keyword arguments of helpers.program, expected data words 0..2 for frame(5, 7, 0))
VALID = [
    ("function_calls_function",
     dict(decls="bit<32> g(in bit<32> x) { return x + 1; }\n"
                "bit<32> f(in bit<32> x) { return g(x) * 2; }",
          ingress="hdr.d.w2 = f(hdr.d.w0);"), [5, 7, 12]),
    ("constants_in_every_scope",
     dict(decls="const bit<32> G = 100;",
          ilocals="const bit<32> Q = 1; action a() { const bit<32> R = 3; hdr.d.w2 = G + Q + R; }",
          ingress="a();"), [5, 7, 104]),
    ("top_level_action_sees_globals",
     dict(decls="const bit<32> K = 3;\nregister<bit<32>>(4) greg;\n"
                "action top_add(inout bit<32> x) { x = x + K; greg.write(0, x); }",
          ingress="top_add(hdr.d.w0); greg.read(hdr.d.w2, 0);"), [8, 7, 8]),
    ("header_size_methods",
     dict(ingress="hdr.d.w2 = (bit<32>) hdr.d.minSizeInBits() + (bit<32>) hdr.eth.minSizeInBytes();"),
     [5, 7, 256 + 14]),
    ("constant_shift_in_constant",
     dict(decls="const bit<8> K = 2;\nconst bit<32> K2 = (bit<32>) K << 4;", ingress="hdr.d.w2 = K2;"),
     [5, 7, 32]),
    ("named_arguments_any_order_with_default",
     dict(decls="bit<32> sub(in bit<32> a, in bit<32> b = 1) { return a - b; }",
          ingress="hdr.d.w2 = sub(b = hdr.d.w0, a = hdr.d.w1) + sub(a = 10);"), [5, 7, 11]),
    ("named_arguments_of_externs",
     dict(ilocals="register<bit<32>>(4) r;",
          parser="state start { pkt.extract(hdr = hdr.eth); pkt.extract(hdr = hdr.d); transition accept; }",
          ingress="r.write(value = 6, index = 1); r.read(index = 1, result = hdr.d.w2);"), [5, 7, 6]),
    ("named_action_arguments",
     dict(ilocals="action set(inout bit<32> dst, bit<32> v) { dst = v; }",
          ingress="set(v = 9, dst = hdr.d.w2);"), [5, 7, 9]),
    ("dont_care_out_argument",
     dict(decls="bit<32> two(out bit<32> y, in bit<32> v) { y = v; return v + v; }",
          ingress="two(_, 1); hdr.d.w2 = two(_, hdr.d.w0);"), [5, 7, 10]),
    ("compound_assignment_on_slices_and_fields",
     dict(ingress="hdr.d.w2 = 0xF0; hdr.d.w2[3:0] |= 4w5; hdr.d.w2 ^= hdr.d.w0; hdr.d.w2 >>= 1;"),
     [5, 7, (0xF5 ^ 5) >> 1]),
    ("call_with_out_in_select",
     dict(decls="bit<16> bump(inout bit<32> x) { x = x + 1; return 0x88b5; }",
          mfields="bit<32> calls;",
          parser="state start { pkt.extract(hdr.eth); transition select(bump(meta.calls)) {"
                 " 0x88b5: parse_d; default: accept; } }\n"
                 "state parse_d { pkt.extract(hdr.d); transition accept; }",
          ingress="hdr.d.w2 = meta.calls;"), [5, 7, 1]),
    ("call_with_out_in_action_condition",
     dict(decls="bit<32> inc(inout bit<32> x) { x = x + 1; return x; }",
          ilocals="action a() { if (inc(hdr.d.w0) == 6) { hdr.d.w2 = 1; } }", ingress="a();"),
     [6, 7, 1]),
    ("direct_control_apply",
     dict(decls="control Sub(inout bit<32> x) { apply { x = x + 1; } }", ingress="Sub.apply(hdr.d.w2);"),
     [5, 7, 1]),
    ("direct_parser_apply",
     dict(decls="parser SubP(packet_in p, out data_t d) { state start { p.extract(d); transition accept; } }",
          parser="state start { pkt.extract(hdr.eth); SubP.apply(pkt, hdr.d); transition accept; }",
          ingress="hdr.d.w2 = hdr.d.w0 + hdr.d.w1;"), [5, 7, 12]),
    ("empty_struct_from_empty_list",
     dict(decls="struct e_t { }\nvoid f(in e_t e) { }", ingress="f({}); hdr.d.w2 = 2;"), [5, 7, 2]),
    ("key_value_annotation",
     dict(decls='@pkginfo(name="x", version="1")\nconst bit<32> K = 4;', ingress="hdr.d.w2 = K;"), [5, 7, 4]),
    ("key_with_side_effects",
     dict(decls="bit<32> inc(inout bit<32> x) { x = x + 1; return x; }",
          ilocals="action a(bit<32> v) { hdr.d.w2 = v; }\n"
                  "table t { key = { inc(hdr.d.w1): exact; } actions = { a; }\n"
                  "          const entries = { 8: a(80); 9: a(90); } }",
          ingress="if (hdr.d.w0 == 5 && t.apply().hit) { hdr.d.w0 = 1; }"), [1, 8, 80]),
    ("named_arguments_in_table_actions",
     dict(ilocals="action a(inout bit<32> dst, bit<32> x, bit<32> y) { dst = x - y; }\n"
                  "table t { key = { hdr.d.w0: exact; } actions = { a(dst = hdr.d.w2); }\n"
                  "          default_action = a(y = 1, dst = hdr.d.w2, x = 5); }", ingress="t.apply();"),
     [5, 7, 4]),
    ("control_constructor_arguments",
     dict(decls="control Sub(inout bit<32> x)(bit<32> k, bool twice) {\n"
                "    apply { x = x + k; if (twice) { x = x + k; } } }",
          ilocals="Sub(32w3, true) s; Sub(10, false) t;", ingress="s.apply(hdr.d.w2); t.apply(hdr.d.w2);"),
     [5, 7, 16]),
    ("nested_struct_initialiser",
     dict(decls="struct pair_t { bit<32> x; bit<32> y; }\nstruct big_t { pair_t p; bit<32> z; }",
          ingress="big_t b = { {1, 2}, 3 }; hdr.d.w2 = b.p.y + b.z;"), [5, 7, 5]),
    ("bool_keys_in_const_entries",
     dict(ilocals="action put(bit<32> v) { hdr.d.w2 = v; }\n"
                  "table t { key = { hdr.d.isValid(): exact; hdr.d.w0 == 5: exact @name(\"w0_is_5\"); }\n"
                  "  actions = { put; } const entries = { (true, false): put(1); (true, true): put(2); } }",
          ingress="t.apply();"), [5, 7, 2]),
]


@pytest.mark.parametrize("backend", ["python", "native"])
@pytest.mark.parametrize(("name", "kw", "want"), VALID, ids=[v[0] for v in VALID])
def test_valid_program_runs(name, kw, want, backend):
    sw = switch(backend=backend, **kw)
    assert run_words(sw, 5, 7)[:3] == want


# (name, keyword arguments, line of the error relative to the ingress apply block, reason)
INVALID = [
    ("mixed_named_and_positional", dict(decls="bit<32> f(in bit<32> a, in bit<32> b) { return a; }",
                                        ingress="hdr.d.w2 = f(1, b = 2);"), "all or none"),
    ("unknown_named_argument", dict(decls="bit<32> f(in bit<32> a) { return a; }",
                                    ingress="hdr.d.w2 = f(c = 2);"), "no parameter named c"),
    ("named_argument_twice", dict(decls="bit<32> f(in bit<32> a) { return a; }",
                                  ingress="hdr.d.w2 = f(a = 1, a = 2);"), "given twice"),
    ("missing_named_argument", dict(decls="bit<32> f(in bit<32> a, in bit<32> b) { return a; }",
                                    ingress="hdr.d.w2 = f(a = 1);"), "missing argument for parameter b"),
    ("dont_care_for_in_parameter", dict(decls="bit<32> f(in bit<32> a) { return a; }",
                                        ingress="hdr.d.w2 = f(_);"), "out parameter"),
    ("void_function_in_expression", dict(decls="void f(inout bit<32> a) { a = 1; }",
                                         ingress="hdr.d.w2 = 1 + f(hdr.d.w0);"), "void"),
    ("compound_assignment_to_in_parameter",
     dict(decls="bit<32> f(in bit<32> a) { a += 1; return a; }", ingress="hdr.d.w2 = f(1);"), "in parameter"),
    ("int_parameter_of_function", dict(decls="bit<32> f(in int x) { return (bit<32>) x; }",
                                       ingress="hdr.d.w2 = f(3);"), "type int"),
    ("compound_assignment_width_mismatch", dict(ingress="hdr.d.w2 += hdr.m8;".replace("hdr.m8", "meta.m8")),
     "width mismatch"),
]


@pytest.mark.parametrize(("name", "kw", "reason"), INVALID, ids=[v[0] for v in INVALID])
def test_misuse_is_a_compile_error_at_its_line(name, kw, reason):
    src = program(**kw)
    bad = next((b for b in ("a += 1", "in int x") if b in src), kw.get("ingress", ""))
    want_line = next(i for i, ln in enumerate(src.splitlines(), 1) if bad and bad in ln)
    with pytest.raises(P4CompileError) as ei:
        switch(**kw)
    assert reason.lower() in str(ei.value).lower()
    assert ei.value.line == want_line and ei.value.col > 0, str(ei.value)


def test_key_with_side_effects_keeps_its_name_in_p4info():
    sw = switch(decls="bit<32> inc(inout bit<32> x) { x = x + 1; return x; }",
                ilocals="table t { key = { inc(hdr.d.w1): exact; } actions = { NoAction; } }",
                ingress="t.apply();")
    (table,) = [t for t in sw.p4info.tables if t.preamble.name == "I.t"]
    assert [m.name for m in table.match_fields] == ["inc(hdr.d.w1)"]


def test_frames_differ_between_runs_of_one_switch():
    """The effects of hoisted calls are per packet (temporaries are locals, not state)."""
    sw = switch("hdr.d.w2 = inc(hdr.d.w0) + inc(hdr.d.w0);",
                decls="bit<32> inc(inout bit<32> x) { x = x + 1; return x; }")
    assert run_words(sw, 1)[:3] == [3, 0, 5]
    assert run_words(sw, 10)[:3] == [12, 0, 23]
    assert sw.process(0, frame(1, etype=0x0800))[0][1][12:14] == b"\x08\x00"

"""Constructs p4c's front end accepts by rewriting them (generic functions, struct and tuple
constants, tuple indexing, ``select`` on ``error`` and ``bool``, v1model functions inside
functions, control-level initialisers with side effects): each runs on both backends with the
result p4c's semantics give, and misuse is a P4CompileError at its line."""

from __future__ import annotations

import pytest

from softswitch.api import P4CompileError

from ..helpers import program, run_words, switch

PARSE_D = """state start { pkt.extract(hdr.eth); transition select(hdr.eth.etype) {
        0x88b5: parse_d; default: accept; } }
"""

# (name, keyword arguments of helpers.program, expected data words 0..3 for frame(5, 7))
VALID = [
    ("generic_explicit_and_inferred",
     dict(decls="T id<T>(in T x) { return x; }",
          ingress="hdr.d.w2 = id<bit<32>>(hdr.d.w0) + id(hdr.d.w1); hdr.d.w3 = (bit<32>) id(8w3);"),
     [5, 7, 12, 3]),
    ("generic_inout_swap_two_types",
     dict(decls="void swap<T>(inout T a, inout T b) { T t = a; a = b; b = t; }",
          ingress="swap(hdr.d.w0, hdr.d.w1); bit<8> x = 1; bit<8> y = 2; swap(x, y);"
                  "hdr.d.w3 = (bit<32>) (x ++ y);"),
     [7, 5, 0, 0x201]),
    ("generic_header_parameter",  # a body may copy, compare, choose and pass its T values
     dict(decls="void copy_to<H>(in H h, out H d) { d = h; }\n"
                "T pick<T, U>(in T a, in T b, in U c, in U d, in bool first) {"
                " return first && c == d ? a : b; }",
          ingress="hdr.d.w2 = pick(hdr.d.w0, 32w9, 8w1, 8w1, false)"
                  " + pick<bit<32>, _>(hdr.d.w1, 1, 8w1, 8w1, true);"
                  "if (hdr.d.w0 == 6) { copy_to(hdr.d, hdr.d); }"),
     [5, 7, 16, 0]),
    ("bool_constants_fold",  # p4c folds !, &&, ||, == and != of constants
     dict(decls="const bool B1 = true && false;\nconst bool B2 = !B1 || B1;\n"
                "const bool B3 = 8w1 == 8w2 || B2 == true;",
          ingress="hdr.d.w2 = B3 ? 32w1 : 32w2; hdr.d.w3 = (B1 != B2) ? 32w4 : 32w8;"),
     [5, 7, 1, 4]),
    ("generic_calling_generic",
     dict(decls="T id<T>(in T x) { return x; }\nT twice<T>(in T x) { return id(id<T>(x)); }",
          ingress="hdr.d.w2 = twice(hdr.d.w1) + hdr.d.w1; hdr.d.w3 = (bit<32>) twice(meta.m16);"),
     [5, 7, 14, 0]),
    ("generic_inferred_through_typedef_member",
     dict(decls="struct pr_t { bit<32> a; }\ntypedef pr_t pr_alias_t;\nT id<T>(in T x) { return x; }",
          ingress="pr_alias_t p; p.a = hdr.d.w1; hdr.d.w2 = id(p.a);"),
     [5, 7, 7, 0]),
    ("generic_inferred_from_extern_method_result",
     dict(decls="register<bit<32>, bit<32>>(4) rr;\nT id<T>(in T x) { return x; }",
          ingress="rr.write(1, hdr.d.w1); hdr.d.w2 = id(rr.read(1));"),
     [5, 7, 7, 0]),
    ("type_parameter_names_end_with_their_declaration",
     dict(decls="extern void ext_f<T>(in T x);\nT id<T>(in T x) { return x; }",
          ingress="bit<32> T = 3; hdr.d.w2 = id(T);"), [5, 7, 3, 0]),
    ("struct_constants",
     dict(decls="struct pair_t { bit<32> x; bit<32> y; }\nstruct two_t { pair_t p; bool b; }\n"
                "const pair_t KP = { 3, 4 };\nconst pair_t KN = { y = 10, x = 20 };\n"
                "const two_t KT = { KP, true };",
          ingress="pair_t v = KN; hdr.d.w2 = KP.x + KP.y + v.x; if (KT.b) { hdr.d.w3 = KT.p.y << 1; }"),
     [5, 7, 27, 8]),
    ("struct_constant_shadowed_by_local",
     dict(decls="struct pair_t { bit<32> x; bit<32> y; }\nconst pair_t KP = { 3, 4 };",
          ilocals="const pair_t KL = { 1, 2 };\naction a() { pair_t KP = { 100, 200 }; hdr.d.w3 = KP.y; }",
          ingress="hdr.d.w2 = KP.x + KL.y; a();"),
     [5, 7, 5, 200]),
    ("struct_constant_in_table_entries",
     dict(decls="struct keys_t { bit<32> a; bit<32> b; }\nconst keys_t KK = { 5, 6 };",
          ilocals="action put(bit<32> v) { hdr.d.w2 = v; }\n"
                  "table t { key = { hdr.d.w0: exact; } actions = { put; }\n"
                  "  const entries = { KK.a: put(50); KK.b: put(60); } }",
          ingress="t.apply();"),
     [5, 7, 50, 0]),
    ("tuples",
     dict(decls="const tuple<bit<32>, bit<8>> KT = { 30, 2 };",
          ingress="tuple<bit<32>, bit<32>> t = { hdr.d.w0, 1 }; t[1] = hdr.d.w1;"
                  "hdr.d.w2 = t[0] + t[1] + KT[0] + (bit<32>) KT[1];"
                  "hash(hdr.d.w3, HashAlgorithm.identity, 32w0, t, 32w1 << 16);"),
     [5, 7, 44, 7]),
    ("select_on_error",
     dict(parser=PARSE_D + """state parse_d { pkt.extract(hdr.d); meta.m8 = 1;
        transition select(hdr.d.w0 == 3 ? error.NoMatch : error.NoError, hdr.d.w1[7:0]) {
            (error.NoMatch, 7): a1; (error.NoError, _): a2; (_, 7): a3; default: accept; } }
        state a1 { meta.m8 = 2; transition accept; }
        state a2 { meta.m8 = 3; transition accept; }
        state a3 { meta.m8 = 4; transition accept; }""",
          ingress="hdr.d.w2 = (bit<32>) meta.m8;"), [5, 7, 3, 0]),
    ("select_on_bool",
     dict(parser="""state start { pkt.extract(hdr.eth);
        transition select(hdr.eth.etype == 0x88b5, hdr.eth.etype[0:0] == 1) {
            (true, true): parse_d; (false, _): accept; } }
        state parse_d { pkt.extract(hdr.d); transition accept; }""",
          ingress="hdr.d.w2 = 9;"), [5, 7, 9, 0]),
    ("v1model_functions_in_a_function",
     dict(decls="bit<32> r() { bit<32> x; random(x, 5, 5); return x; }\n"
                "void h(out bit<32> o, in bit<32> v) { hash(o, HashAlgorithm.identity, 32w1, {v}, 32w0); }",
          ingress="hdr.d.w2 = r(); h(hdr.d.w3, hdr.d.w1);"), [5, 7, 5, 8]),
    ("parser_initialisers_with_side_effects",
     dict(decls="bit<32> inc(inout bit<32> x) { x = x + 1; return x; }",
          parser="bit<32> a = inc(meta.m0);\nbit<32> b = meta.m0;\n" + PARSE_D
                 + "state parse_d { pkt.extract(hdr.d); meta.m1 = a + b; transition accept; }",
          ingress="hdr.d.w2 = meta.m0; hdr.d.w3 = meta.m1;"), [5, 7, 1, 2]),
    ("error_and_enum_table_keys",
     dict(decls="enum Color { RED, GREEN }", mfields="error err; Color c;",
          ilocals="action put(bit<32> v) { hdr.d.w2 = hdr.d.w2 + v; }\n"
                  "table te { key = { meta.err: exact; } actions = { put; }\n"
                  "  const entries = { error.NoError: put(1); error.NoMatch: put(2); } }\n"
                  "table tc { key = { meta.c: exact; } actions = { put; }\n"
                  "  const entries = { Color.GREEN: put(10); } }",
          ingress="meta.err = error.NoMatch; meta.c = Color.GREEN; te.apply(); tc.apply();"),
     [5, 7, 12, 0]),
    ("header_sizes_and_folded_concatenation",
     dict(decls="header vb_t { bit<8> a; varbit<16> v; }\nconst bit<16> C = 8w1 ++ 8w2;", hfields="vb_t vb;",
          ingress="hdr.d.w2 = (bit<32>) hdr.vb.maxSizeInBits() + (bit<32>) hdr.vb.minSizeInBytes()"
                  " + (bit<32>) hdr.d.maxSizeInBytes(); hdr.d.w3 = (bit<32>) C;"),
     [5, 7, 24 + 1 + 32, 258]),
    ("unused_control_with_constructor_parameters",
     dict(decls="control Unused(inout bit<32> x)(bit<8> k) { apply { x = (bit<32>) k; } }",
          ingress="hdr.d.w2 = 1;"), [5, 7, 1, 0]),
    ("control_initialisers_with_side_effects",
     dict(decls="bit<32> inc(inout bit<32> x) { x = x + 1; return x; }",
          ilocals="bit<32> a = inc(hdr.d.w0); bit<32> b = hdr.d.w0; bit<32> c = inc(hdr.d.w0) + a;",
          ingress="hdr.d.w1 = b; hdr.d.w2 = c; hdr.d.w3 = a;"), [7, 6, 13, 6]),
]


@pytest.mark.parametrize("backend", ["python", "native"])
@pytest.mark.parametrize(("name", "kw", "want"), VALID, ids=[v[0] for v in VALID])
def test_valid_program_runs(name, kw, want, backend):
    sw = switch(backend=backend, **kw)
    assert run_words(sw, 5, 7)[:4] == want


def test_select_on_error_other_rows():
    for backend in ("python", "native"):
        sw = switch(backend=backend, **next(v[1] for v in VALID if v[0] == "select_on_error"))
        assert run_words(sw, 3, 7)[:3] == [3, 7, 2]
        assert run_words(sw, 3, 8)[:3] == [3, 8, 1]


# (name, keyword arguments, the text on the line of the error, reason)
INVALID = [
    ("generic_type_not_inferable", dict(decls="T zero<T>() { return 0; }", ingress="hdr.d.w2 = zero();"),
     "hdr.d.w2 = zero();", "cannot infer type argument T of zero"),
    ("generic_conflicting_types", dict(decls="void f<T>(in T a, in T b) { }",
                                       ingress="f(hdr.d.w0, meta.m8);"),
     "f(hdr.d.w0, meta.m8);", "cannot be both bit<32> and bit<8>"),
    ("generic_wrong_type_argument_count", dict(decls="T id<T>(in T x) { return x; }",
                                               ingress="hdr.d.w2 = id<bit<32>, bit<8>>(1);"),
     "hdr.d.w2 = id", "1 type parameters, 2 given"),
    ("uncalled_generic_is_type_checked",
     dict(decls="T bump<T>(in T x) {\n    return x + true; }"),
     "return x + true;", "cannot be applied to T"),
    # spec "operations on types that are type variables": p4c checks a generic body once, for
    # every T, where it is declared; a call with bit<32> does not make arithmetic, casts or
    # header methods on T valid
    ("generic_arithmetic_on_t_even_when_called",
     dict(decls="T id<T>(in T x) { return x; }\nT twice<T>(in T x) {\n    return id(x) + x; }",
          ingress="hdr.d.w2 = twice(hdr.d.w1);"),
     "return id(x) + x;", "cannot be applied to T"),
    ("generic_cast_from_t_even_when_called",
     dict(decls="bit<32> widen<T>(in T x) {\n    return (bit<32>) x; }",
          ingress="hdr.d.w2 = widen(meta.m16);"),
     "return (bit<32>) x;", "cast"),
    ("generic_header_method_on_t_even_when_called",
     dict(decls="void clear<H>(inout H h) {\n    h.setInvalid(); }",
          ingress="clear(hdr.d);"),
     "h.setInvalid();", "no method setInvalid"),
    ("uncalled_generic_undeclared_name",
     dict(decls="void put<T>(in T x) {\n    nothing = x; }"),
     "nothing = x;", "undeclared"),
    ("tuple_index_out_of_range", dict(ingress="tuple<bit<32>, bit<32>> t = { 1, 2 }; hdr.d.w2 = t[2];"),
     "t[2]", "out of range"),
    ("error_select_with_mask",
     dict(parser=PARSE_D + """state parse_d { pkt.extract(hdr.d);
        transition select(error.NoError) { error.NoError: accept; 1 &&& 1: accept; } }"""),
     "1 &&& 1", "error.X labels"),
]


@pytest.mark.parametrize(("name", "kw", "text", "reason"), INVALID, ids=[v[0] for v in INVALID])
def test_misuse_is_a_compile_error_at_its_line(name, kw, text, reason):
    src = program(**kw)
    want_line = next(i for i, ln in enumerate(src.splitlines(), 1) if text in ln)
    with pytest.raises(P4CompileError) as ei:
        switch(**kw)
    assert reason.lower() in str(ei.value).lower()
    assert ei.value.line == want_line and ei.value.col > 0, str(ei.value)

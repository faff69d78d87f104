"""What p4c rejects is rejected, with file:line:col of the original source and a one-line reason."""

from __future__ import annotations

import pytest

from softswitch import P4CompileError, Switch
from softswitch.frontend.parser import preprocess

from ..helpers import program


def reject(ingress: str = "", **kw) -> P4CompileError:
    with pytest.raises(P4CompileError) as ei:
        Switch.from_source(program(ingress, **kw), "bad.p4")
    return ei.value


@pytest.mark.parametrize("ingress,reason", [
    ("hdr.d.w0 = nosuch;", "undeclared identifier nosuch"),
    ("hdr.d.w0 = meta.m8;", "cannot use bit<8> where bit<32> is expected"),
    ("hdr.d.w0 = hdr.d.w1 + meta.m16;", "width mismatch"),
    ("if (hdr.d.w0) { }", "condition must be bool"),
    ("hdr.d.nosuch = 1;", "no field nosuch"),
    ("bool b = 1;", "cannot use int where bool"),
    ("hdr.d.w0 = (bit<32>)(int<16>)meta.m8;", "two casts"),
    ("hdr.d.w0 = 1 << meta.m8;", "cannot be inferred"),
    ("hdr.d.w0 = hdr.d.w1[32:0];", "out of range"),
    ("mark_to_drop(sm, sm);", "takes 0 or 1 arguments, got 2"),
    ("frobnicate(hdr.d.w0);", "undeclared function"),
    ("bit<8> x; bit<8> x;", "duplicate declaration of x"),
    ("hdr.d.w0 = 8w256;", "does not fit"),
    ("hdr.d.w0 = ~1;", "width cannot be inferred"),
])
def test_rejected_with_reason_and_position(ingress, reason):
    e = reject(ingress)
    assert reason in e.reason, e.reason
    assert e.file == "bad.p4" and e.line > 0
    src = program(ingress).split("\n")
    assert ingress.split(";")[0][:8] in src[e.line - 1], (e.line, src[e.line - 1])


def test_assignment_to_in_parameter():
    decls = "control C(in bit<32> x) { apply { x = 1; } }"
    e = reject("", decls=decls)
    assert "cannot assign to in parameter x" in e.reason
    e = reject("", deparser="hdr.d.w0 = 1;")
    assert "in parameter hdr" in e.reason


def test_action_arity_and_directionless_data():
    ilocals = "action a(bit<8> v) { meta.m8 = v; }"
    assert "expects 1 arguments, got 2" in reject("a(1, 2);", ilocals=ilocals).reason
    ilocals = "action a(bit<8> v) { v = 1; }"
    assert "cannot assign to directionless action parameter v" in reject("", ilocals=ilocals).reason


def test_tables_and_registers_outside_controls():
    parser = "state start { t.apply(); transition accept; }"
    with pytest.raises(P4CompileError):
        Switch.from_source(program(parser=parser), "bad.p4")
    parser = """
    state start { mark_to_drop(sm); transition accept; }
    """
    assert "only be called in a control" in reject(parser=parser).reason


def test_unknown_externs_and_unsupported_features():
    decls = "extern Frob { Frob(); void go(); }"
    assert "extern Frob is not supported" in reject("", decls=decls, ilocals="Frob() f;").reason
    decls = "header_union u_t { bit<8> a; }"
    assert "a header union holds only headers" in reject("", decls=decls).reason
    assert "exit is not allowed in a parser" in reject(
        parser="state start { exit; transition accept; }").reason


def test_table_errors():
    ilocals = "table t { key = { hdr.d.w0: fuzzy; } actions = { NoAction; } }"
    assert "unknown match kind fuzzy" in reject("", ilocals=ilocals).reason
    ilocals = "action a() {} table t { key = { hdr.d.w0: exact; } actions = { a; } default_action = b(); }"
    assert "undeclared action b" in reject("", ilocals=ilocals).reason
    ilocals = "action a() {} table t { key = { hdr.d.w0: exact; } actions = { a; } size = hdr; }"
    assert "compile-time constant" in reject("t.apply();", ilocals=ilocals).reason
    ilocals = "action a() {} table t { key = { hdr.d.w0: exact; } actions = { a; } frob = 1; }"
    assert "unknown table property frob" in reject("t.apply();", ilocals=ilocals).reason


def test_syntax_error_position_maps_through_includes(tmp_path):
    inc = tmp_path / "inc.p4"
    inc.write_text("// line 1\n// line 2\nconst bit<8> X = ;\n")
    main = tmp_path / "main.p4"
    main.write_text('#include <core.p4>\n#include "inc.p4"\n')
    with pytest.raises(P4CompileError) as ei:
        Switch.load(main)
    e = ei.value
    assert e.file.endswith("inc.p4") and e.line == 3 and "syntax error" in e.reason
    assert str(e).startswith(f"{e.file}:3:")


def test_preprocess_defines_and_missing_include(tmp_path):
    src = tmp_path / "p.p4"
    src.write_text("#if FOO == 3\nconst bit<8> Y = FOO;\n#endif\n")
    assert "const bit<8> Y = 3;" in preprocess(str(src), {"FOO": "3"})
    src.write_text('#include "nope.p4"\n')
    with pytest.raises(P4CompileError) as ei:
        preprocess(str(src))
    assert "nope.p4" in ei.value.reason


def test_stack_next_outside_parser_and_int_variables():
    decls = "header item_t { bit<8> v; }"
    assert "only be used in a parser" in reject("hdr.items.next.v = 1;", decls=decls,
                                                 hfields="item_t[2] items;").reason
    assert "cannot have type int" in reject("int x = 5;").reason
    assert "negative shift" in reject("meta.m8 = meta.m8 << -1;").reason


def test_top_level_register_is_shared_but_not_usable_in_parsers():
    from ..helpers import run_words, switch

    decls = "register<bit<32>>(4) shared;"
    sw = switch("shared.write(0, hdr.d.w0);", decls=decls, egress="shared.read(hdr.d.w1, 0);")
    assert run_words(sw, 7)[:2] == [7, 7]
    assert [r.preamble.name for r in sw.p4info.registers] == ["shared"]
    parser = "state start { shared.write(0, 1); transition accept; }"
    assert "can only be used in controls" in reject(decls=decls, parser=parser).reason

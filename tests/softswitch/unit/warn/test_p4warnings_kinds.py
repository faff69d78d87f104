"""p4c's warning kinds beyond constants and table entries: shadowing, unused tables and
instances, an unreachable accept state, uninitialised reads -- with p4c's wording and kind tag,
and none where p4c gives none."""

from __future__ import annotations

import pytest

from softswitch import P4CompileError, frontend
from softswitch.check.program import Program
from softswitch.frontend.passes import run as run_passes

from ..helpers import program


def switch(ingress: str = "", **kw) -> Program:
    """The checked program only (the warnings are the front end's; no code is generated)."""
    return run_passes(frontend.parse(frontend.preprocess_text(program(ingress, **kw), "unit.p4"), "unit.p4"))


def _texts(prog: Program) -> list[str]:
    return [w.split(" warning: ", 1)[1] for w in prog.warnings]


def _kinds(prog: Program) -> list[str]:
    return [w.split("[--Wwarn=", 1)[1].split("]", 1)[0] for w in prog.warnings]


@pytest.mark.parametrize("kw, text", [
    (dict(ingress="bit<8> y = 1; { bit<8> y = 2; hdr.d.w0 = (bit<32>)y; }"), "'y' shadows 'y'"),
    (dict(ilocals="bit<8> v; action a(bit<8> v) { hdr.d.w0 = (bit<32>)v; }", ingress="a(1);"),
     "'v' shadows 'v'"),
    (dict(decls="const bit<8> K = 1;", ingress="bit<8> K = 2; hdr.d.w0 = (bit<32>)K;"), "'K' shadows 'K'"),
    (dict(ingress="bit<8> hash = 1; hdr.d.w0 = (bit<32>)hash;"), "'hash' shadows 'hash'"),
    (dict(ingress="bit<8> exact = 1; hdr.d.w0 = (bit<32>)exact;"), "'exact' shadows 'exact'"),
    (dict(parser="bit<8> q; state start { bit<8> q = 1; transition accept; }"), "'q' shadows 'q'"),
])
def test_shadowing_warns_as_p4c(kw, text):
    sw = switch(**kw)
    assert text in _texts(sw)
    assert "shadow" in _kinds(sw)


def test_no_shadowing_warning_for_a_later_global_or_separate_scopes():
    sw = switch("{ bit<8> y = 1; hdr.d.w0 = (bit<32>)y; } { bit<8> y = 2; hdr.d.w1 = (bit<32>)y; }",
                ilocals="action a(bit<8> p) { hdr.d.w2 = (bit<32>)p; } action b(bit<8> p) { }")
    assert _texts(sw) == []


@pytest.mark.parametrize("kw", [
    dict(ilocals="action a(bit<8> x) { bit<8> x = 1; hdr.d.w0 = (bit<32>)x; }", ingress="a(1);"),
    dict(ingress="bit<8> hdr = 1;"),
    dict(parser="state start { bit<8> pkt = 1; transition accept; }"),
])
def test_a_declaration_shadowing_a_parameter_is_an_error(kw):
    with pytest.raises(P4CompileError, match="declaration of '\\w+' shadows a parameter"):
        switch(**kw)


@pytest.mark.parametrize("kw, texts", [
    (dict(ilocals="action a() {} table t { actions = { a; } } table u { actions = { a; } }",
          ingress="u.apply();"), ["Table t is not used; removing"]),
    (dict(ilocals="register<bit<32>>(4) r; register<bit<32>>(4) q; action a() { q.write(0, 1); }"
                  " table t { actions = { a; } }", ingress="t.apply();"), ["r: unused instance"]),
    # p4c removes the unapplied table, then its action; the register they used is then unused
    (dict(ilocals="register<bit<32>>(4) r; action a() { r.write(0, 1); } table t { actions = { a; } }"),
     ["Table t is not used; removing", "r: unused instance"]),
    (dict(ilocals="direct_counter(CounterType.packets) dc; table t { key = { hdr.d.w0: exact; }"
                  " actions = { NoAction; } counters = dc; }"),
     ["Table t is not used; removing", "dc: unused instance"]),
    (dict(decls="control S(inout bit<32> x) { action a() {} table st { actions = { a; } } apply { } }",
          ilocals="S() s;"), ["Table st is not used; removing", "s: unused instance"]),
    (dict(decls="register<bit<8>>(2) gr;"), ["gr: unused instance"]),
])
def test_unused_tables_and_instances_warn_as_p4c(kw, texts):
    sw = switch(**kw)
    assert _texts(sw) == texts
    assert set(_kinds(sw)) == {"unused"}


def test_an_unused_control_or_parser_is_reported_and_nothing_inside_it():
    sw = switch(decls="control S(inout bit<32> x) { register<bit<8>>(2) r;"
                      " action a(bit<8> p) { } table st { actions = { a; } } apply { } }")
    assert _texts(sw) == ["Control S is not used; removing"] and _kinds(sw) == ["unused"]
    sw = switch(decls="parser Q(packet_in b, out ethernet_t h) { state start { transition accept; } }")
    assert _texts(sw) == ["Parser Q is not used; removing"]
    # p4c reports the first round only: S2 is unused once S is gone
    sw = switch(decls="control S2() { apply { } } control S() { S2() s2; apply { s2.apply(); } }")
    assert _texts(sw) == ["Control S is not used; removing"]
    assert _texts(switch(decls='@noWarn("unused") control S() { apply { } }')) == []


@pytest.mark.parametrize("kw, texts", [
    (dict(ilocals="action a(bit<8> p, bit<8> q) { hdr.d.w0 = (bit<32>)q; }"
                  " table t { actions = { a; } }", ingress="t.apply();"), ["'p' is unused"]),
    # an action only an unapplied table names is still visited on p4c's first round
    (dict(ilocals="action a(bit<8> p) { } table t { actions = { a; } }"),
     ["'p' is unused", "Table t is not used; removing"]),
    (dict(decls="bit<8> f(in bit<8> x, in bit<8> y) { return y; }",
          ingress="hdr.d.w0 = (bit<32>)f(1, 2);"), ["'x' is unused"]),
    (dict(decls="action g(inout bit<32> x, bit<8> y) { x = 1; }", ingress="g(hdr.d.w0, 3);"),
     ["'y' is unused"]),
    # an action nothing names is removed without visiting its parameters; so is one in an unused
    # control; parameters of controls, parsers and externs are not checked
    (dict(ilocals="action a(bit<8> p) { }", ingress=""), []),
    (dict(decls="control U(inout data_t h) { apply { } }",
          ilocals="U() u;", ingress="u.apply(hdr.d); mark_to_drop(sm);"), []),
    (dict(ilocals='action a(@noWarn("unused") bit<8> p) { } table t { actions = { a; } }',
          ingress="t.apply();"), []),
])
def test_unused_parameters_of_actions_and_functions_warn_as_p4c(kw, texts):
    assert _texts(switch(**kw)) == texts


def test_unreachable_accept_warns_and_a_parser_reaching_neither_end_is_an_error():
    sw = switch(parser="state start { transition reject; }")
    assert _texts(sw) == ["accept state in P is unreachable"] and _kinds(sw) == ["parser-transition"]
    assert _texts(switch(parser="state start { transition accept; } state dead { transition reject; }")) == []
    with pytest.raises(P4CompileError, match="P: Parser never reaches accept or reject state"):
        switch(parser="state start { transition start; }")


# p4c's own sample of uninitialised reads (testdata/p4_16_samples/uninit.p4, control c), in a
# v1model skeleton: p4c reports exactly b, e twice, touched and the out parameter v
UNINIT_CONTROL = """
control Cu(out bit<32> v) {
    bit<32> b;
    bit<32> d = 1;
    bit<32> setByAction;
    action a1() { setByAction = 1; }
    action a2() { setByAction = 1; }
    table t { actions = { a1; a2; } default_action = a1(); }
    apply {
        b = b + 1;
        d = d + 1;
        bit<32> e;
        bit<32> f;
        if (e > 0) { e = 1; f = 2; } else { f = 3; }
        e = e + 1;
        bool touched;
        switch (t.apply().action_run) { a1: { touched = true; } }
        touched = !touched;
        if (e > 0) { a2(); } else { a1(); }
        setByAction = setByAction + 1;
    }
}
"""


def test_uninitialised_reads_of_p4cs_sample():
    sw = switch("cu.apply(hdr.d.w0);", decls=UNINIT_CONTROL, ilocals="Cu() cu;")
    assert _texts(sw) == ["out parameter 'v' may be uninitialized when 'Cu' terminates",
                          "b may be uninitialized", "e may be uninitialized", "e may be uninitialized",
                          "touched may be uninitialized"]
    assert _kinds(sw) == ["uninitialized_out_param"] + ["uninitialized_use"] * 4


@pytest.mark.parametrize("kw, texts", [
    (dict(ilocals="action a() { bit<8> t; t = t + 1; hdr.d.w0 = (bit<32>)t; }", ingress="a();"),
     ["t may be uninitialized"]),
    (dict(ilocals="action a() { bit<8> t; hdr.d.w0 = (bit<32>)t; }"), []),  # p4c removes the action
    (dict(decls="bit<8> f(out bit<8> o) { bit<8> r = o; o = 1; return r; }",
          ingress="bit<8> z; hdr.d.w0 = (bit<32>)f(z);"), ["o may be uninitialized"]),
    (dict(decls="void f(out bit<8> o, in bit<8> i) { if (i == 1) { o = 2; } }",
          ingress="bit<8> z; f(z, 1); hdr.d.w0 = (bit<32>)z;"),
     ["out parameter 'o' may be uninitialized when 'f' terminates"]),
    (dict(parser="bit<8> pv; state start { pkt.extract(hdr.eth); transition select(hdr.eth.etype) {"
                 " 1: one; default: two; } } state one { pv = 1; transition two; }"
                 " state two { hdr.eth.etype = (bit<16>)pv; transition accept; }"),
     ["pv may be uninitialized"]),
    (dict(parser="bit<8> pv; state start { pkt.extract(hdr.eth); pv = 3;"
                 " transition select(hdr.eth.etype) { 1: one; default: two; } }"
                 " state one { pv = 1; transition two; }"
                 " state two { hdr.eth.etype = (bit<16>)pv; transition accept; }"), []),
    # written on every path, through an out argument, or after an exit: nothing to report
    (dict(ingress="bit<8> x; if (hdr.d.w1 == 1) { x = 1; } else { exit; } hdr.d.w0 = (bit<32>)x;"), []),
    (dict(ingress="bit<32> x; random(x, 0, 5); hdr.d.w0 = x;"), []),
])
def test_uninitialised_reads_warn_where_p4c_does(kw, texts):
    assert _texts(switch(**kw)) == texts


def test_calls_of_deprecated_declarations_warn_as_p4c():
    """p4c's CheckDeprecated: v1model's mark_to_drop() (no argument), clone3 and user
    declarations annotated @deprecated; the overload mark_to_drop(sm) is not deprecated."""
    prog = switch("mark_to_drop(); clone3(CloneType.I2E, 32w5, {hdr.d.w0}); mark_to_drop(sm); old();",
                  decls='@deprecated("use new() instead") action old() { }')
    assert _kinds(prog) == ["deprecated"] * 3
    assert _texts(prog) == [
        "mark_to_drop: Using deprecated feature mark_to_drop. Please use mark_to_drop(standard_metadata) "
        "instead.",
        "clone3: Using deprecated feature clone3. Please use 'clone_preserving_field_list' instead",
        "old: Using deprecated feature old. use new() instead"]
    assert switch("mark_to_drop(sm);").warnings == []
    quiet = switch("a();", decls='@deprecated("x") action old() { }',
                   ilocals='@noWarn("deprecated") action a() { old(); }')
    assert "deprecated" not in _kinds(quiet)

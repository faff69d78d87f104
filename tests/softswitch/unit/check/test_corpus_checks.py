"""The checks added from p4c's error corpus leave the programs p4c accepts alone: top-level
``;`` after declarations, user packages whose blocks fit their types (also generic ones), one
name used as a local and a top-level declaration, annotations p4c parses, generic controls
nothing instantiates whose bodies hold for every type argument."""

from __future__ import annotations

import pytest

from softswitch import Switch

from ..helpers import program

_PACKAGES = """
parser Filter_t(out bool keep);
control Count_t<T>(inout T v);
package Pack<T>(Filter_t f, Count_t<T> c);
parser Keep(out bool keep) {
    state start {
        keep = true;
        transition accept;
    }
}
control Bump(inout bit<8> v) {
    apply { v = v + 1; }
}
Pack<bit<8>>(Keep(), Bump()) pack;
typedef bit<8> byte_t;
control BumpNamed(inout byte_t v) {
    apply { v = v + 2; }
}
Pack<bit<8>>(Keep(), BumpNamed()) pack_named;
Pack(Keep(), Bump()) pack_inferred;
package Outer<T>(Pack<T> inner);
Outer<bit<8>>(pack) outer;
Outer(pack_named) outer_inferred;
"""


@pytest.mark.parametrize("decls", [
    "struct empty_t { };\n;\n",
    _PACKAGES,
    "struct pair_t {\n    bit<8> a;\n    bool b;\n}\nconst pair_t unused_pair = { a = 1, b = true };\n"
    "const tuple<bit<8>, bool> unused_tuple = { 2, false };\n",
    "control Copy_g<T>(inout T x, in T y) {\n    apply { x = y; }\n}\n"
    "control Keep_g<T, U>(inout T x, out U u, in U w) {\n    T keep;\n"
    "    apply { keep = x; x = keep; u = w; if (x == keep) { u = w; } }\n}\n"
    "control Nest_g<H>(inout H h) {\n    Copy_g<H>() c;\n    apply { c.apply(h, h); }\n}\n",
    "const bit<8> limit = 3;\n"
    "control Limit(inout bit<8> v) {\n    apply { bit<8> limit = 2; v = limit; }\n}\n",
    '@name("renamed") @noWarn("unused") @deprecated("old")\nconst bit<8> old = 1;\n'
    "@info[size = 4, label = \"x\", on = true]\nconst bit<8> tagged = 2;\n"
    "@pair(1) @pair(2)\nconst bit<8> twice = 3;\n",
])
def test_accepted(decls):
    Switch.from_source(program("", decls=decls), "ok.p4")


def test_name_annotation_may_concatenate_strings():
    """``@name("a" ++ "b")`` is one string (P4_16 1.2.4) and names the action in P4Info."""
    sw = Switch.from_source(program("t_cat.apply();", ilocals=(
        '@name("set" ++ "_mark") action mark() { }\n'
        "table t_cat { actions = { mark; NoAction; } default_action = NoAction(); }")), "cat.p4")
    assert any(a.preamble.name.endswith("set_mark") for a in sw.p4info.actions)

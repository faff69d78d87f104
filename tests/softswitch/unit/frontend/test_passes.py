"""The front end's one pass list (``frontend/passes.py``): its order, and argument binding as a
pass of its own that leaves nothing named or defaulted for ``desugar.py``."""

from __future__ import annotations

from lark import Tree

from softswitch import frontend
from softswitch.frontend.bind_arguments import bind_arguments
from softswitch.frontend.passes import PASSES

from ..helpers import program

SOURCE = program(
    "hdr.d.w2 = sub(b = hdr.d.w0, a = hdr.d.w1) + sub(a = 10); two(_, 1);"
    " r.write(value = 6, index = 1);",
    decls="bit<32> sub(in bit<32> a, in bit<32> b = 1) { return a - b; }\n"
          "bit<32> two(out bit<32> y, in bit<32> v) { y = v; return v + v; }",
    ilocals="register<bit<32>>(4) r;")


def _parsed():
    return frontend.parse(frontend.preprocess_text(SOURCE, "unit.p4"), "unit.p4")


def _calls(tree: Tree, name: str) -> list[list]:
    """The argument lists of the calls of ``name`` (a function or a method)."""
    out = []
    for c in tree.find_data("call"):
        callee = c.children[0]
        leaf = callee.children[-1] if isinstance(callee, Tree) else callee
        leaf = leaf.children[-1] if isinstance(leaf, Tree) else leaf
        if str(leaf) == name:
            out.append([a for a in (c.children[-1].children if c.children[-1] is not None else [])
                        if a is not None])
    return out


def test_the_list_runs_checks_rewrites_then_checks_in_order():
    names = [n for n, _ in PASSES]
    assert names.index("unused") < names.index("sub-parsers") < names.index("argument binding") \
        < names.index("desugar") < names.index("V1Switch blocks") < names.index("warnings")
    assert names.count("generic structs and headers") == 4


def test_argument_binding_alone_makes_named_and_default_arguments_positional():
    parsed = _parsed()
    err = lambda node, msg: AssertionError(msg)  # noqa: E731 - the program is valid
    assert any(a.data == "named_arg" for args in _calls(parsed.tree, "sub") for a in args)
    bind_arguments(parsed.tree, err)
    subs = _calls(parsed.tree, "sub")
    assert [len(a) for a in subs] == [2, 2]                       # b's default filled in
    assert all(a.data != "named_arg" for args in subs for a in args)
    assert [a.data for a in subs[1]] == ["int_lit", "int_lit"]    # sub(a = 10) -> sub(10, 1)
    write = _calls(parsed.tree, "write")[0]
    assert [a.data for a in write] == ["int_lit", "int_lit"] and str(write[0].children[0]) == "1"
    # a don't-care stays for desugar.py, which declares its temporary with the statement's others
    assert [a.data for a in _calls(parsed.tree, "two")[0]][0] == "dontcare_arg"

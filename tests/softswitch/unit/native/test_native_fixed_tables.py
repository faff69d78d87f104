"""Tables whose rows can never change (``const entries``, exact keys, no direct resource) are
compiled into compares by the native backend (``cgen._fixed_lookup``); every other table is
looked up at run time.  Both must find what the python backend finds, hits, misses and a default
action the control plane changed included."""

from __future__ import annotations

import pytest

from softswitch.api import Exact
from softswitch.native.build import c_source, compiler
from tests.softswitch.unit.helpers import run_words, switch

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

TABLE = """
    action set(bit<32> v) { hdr.d.w1 = v; }
    action add(bit<32> v) { hdr.d.w1 = hdr.d.w0 + v; }
    action mark() { hdr.d.w2 = 7; }
    table t {
        key = { hdr.d.w0 : exact; hdr.d.w3[7:0] : exact; }
        actions = { set; add; mark; }
        const entries = {
            (1, 0) : set(0xfffffff0);
            (2, 0) : add(5);
            (2, 1) : mark();
            (0xffffffff, 0xff) : set(9);
        }
        default_action = mark();
    }
"""
EMPTY = """
    action mark() { hdr.d.w2 = 7; }
    table t { key = { hdr.d.w0 : exact; } actions = { mark; } const entries = { } }
"""
PACKETS = [(1, 0, 0, 0), (2, 0, 0, 0), (2, 0, 0, 1), (0xFFFFFFFF, 0, 0, 0xFF), (3, 0, 0, 0), (1, 0, 0, 1)]


@pytest.mark.parametrize("decl", [TABLE, EMPTY], ids=["rows", "no-rows"])
def test_fixed_table_agrees_with_python(decl):
    py, nat = (switch("t.apply();", backend=b, ilocals=decl) for b in ("python", "native"))
    assert "*hit = ss_lookup_miss(" in c_source(nat.compiled)[0]
    for ws in PACKETS:
        assert run_words(nat, *ws) == run_words(py, *ws), ws
    for sw in (py, nat):  # the default action is not const: the control plane may change it
        sw.table_set_default("t", "NoAction" if decl is EMPTY else "set", {} if decl is EMPTY else {"v": 3})
    for ws in PACKETS:
        assert run_words(nat, *ws) == run_words(py, *ws), ws


def test_tables_the_control_plane_writes_are_looked_up():
    decl = TABLE.replace("const entries", "entries")
    nat = switch("t.apply();", backend="native", ilocals=decl)
    assert "*hit = ss_lookup(px, " in c_source(nat.compiled)[0]
    nat.table_delete("t", {"hdr.d.w0": Exact(1), "hdr.d.w3[7:0]": Exact(0)})
    py = switch("t.apply();", ilocals=decl)
    py.table_delete("t", {"hdr.d.w0": Exact(1), "hdr.d.w3[7:0]": Exact(0)})
    for ws in PACKETS:
        assert run_words(nat, *ws) == run_words(py, *ws), ws

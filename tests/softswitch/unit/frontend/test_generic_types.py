"""Generic structs and headers (names and sharing of their specialisations, P4Info), abstract
extern methods, ``tuple<T>`` constructor parameters and functions given extern instances; the
packets these programs make are in ``programs/generic_types`` and
``programs/function_extern_params`` (both backends)."""

from __future__ import annotations

from pathlib import Path

import pytest

from softswitch import Switch
from softswitch.api import P4CompileError

from ..helpers import frame, run_words, switch

PROGRAMS = Path(__file__).parents[2] / "programs"

GENERIC = """
struct S<T> { T a; bit<8> tag; }
typedef bit<32> word_t;
typedef S<word_t> SW;
"""


@pytest.mark.parametrize("backend", ["python", "native"])
def test_equivalent_type_arguments_share_one_specialisation(backend):
    # S<word_t> and S<bit<32>> are one type for p4c (a typedef is its type): assignable both ways
    ingress = """
        S<bit<32>> x = { a = hdr.d.w0, tag = 1 };
        SW y = x;
        S<bit<8>> z = { a = 3, tag = 2 };
        hdr.d.w1 = y.a + (bit<32>)y.tag + (bit<32>)z.a + (bit<32>)z.tag;
    """
    sw = switch(ingress, decls=GENERIC, backend=backend)
    assert run_words(sw, 10)[:2] == [10, 16]


def test_specialised_names_follow_p4c_in_p4info_digests():
    # p4c names the copies of S <name>_0, <name>_1, ... in order of first use (skipping names
    # the program uses); a digest of one lists that name in P4Info
    decls = GENERIC + "struct S_0 { bit<8> taken; }\n"
    ingress = """
        S<bit<8>> first = { a = 1, tag = 2 };
        digest<S<bit<16>>>(1, { a = 16w7, tag = first.tag });
    """
    sw = switch(ingress, decls=decls)
    names = [d.preamble.name for d in sw.p4info.digests]
    assert names == ["S_3"]  # S_1 is S<word_t> (the typedef), S_2 S<bit<8>>
    assert [m.name for m in sw.p4info.type_info.structs["S_3"].members] == ["a", "tag"]
    sw.process(0, frame(1))


def test_register_given_to_a_function_keeps_its_control_plane_name():
    sw = Switch.load(str(PROGRAMS / "function_extern_params.p4"), defines={}, include_dirs=[],
                     cpu_port=None)
    assert sorted(r.preamble.name for r in sw.p4info.registers) == ["MyIngress.r16"]
    assert sorted(c.preamble.name for c in sw.p4info.counters) == ["MyIngress.hits"]


ABSTRACT = """
struct G<T> { T a; }
extern Hook { Hook(); abstract bit<32> f(in bit<32> x); bit<32> g(); }
extern Pair<T> { Pair(tuple<T, T> init); T first(); tuple<T, T> both(); }
extern Ex { Ex(); void m<T>(in tuple<T, bit<8>> x); void g<T>(in G<T> x); }
extern void ef<T>(in tuple<T, T> x);
extern void eg<T>(in G<T> x);
control Unused<T>(inout G<T> s) { apply { } }
"""


def test_abstract_methods_generic_tuples_and_structs_in_extern_prototypes_are_accepted():
    sw = switch("hdr.d.w1 = hdr.d.w0;", decls=ABSTRACT)
    assert run_words(sw, 4)[:2] == [4, 4]


def test_an_implemented_abstract_method_passes_the_checks_and_the_extern_is_refused_by_name():
    ilocals = "Hook() hk = { bit<32> f(in bit<32> x) { return x + 1; } };"
    with pytest.raises(P4CompileError, match="extern Hook is not supported by this target"):
        switch("hdr.d.w1 = hk.f(hdr.d.w0);", decls=ABSTRACT, ilocals=ilocals)


@pytest.mark.parametrize("backend", ["python", "native"])
def test_a_function_given_a_top_level_and_a_control_register_gets_one_copy_for_each(backend):
    decls = """
    register<bit<32>>(4) top;
    void add<T>(register<T> r, in bit<32> i, in T v) { T old; r.read(old, i); r.write(i, old + v); }
    bit<32> peek(register<bit<32>> r, in bit<32> i) { bit<32> v; r.read(v, i); return v; }
    """
    ingress = """
        add(top, 0, hdr.d.w0);
        add(mine, 1, hdr.d.w1);
        hdr.d.w2 = peek(top, 0);
        hdr.d.w3 = peek(mine, 1);
    """
    sw = switch(ingress, decls=decls, ilocals="register<bit<32>>(4) mine;", backend=backend)
    assert run_words(sw, 5, 7)[:4] == [5, 7, 5, 7]
    assert run_words(sw, 1, 1)[:4] == [1, 1, 6, 8]
    assert sorted(r.preamble.name for r in sw.p4info.registers) == ["I.mine", "top"]


@pytest.mark.parametrize("backend", ["python", "native"])
def test_generic_struct_of_a_type_variable_in_a_generic_control_and_function(backend):
    decls = """
    struct S<T> { T a; T b; }
    control Swap<T>(inout S<T> s) { apply { T t = s.a; s.a = s.b; s.b = t; } }
    S<T> mk<T>(in T x, in T y) { S<T> r = { a = x, b = y }; return r; }
    """
    ingress = """
        S<bit<32>> s = mk(hdr.d.w0, hdr.d.w1);
        sw32.apply(s);
        hdr.d.w2 = s.a; hdr.d.w3 = s.b;
    """
    sw = switch(ingress, decls=decls, ilocals="Swap<bit<32>>() sw32;", backend=backend)
    assert run_words(sw, 5, 7)[:4] == [5, 7, 7, 5]

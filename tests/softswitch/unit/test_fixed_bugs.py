"""Regression tests for the bugs once listed in tests/softswitch/CORE_BUGS.md and
tests/p4src/SOFTSWITCH_BUGS.md (the notes are gone; these tests keep the fixes)."""

from __future__ import annotations

import pytest

import softswitch.compiler as compiler
from softswitch import P4CompileError, Switch

from .helpers import program, run_words, switch


def test_state_without_transition_is_transition_reject():
    """P4_16: an empty transition statement means ``transition reject`` (was a syntax error)."""
    implicit = "state start { pkt.extract(hdr.eth); transition next; } state next { pkt.extract(hdr.d); }"
    explicit = ("state start { pkt.extract(hdr.eth); transition next; } "
                "state next { pkt.extract(hdr.d); transition reject; }")
    a = switch("hdr.d.w1 = 9;", parser=implicit)
    b = switch("hdr.d.w1 = 9;", parser=explicit)
    assert run_words(a, 5) == run_words(b, 5)


def test_hash_error_stops_compilation():
    """``#error`` in the program is a compile error carrying its text (was printed and ignored)."""
    src = "#error \"stop here\"\n" + program("")
    with pytest.raises(P4CompileError, match="stop here"):
        Switch.from_source(src, "err.p4")


def test_negative_shift_amount_is_rejected():
    with pytest.raises(P4CompileError, match="negative|shift"):
        switch("hdr.d.w0 = hdr.d.w0 << -1;")


def test_unexpected_compiler_failure_is_a_compile_error(monkeypatch):
    """A Python error inside the compiler never escapes as a crash: it names the file."""
    def broken(*_a, **_k):
        raise KeyError("boom")

    monkeypatch.setattr(compiler, "run_passes", broken)
    with pytest.raises(P4CompileError) as ei:
        Switch.from_source(program(""), "broken.p4")
    assert ei.value.file == "broken.p4" and "KeyError" in ei.value.reason

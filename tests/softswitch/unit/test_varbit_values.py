"""Varbit values outside headers: a parameter of type varbit is refused with its name (its current
length would not reach the callee), on both backends; struct, tuple and variable values of varbit
type are covered by ``programs/varbit_struct`` and ``programs/varbit_locals``."""

from __future__ import annotations

import pytest

from softswitch.api import P4CompileError

from .helpers import switch

DECLS = "header vb_t { varbit<32> v; }"


@pytest.mark.parametrize("backend", ["python", "native"])
def test_varbit_parameter_is_refused_by_name(backend: str):
    locals_ = "    action put(in varbit<32> x) { hdr.c.v = x; }"
    with pytest.raises(P4CompileError, match="parameter x of type varbit<32>"):
        switch("        hdr.c.setValid();", backend, decls=DECLS, hfields="vb_t c;", ilocals=locals_)

"""Varbit values outside headers: a parameter of type varbit that is not an ``in`` parameter of an
action or function (``out``/``inout``, action data, a control's) is refused with its name (its
current length would be lost), on both backends; ``in`` parameters, struct, tuple and variable
values of varbit type are covered by ``programs/varbit_params``, ``varbit_struct`` and
``varbit_locals``."""

from __future__ import annotations

import pytest

from softswitch.api import P4CompileError

from .helpers import switch

DECLS = "header vb_t { varbit<32> v; }"


@pytest.mark.parametrize("backend", ["python", "native"])
def test_varbit_parameter_is_refused_by_name(backend: str):
    locals_ = "    action put(out varbit<32> x) { x = hdr.c.v; }"
    with pytest.raises(P4CompileError, match="parameter x of type varbit<32>"):
        switch("        hdr.c.setValid();", backend, decls=DECLS, hfields="vb_t c;", ilocals=locals_)

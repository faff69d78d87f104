"""Varbit action data is refused on both backends, as p4c's BMv2 back end refuses it ("action
parameters must be bit<> or int<>").  What runs -- ``in``/``out``/``inout`` varbit parameters
of functions, directly called actions (also one that exits), actions bound in a table's action
list, sub-controls and sub-parsers, struct, tuple and variable values of varbit type -- is
covered by ``programs/varbit_params``, ``varbit_out_params``, ``varbit_control_params``,
``varbit_parser_params``, ``varbit_struct`` and ``varbit_locals``."""

from __future__ import annotations

import pytest

from softswitch.api import P4CompileError

from ..helpers import switch

DECLS = "header vb_t { varbit<32> v; }"


@pytest.mark.parametrize("backend", ["python", "native"])
def test_varbit_action_data_is_refused(backend: str):
    locals_ = ("    action put(varbit<32> x) { hdr.c.v = x; }\n"
               "    table t { actions = { put; } }")
    with pytest.raises(P4CompileError, match="action parameter x: control-plane data must be"):
        switch("        t.apply();", backend, decls=DECLS, hfields="vb_t c;", ilocals=locals_)


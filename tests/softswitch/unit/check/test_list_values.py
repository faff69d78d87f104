"""``list<T>`` values whose length this target cannot know where they are declared are refused
by name (p4c's front end accepts them): a parameter, a function result and a variable without
an initialiser.  What p4c refuses (indexing, casting a non-list to ``list<T>``) is in
``negative/``; the supported uses run in ``programs/list_values``."""

from __future__ import annotations

import pytest

from softswitch.api import P4CompileError

from ..helpers import switch


@pytest.mark.parametrize(("decls", "ingress", "why"), [
    ("bit<8> first(in list<bit<8>> p) { return 8w1; }", "", "parameter p of type list<T>"),
    ("list<bit<8>> make() { return {8w1}; }", "", "function result of type list<T>"),
    ("", "        list<bit<8>> l;", "needs a list expression"),
])
def test_list_without_a_known_length_is_refused(decls: str, ingress: str, why: str):
    with pytest.raises(P4CompileError, match=why):
        switch(ingress, decls=decls)

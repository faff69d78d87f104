"""Declarations nothing instantiates are type-checked as p4c does (its errors are in the negative
suite, ``negative/gen_negative_corpus.py``), and valid ones still load and leave the pipeline
as it was: blocks with constructor parameters, and unused blocks that instantiate them."""

from __future__ import annotations

import pytest

from ..helpers import run_words, switch

UNUSED = """
control Leaf(inout bit<32> v)(bit<32> k) { apply { v = v + k; } }
control Holder(inout bit<32> v)() {
    Leaf(32w5) leaf;
    apply { leaf.apply(v); }
}
control Spare(inout bit<32> v)(bit<32> k, bool twice) {
    apply { v = twice ? v + k + k : v + k; }
}
parser Skip(packet_in pk)() { state start { transition accept; } }
"""


@pytest.mark.parametrize("backend", ["python", "native"])
def test_unused_blocks_with_constructor_parameters_load_and_run(backend):
    sw = switch("hdr.d.w2 = hdr.d.w0 + hdr.d.w1;", backend=backend, decls=UNUSED)
    assert run_words(sw, 5, 7)[:3] == [5, 7, 12]

"""v1model extern functions called inside user functions (generic or not), on both backends.

p4c inlines a function at each call site, so its extern calls behave as if written there, with
the function's copy-in/copy-out around them: ``mark_to_drop``, ``clone``, ``digest``,
``truncate``, ``resubmit_preserving_field_list`` and the checksum functions (these only where
BMv2 allows them: a checksum control may call a function made of nothing but its own checksum
calls; no other block may call it).
"""

from __future__ import annotations

import pytest

from softswitch import P4CompileError
from softswitch.api import Replica

from ..helpers import frame, switch

BACKENDS = ["python", "native"]

DECLS = """
struct learn_t { bit<32> a; bit<8> b; }
void drop_it(inout standard_metadata_t s) { mark_to_drop(s); }
void drop_generic<T>(inout standard_metadata_t s, in T tag) { mark_to_drop(s); }
void mirror(in bit<32> sess) { clone(CloneType.I2E, sess); }
void learn(in bit<32> a) { digest<learn_t>(1, {a, 8w7}); }
void cut(in bit<32> n) { truncate(n); }
bit<32> drop_then(inout standard_metadata_t s, inout bit<9> port) {
    mark_to_drop(s);
    port = 5;
    return 3;
}
void again(inout bit<8> m8) { m8 = 0x5a; resubmit_preserving_field_list(1); }
"""

INGRESS = """
    if (hdr.d.w0 == 1) { drop_it(sm); }
    if (hdr.d.w0 == 2) { drop_generic(sm, hdr.d.w1); }
    if (hdr.d.w0 == 3) { mirror(5); }
    if (hdr.d.w0 == 4) { learn(hdr.d.w1); }
    if (hdr.d.w0 == 5) { cut(20); }
    if (hdr.d.w0 == 6) { hdr.d.w2 = drop_then(sm, sm.egress_spec); }
    if (hdr.d.w0 == 7) {
        if (sm.instance_type == 0) { again(meta.m8); } else { hdr.d.w3 = (bit<32>)meta.m8; }
    }
"""


@pytest.fixture(scope="module", params=BACKENDS)
def sw(request):
    s = switch(INGRESS, backend=request.param, decls=DECLS, mfields="@field_list(1) bit<8> kept;")
    s.clone_session_set(5, [Replica(3, 0)])
    return s


def _ports(sw, w0: int, w1: int = 0) -> list[tuple[int, bytes]]:
    return sw.process(0, frame(w0, w1))


def test_plain_packet_forwards(sw):
    assert [p for p, _b in _ports(sw, 0)] == [1]


@pytest.mark.parametrize("w0", [1, 2])
def test_mark_to_drop_in_a_function_drops(sw, w0):
    assert _ports(sw, w0) == []


def test_clone_in_a_function_mirrors(sw):
    assert sorted(p for p, _b in _ports(sw, 3)) == [1, 3]


def test_digest_in_a_function(sw):
    sw.digests()
    _ports(sw, 4, 0x11)
    assert sw.digests() == [("learn_t", (0x11, 7))]


def test_truncate_in_a_function(sw):
    assert [len(b) for _p, b in _ports(sw, 5)] == [20]


def test_copy_out_left_to_right_after_the_extern(sw):
    # s (dropped: egress_spec 511) is copied out first, then port = 5 over its egress_spec
    out = _ports(sw, 6)
    assert [p for p, _b in out] == [5]
    assert out[0][1][14 + 8:14 + 12] == (3).to_bytes(4, "big")


def test_resubmit_in_a_function(sw):
    # meta.m8 is not in field list 1: the resubmitted packet starts with 0 there
    out = _ports(sw, 7)
    assert [p for p, _b in out] == [1]
    assert out[0][1][14 + 12:14 + 16] == (0).to_bytes(4, "big")


CSUM_DECLS = """
void upd(inout data_t d) { update_checksum(d.w0 == 9, {d.w1}, d.w2, HashAlgorithm.csum16); }
void upd_nested(inout data_t d) { upd(d); }
void ver(in data_t d) { verify_checksum(true, {d.w1}, d.w3, HashAlgorithm.csum16); }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_checksum_functions_in_the_checksum_controls(backend):
    sw = switch("hdr.d.w4 = (bit<32>)sm.checksum_error;", backend=backend, decls=CSUM_DECLS,
                compute="upd_nested(hdr.d);", verify="ver(hdr.d);")
    good = 0xEDCB  # csum16 of 0x00001234
    for w0, w3, err in [(8, good, 0), (9, good, 0), (9, 0x1111, 1)]:
        (_p, b), = sw.process(0, frame(w0, 0x1234, 0, w3))
        d = [int.from_bytes(b[14 + 4 * i:18 + 4 * i], "big") for i in range(5)]
        assert d[2] == (good if w0 == 9 else 0)
        assert d[4] == err


@pytest.mark.parametrize("where, msg", [
    (dict(ingress="upd(hdr.d);"), "update_checksum can only be called in the ComputeChecksum control, "
                                  "not in I (called by function upd"),
    (dict(ingress="upd_nested(hdr.d);"), "called by function upd_nested"),
    (dict(compute="ver(hdr.d);"), "only calls to update_checksum"),
    (dict(verify="upd_nested(hdr.d);"), "only calls to verify_checksum"),
])
def test_checksum_functions_elsewhere_are_rejected(where, msg):
    with pytest.raises(P4CompileError, match=msg.replace("(", r"\(")):
        switch(decls=CSUM_DECLS, **where)


def test_function_with_other_statements_is_rejected_in_a_checksum_control():
    decls = CSUM_DECLS + "void mixed(inout data_t d) { d.w5 = 1; upd(d); }"
    with pytest.raises(P4CompileError, match="only calls to update_checksum"):
        switch(decls=decls, compute="mixed(hdr.d);")


GLOBAL_DECLS = """
register<bit<32>>(4) gr;
counter(4, CounterType.packets) gc;
bit<32> bump(in bit<32> i) { bit<32> v; gr.read(v, i); gr.write(i, v + 1); gc.count(i); return v; }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_function_uses_top_level_instances_left_to_right(backend):
    sw = switch("hdr.d.w2 = (bump(0) << 8) | bump(0);", backend=backend, decls=GLOBAL_DECLS)
    for first in (0, 2):
        (_p, b), = sw.process(0, frame(5, 7))
        # the left call runs first: it reads `first`, the right one `first + 1`
        assert int.from_bytes(b[14 + 8:14 + 12], "big") == (first << 8) | (first + 1)
    assert sw.register_read("gr", 0) == 4
    assert sw.counter_read("gc", 0)[0] == 4

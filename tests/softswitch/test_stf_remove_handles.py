"""STF ``remove all`` and ``check_counter c($NAME)`` (p4c's STF grammar), on both backends."""

from __future__ import annotations

import pytest

from softswitch.stf.syntax import AddEntry, CheckCounter, RemoveAll, StfSyntaxError, parse_stf

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { eth_t eth; }
struct meta_t { }
parser P(packet_in pk, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.eth); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) hits;
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table t {
        key = { h.eth.type : exact; }
        actions = { fwd; drop; }
        default_action = drop();
        counters = hits;
    }
    apply { t.apply(); }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pk, in headers h) { apply { pk.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

FRAME = "000000000001 000000000002 {t} 00000000"


def _pkt(t: str) -> str:
    return FRAME.format(t=t)


def test_parse_handles_remove_all_and_named_counter():
    f = parse_stf("add t h.eth.type:0x800 fwd(port:1) = A\nremove all\ncheck_counter hits($A) bytes > 3\n"
                  "check_counter hits($A)\n")
    add, rm, chk, chk0 = f.commands
    assert isinstance(add, AddEntry) and add.handle == "A"
    assert rm == RemoveAll(2)
    assert chk == CheckCounter(3, "hits", "A", "bytes", ">", 3)
    assert chk0 == CheckCounter(4, "hits", "A", "packets", "==", 0)


@pytest.mark.parametrize("line, reason", [
    ("remove t", "remove takes: all"),
    ("remove", "remove takes: all"),
    ("check_counter c($1x)", "not an entry name"),
    ("add t k:1 act() = 1A", "want '= NAME'"),
])
def test_bad_forms(line, reason):
    with pytest.raises(StfSyntaxError, match=reason):
        parse_stf(line + "\n")


def _run(tmp_path, text: str, backend: str):
    from softswitch.stf.runner import run_stf

    prog, stf = tmp_path / "p.p4", tmp_path / "t.stf"
    prog.write_text(PROGRAM)
    stf.write_text(text)
    return run_stf(str(prog), str(stf), backend=backend, all_ports=True)


@pytest.mark.parametrize("backend", ["python", "native"])
def test_named_entry_counters_and_remove_all(tmp_path, backend):
    """Each named entry's direct counter counts its own hits; ``remove all`` deletes the file's
    entries (the default stays), so the same frames then miss and are dropped."""
    text = (f"add t h.eth.type:0x0800 fwd(port:1) = V4\n"
            f"add t h.eth.type:0x86dd fwd(port:2) = V6\n"
            f"packet 0 {_pkt('0800')}\nexpect 1 {_pkt('0800')}\n"
            f"packet 0 {_pkt('0800')}\nexpect 1 {_pkt('0800')}\n"
            f"packet 0 {_pkt('86dd')}\nexpect 2 {_pkt('86dd')}\nwait\n"
            "check_counter hits($V4) packets == 2\ncheck_counter hits($V4) bytes == 36\n"
            "check_counter hits($V6) packets == 1\n"
            "remove all\n"
            f"packet 0 {_pkt('0800')}\npacket 0 {_pkt('86dd')}\nno_packet\n"
            f"add t h.eth.type:0x0800 fwd(port:3) = V4\n"
            f"packet 0 {_pkt('0800')}\nexpect 3 {_pkt('0800')}\nwait\n"
            "check_counter hits($V4) packets == 1\n")
    res = _run(tmp_path, text, backend)
    assert res.passed, res.report()
    assert (res.packets_sent, res.packets_received) == (6, 4)


@pytest.mark.parametrize("backend", ["python", "native"])
def test_named_counter_failures_are_reported(tmp_path, backend):
    text = (f"add t h.eth.type:0x0800 fwd(port:1) = V4\n"
            f"packet 0 {_pkt('0800')}\nexpect 1 {_pkt('0800')}\nwait\n"
            "check_counter hits($V4) packets == 2\n"     # wrong count
            "check_counter hits($NOPE)\n"                # unknown name
            "remove all\ncheck_counter hits($V4)\n")     # removed with its entry
    res = _run(tmp_path, text, backend)
    assert len(res.failures) == 3, res.report()
    assert "hits($V4) packets = 1, expected == 2" in res.failures[0]
    assert "no entry named 'NOPE'" in res.failures[1]
    assert "no entry named 'V4'" in res.failures[2]

"""v1model packet flow: drops, multicast/PRE, clone I2E/E2E, resubmit, recirculate, field lists."""

from __future__ import annotations

from softswitch.api import Replica

from ..helpers import frame, switch, words

FL_META = "@field_list(1) bit<32> keep; bit<32> lose;"


def test_mark_to_drop_and_default_egress_spec():
    sw = switch("if (hdr.d.w0 == 1) { mark_to_drop(sm); }")
    assert sw.process(0, frame(1)) == []
    assert "drop" in sw.last_trace[-1]
    assert [p for p, _ in sw.process(0, frame(2))] == [1]
    sw2 = switch("sm.egress_spec = 511;")
    assert sw2.process(0, frame()) == []


def test_egress_sees_port_and_instance_type_and_can_drop():
    egress = """
        hdr.d.w1 = (bit<32>)sm.egress_port;
        hdr.d.w2 = sm.instance_type;
        hdr.d.w3 = (bit<32>)sm.ingress_port;
        hdr.d.w4 = sm.packet_length;
        if (hdr.d.w0 == 9) { mark_to_drop(sm); }
    """
    sw = switch("sm.egress_spec = 5;", egress=egress)
    out = sw.process(3, frame())
    assert out[0][0] == 5 and words(out[0][1])[1:5] == [5, 0, 3, len(frame())]
    assert sw.process(3, frame(9)) == []


def test_multicast_replicas_with_rid():
    egress = "hdr.d.w1 = (bit<32>)sm.egress_rid; hdr.d.w2 = sm.instance_type;"
    sw = switch("sm.mcast_grp = 7;", egress=egress)
    sw.mc_group_set(7, [Replica(2, 10), Replica(3, 11), Replica(2, 12)])
    out = sw.process(0, frame())
    assert [(p, words(d)[1], words(d)[2]) for p, d in out] == [(2, 10, 5), (3, 11, 5), (2, 12, 5)]
    assert sw.mc_groups() == {7: [Replica(2, 10), Replica(3, 11), Replica(2, 12)]}
    sw.mc_group_delete(7)
    assert sw.process(0, frame()) == []


def test_clone_i2e_sends_original_packet_with_preserved_fields():
    ingress = """
        meta.keep = 42; meta.lose = 43;
        hdr.d.w0 = 0xAAAA;
        clone_preserving_field_list(CloneType.I2E, 5, 1);
    """
    egress = "hdr.d.w1 = sm.instance_type; hdr.d.w2 = meta.keep; hdr.d.w3 = meta.lose;"
    sw = switch(ingress, mfields=FL_META, egress=egress)
    sw.clone_session_set(5, [Replica(9, 0)])
    out = sw.process(0, frame(1))
    got = {p: words(d) for p, d in out}
    assert set(got) == {1, 9}
    assert got[1][:4] == [0xAAAA, 0, 42, 43]
    assert got[9][:4] == [1, 1, 42, 0]        # original contents, instance_type I2E clone, field list


def test_clone_e2e_copies_egress_output():
    egress = """
        if (sm.instance_type == 0) { hdr.d.w0 = 0xBEEF; clone(CloneType.E2E, 6); }
        else { hdr.d.w1 = sm.instance_type; }
    """
    sw = switch("", egress=egress)
    sw.clone_session_set(6, [Replica(4, 0)])
    out = dict(sw.process(0, frame()))
    assert words(out[1])[:2] == [0xBEEF, 0]
    assert words(out[4])[:2] == [0xBEEF, 2]


def test_resubmit_restarts_ingress_with_original_packet():
    ingress = """
        if (sm.instance_type == 0) {
            meta.keep = hdr.d.w0 + 1; meta.lose = 5;
            hdr.d.w0 = 0;
            resubmit_preserving_field_list(1);
        } else {
            hdr.d.w1 = sm.instance_type; hdr.d.w2 = meta.keep; hdr.d.w3 = meta.lose;
        }
    """
    sw = switch(ingress, mfields=FL_META)
    out = sw.process(0, frame(10))
    assert len(out) == 1 and words(out[0][1])[:4] == [10, 6, 11, 0]


def test_recirculate_reinjects_deparsed_packet():
    egress = """
        if (sm.instance_type == 0) { hdr.d.w0 = hdr.d.w0 + 100; meta.keep = 7;
                                     recirculate_preserving_field_list(1); }
    """
    ingress = "if (sm.instance_type == 4) { hdr.d.w1 = meta.keep; hdr.d.w2 = 4; }"
    sw = switch(ingress, mfields=FL_META, egress=egress)
    out = sw.process(0, frame(1))
    assert len(out) == 1 and words(out[0][1])[:3] == [101, 7, 4]


def test_clone_to_missing_session_is_ignored_and_loops_are_bounded():
    sw = switch("clone(CloneType.I2E, 77);")
    assert [p for p, _ in sw.process(0, frame())] == [1]
    sw2 = switch("resubmit_preserving_field_list(0);")
    assert sw2.process(0, frame()) == []
    assert "too many" in sw2.last_trace[-1]


def test_trace_names_tables_actions_and_drops():
    ilocals = """
        action drop() { mark_to_drop(sm); }
        table t { key = { hdr.d.w0: exact; } actions = { drop; NoAction; } default_action = drop(); }
    """
    sw = switch("t.apply();", ilocals=ilocals)
    assert sw.process(0, frame()) == []
    text = "\n".join(sw.last_trace)
    assert "table I.t miss" in text and "action I.drop" in text and "drop:" in text
    assert sw.drop_reason_trace == sw.last_trace


def test_deprecated_resubmit_with_field_list_and_bool_constants():
    decls = "const bool ENABLED = true;"
    ingress = """
        if (ENABLED && sm.instance_type == 0) {
            meta.keep = 3; meta.lose = 4; resubmit({meta.keep});
        } else if (sm.instance_type == 6) {
            hdr.d.w1 = meta.keep; hdr.d.w2 = meta.lose;
        }
    """
    sw = switch(ingress, decls=decls, mfields=FL_META)
    (out,) = sw.process(0, frame())
    assert words(out[1])[1:3] == [3, 0]

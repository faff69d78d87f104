"""P4Runtime service against a live in-process gRPC server and a real compiled pipeline."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from tests.softswitch.runtime.conftest import CPU_PORT
from tests.softswitch.runtime.p4rt import Client, U, clone_session, mc_group

Action = p4runtime_pb2.SetForwardingPipelineConfigRequest


@pytest.fixture
def ctl(server, fwd_cpu):
    device, addr = server
    c = Client(addr, election_id=10)
    c.set_pipeline(*fwd_cpu)
    yield c
    c.close()


def test_capabilities(server):
    _, addr = server
    c = Client(addr, election_id=None)
    resp = c.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest())
    assert resp.p4runtime_api_version.startswith("1.")
    c.close()


def test_arbitration_primary_backup_and_takeover(server, fwd_cpu):
    _, addr = server
    a = Client(addr, election_id=5)
    assert a.first_reply.status.code == code_pb2.OK
    b = Client(addr, election_id=3)
    # b is backup and is told who is primary (5); a hears nothing (no change of primary)
    assert b.first_reply.status.code == code_pb2.ALREADY_EXISTS and b.first_reply.election_id.low == 5
    assert a.arbitrations.qsize() == 0
    a.set_pipeline(*fwd_cpu)
    b.p4info = fwd_cpu[0]
    te = b.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000001, 32)},
                       "MyIngress.ipv4_forward", {"dstAddr": 1, "port": 1})
    failure = b.write((U.INSERT, te))
    assert failure is not None and failure.code == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as exc:
        b.set_pipeline(*fwd_cpu)
    assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # a higher election id takes over; both are told
    c = Client(addr, election_id=9)
    c.p4info = fwd_cpu[0]
    upd_a = a.arbitrations.get(timeout=5).arbitration
    assert upd_a.status.code == code_pb2.ALREADY_EXISTS and upd_a.election_id.low == 9
    a.p4info = fwd_cpu[0]
    assert a.write((U.INSERT, te)).code == grpc.StatusCode.PERMISSION_DENIED
    c.write_ok((U.INSERT, te))
    # the primary leaves: the best remaining controller (a, 5) becomes primary
    c.close()
    upd = a.arbitrations.get(timeout=5).arbitration
    assert upd.status.code == code_pb2.OK and upd.election_id.low == 5
    a.write_ok((U.DELETE, te))
    a.close()
    b.close()


def test_arbitration_reply_status(server):
    _, addr = server
    a = Client(addr, election_id=None)
    a.open_stream()
    assert a.arbitrate(7).status.code == code_pb2.OK
    b = Client(addr, election_id=None)
    b.open_stream()
    reply = b.arbitrate(2)
    assert reply.status.code == code_pb2.ALREADY_EXISTS and reply.election_id.low == 7
    a.close()
    b.close()


def test_duplicate_election_id_and_wrong_device_end_the_stream(server):
    _, addr = server
    a = Client(addr, election_id=4)
    b = Client(addr, election_id=None)
    b.open_stream()
    assert b.arbitrate(4) is None
    assert b.stream_error.code() == grpc.StatusCode.INVALID_ARGUMENT
    c = Client(addr, election_id=None)
    c.open_stream()
    assert c.arbitrate(6, device_id=99) is None
    assert c.stream_error.code() == grpc.StatusCode.NOT_FOUND
    for x in (a, b, c):
        x.close()


def test_batch_with_a_bad_update_reports_each_update(ctl):
    good1 = ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000001, 32)},
                            "MyIngress.ipv4_forward", {"dstAddr": 0xAA, "port": 1})
    bad = ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000002, 32)},
                          "MyIngress.ipv4_forward", {"dstAddr": 0xAA, "port": 1 << 9})  # 10 bits into bit<9>
    good2 = ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000000, 24)},
                            "MyIngress.ipv4_forward", {"dstAddr": 0xBB, "port": 2})
    failure = ctl.write((U.INSERT, good1), (U.INSERT, bad), (U.INSERT, good2))
    assert failure.code == grpc.StatusCode.UNKNOWN
    codes = [c for c, _ in failure.details]
    assert codes == [code_pb2.OK, code_pb2.INVALID_ARGUMENT, code_pb2.OK]
    assert "port" in failure.details[1][1] and "9 bits" in failure.details[1][1]
    # CONTINUE_ON_ERROR: the good ones are in
    read = ctl.read(ctl.table_entry("MyIngress.ipv4_lpm"))
    assert len(read) == 2


def test_insert_modify_delete_codes(ctl):
    te = ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000001, 32)},
                         "MyIngress.ipv4_forward", {"dstAddr": 1, "port": 1})
    ctl.write_ok((U.INSERT, te))
    dup = ctl.write((U.INSERT, te))
    assert dup.details == [(code_pb2.ALREADY_EXISTS, dup.details[0][1])]
    other = ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000009, 32)},
                            "MyIngress.ipv4_forward", {"dstAddr": 1, "port": 1})
    assert ctl.write((U.MODIFY, other)).details[0][0] == code_pb2.NOT_FOUND
    assert ctl.write((U.DELETE, other)).details[0][0] == code_pb2.NOT_FOUND
    te2 = ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000001, 32)},
                          "MyIngress.ipv4_forward", {"dstAddr": 7, "port": 3})
    ctl.write_ok((U.MODIFY, te2))
    (e,) = ctl.read(ctl.table_entry("MyIngress.ipv4_lpm"))
    assert e.table_entry.action == te2.action
    ctl.write_ok((U.DELETE, te))
    assert ctl.read(ctl.table_entry("MyIngress.ipv4_lpm")) == []


@pytest.mark.parametrize("mutate, reason", [
    (lambda te: setattr(te, "table_id", 12345), "unknown table id"),
    (lambda te: setattr(te.match[0], "field_id", 77), "unknown match field id"),
    (lambda te: setattr(te.action.action, "action_id", 4242), "unknown action id"),
    (lambda te: setattr(te.action.action.params[0], "param_id", 9), "unknown parameter id"),
    (lambda te: te.match[0].lpm.__setattr__("prefix_len", 33), "prefix length"),
    (lambda te: te.match[0].lpm.__setattr__("value", b"\x01\x0a\x00\x00\x01"), "does not fit in 32 bits"),
    (lambda te: te.match[0].lpm.__setattr__("prefix_len", 8), "beyond the /8 prefix"),
    (lambda te: te.match[0].exact.__setattr__("value", b"\x0a\x00\x00\x01"), "match kind exact"),
    (lambda te: setattr(te, "priority", 5), "priority must be 0"),
    (lambda te: te.action.action.params.pop(), "missing parameter"),
])
def test_invalid_argument_reasons(ctl, mutate, reason):
    te = ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000001, 32)},
                         "MyIngress.ipv4_forward", {"dstAddr": 1, "port": 1})
    mutate(te)
    failure = ctl.write((U.INSERT, te))
    assert failure.details[0][0] == code_pb2.INVALID_ARGUMENT
    assert reason in failure.details[0][1]


def test_ternary_priority_and_dont_care_rules(ctl):
    acl = "MyIngress.acl"
    no_prio = ctl.table_entry(acl, {"hdr.ethernet.etherType": ("t", 0x88B5, 0xFFFF)}, "MyIngress.to_cpu")
    assert "priority must be > 0" in ctl.write((U.INSERT, no_prio)).details[0][1]
    zero_mask = ctl.table_entry(acl, {"hdr.ethernet.etherType": ("t", 0, 0)}, "MyIngress.to_cpu", priority=1)
    assert "all-zero mask" in ctl.write((U.INSERT, zero_mask)).details[0][1]
    outside = ctl.table_entry(acl, {"hdr.ethernet.etherType": ("t", 0x88B5, 0xFF00)}, "MyIngress.to_cpu",
                              priority=1)
    assert "outside the mask" in ctl.write((U.INSERT, outside)).details[0][1]
    # the same key at two priorities is two entries
    a = ctl.table_entry(
        acl, {"hdr.ethernet.etherType": ("t", 0x88B5, 0xFFFF)}, "MyIngress.to_cpu", priority=1
    )
    b = ctl.table_entry(acl, {"hdr.ethernet.etherType": ("t", 0x88B5, 0xFFFF)}, "MyIngress.drop", priority=2)
    ctl.write_ok((U.INSERT, a), (U.INSERT, b))
    assert len(ctl.read(ctl.table_entry(acl))) == 2


def test_non_canonical_bytes_accepted_and_read_back_canonical(ctl):
    te = ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000001, 32)},
                         "MyIngress.ipv4_forward", {"dstAddr": 5, "port": 2})
    te.action.action.params[1].value = b"\x00\x00\x02"  # leading zeros
    te.action.action.params[0].value = b"\x00\x00\x00\x00\x00\x05"
    ctl.write_ok((U.INSERT, te))
    (e,) = ctl.read(ctl.table_entry("MyIngress.ipv4_lpm"))
    assert [p.value for p in e.table_entry.action.action.params] == [b"\x05", b"\x02"]


def test_read_back_equals_write_all_match_kinds(server, kinds):
    _, addr = server
    c = Client(addr, election_id=1)
    c.set_pipeline(*kinds)
    entries = [
        c.table_entry("MyIngress.all_kinds",
                      {"hdr.ethernet.dstAddr": 0x0000AABBCCDD, "hdr.ethernet.srcAddr": (0x0A0000000000, 16),
                       "hdr.ethernet.etherType": ("t", 0x0800, 0xFF00),
                       "standard_metadata.ingress_port": ("r", 2, 5),
                       "standard_metadata.instance_type": 0},
                      "MyIngress.fwd", {"port": 3}, priority=10),
        c.table_entry("MyIngress.all_kinds", {"hdr.ethernet.dstAddr": 1}, "MyIngress.drop", priority=3),
        c.table_entry("MyIngress.by_type", {"hdr.ethernet.etherType": 0x86DD}, "MyIngress.fwd", {"port": 1}),
    ]
    c.write_ok(*[(U.INSERT, e) for e in entries])
    got = [e.table_entry for e in c.read(p4runtime_pb2.TableEntry())]  # wildcard read: every table
    for e in entries:
        e.ClearField("is_default_action")
    assert sorted(x.SerializeToString(deterministic=True) for x in got) == \
        sorted(x.SerializeToString(deterministic=True) for x in entries)
    # read of one entry by its key
    one = c.read(c.table_entry("MyIngress.all_kinds", {"hdr.ethernet.dstAddr": 1}, priority=3))
    assert [x.table_entry for x in one] == [entries[1]]
    # @defaultonly action refused as an entry action; default entry modify + read
    bad = c.table_entry("MyIngress.by_type", {"hdr.ethernet.etherType": 1}, "NoAction")
    assert "defaultonly" in c.write((U.INSERT, bad)).details[0][1]
    d = c.table_entry("MyIngress.by_type", action="MyIngress.fwd", params={"port": 4}, default=True)
    c.write_ok((U.MODIFY, d))
    (rd,) = c.read(c.table_entry("MyIngress.by_type", default=True))
    assert rd.table_entry.is_default_action and rd.table_entry.action == d.action
    assert c.write((U.INSERT, d)).details[0][0] == code_pb2.INVALID_ARGUMENT
    c.close()


def test_pre_entries_write_read_and_codes(ctl):
    ctl.write_ok((U.INSERT, mc_group(1, [(1, 1), (2, 1), (3, 2)])),
                 (U.INSERT, clone_session(5, [(CPU_PORT, 0)], length=128, cos=1)))
    assert ctl.write((U.INSERT, mc_group(1, [(1, 1)]))).details[0][0] == code_pb2.ALREADY_EXISTS
    assert ctl.write((U.MODIFY, mc_group(2, [(1, 1)]))).details[0][0] == code_pb2.NOT_FOUND
    assert ctl.write((U.INSERT, mc_group(3, [(1, 1), (1, 1)]))).details[0][0] == code_pb2.INVALID_ARGUMENT
    ctl.write_ok((U.MODIFY, mc_group(1, [(4, 7)])))
    (g,) = ctl.read(mc_group(0, []))
    assert g == mc_group(1, [(4, 7)])
    (s,) = ctl.read(clone_session(0, []))
    assert s == clone_session(5, [(CPU_PORT, 0)], length=128, cos=1)
    ctl.write_ok((U.DELETE, mc_group(1, [])), (U.DELETE, clone_session(5, [])))
    assert ctl.read(mc_group(0, [])) == [] and ctl.read(clone_session(0, [])) == []


def test_packet_out_in_loop_and_counters(server, ctl):
    device, _ = server
    # packet-out to port 2 goes out on port 2
    frame = bytes.fromhex("ffffffffffff020000000001" "88b5") + b"hello"
    ctl.packet_out(frame, egress_port=2)
    # packet-out to the CPU port comes back as a packet-in carrying the ingress port
    ctl.packet_out(frame, egress_port=CPU_PORT)
    payload, meta = ctl.packet_in()
    assert payload == frame and meta == {"ingress_port": CPU_PORT, "_pad": 0}
    assert device.sent == [(2, frame)]
    # frames on a data port: the indirect counter counts per ingress port, the direct one per entry
    te = ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000002, 32)},
                         "MyIngress.ipv4_forward", {"dstAddr": 0x020000000002, "port": 2})
    ctl.write_ok((U.INSERT, te))
    ip = bytes.fromhex("4500001c00010000401166cd0a0000010a000002") + bytes(8)
    eth = bytes.fromhex("020000000009020000000001" "0800")
    for _ in range(3):
        device.receive(1, eth + ip)
    assert len(device.sent) == 4
    ent = p4runtime_pb2.Entity()
    ent.counter_entry.counter_id = ctl.counter_id("MyIngress.port_rx")
    ent.counter_entry.index.index = 1
    (ce,) = ctl.read(ent)
    assert (ce.counter_entry.data.packet_count, ce.counter_entry.data.byte_count) == (3, 3 * len(eth + ip))
    dce = p4runtime_pb2.Entity()
    dce.direct_counter_entry.table_entry.table_id = ctl.table_id("MyIngress.ipv4_lpm")
    (d,) = ctl.read(dce)
    assert d.direct_counter_entry.data.packet_count == 3
    assert d.direct_counter_entry.table_entry.match == te.match
    withc = te.__class__()
    withc.CopyFrom(ctl.table_entry("MyIngress.ipv4_lpm"))
    withc.counter_data.SetInParent()
    (r,) = ctl.read(withc)
    assert r.table_entry.counter_data.packet_count == 3


def test_packet_out_errors_come_back_on_the_stream(ctl):
    req = p4runtime_pb2.StreamMessageRequest()
    req.packet.payload = b"x" * 20
    req.packet.metadata.add(metadata_id=99, value=b"\x01")
    ctl._out.put(req)
    err = ctl.errors.get(timeout=5).error
    assert err.canonical_code == code_pb2.INVALID_ARGUMENT and "metadata id 99" in err.message


def test_register_entries_unimplemented_like_bmv2(ctl):
    ent = p4runtime_pb2.Entity()
    ent.register_entry.register_id = 1
    with pytest.raises(grpc.RpcError) as exc:
        ctl.read(ent)
    assert exc.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_wrong_device_id_and_no_pipeline(server):
    _, addr = server
    c = Client(addr, election_id=1)
    with pytest.raises(grpc.RpcError) as exc:
        c.stub.Read(p4runtime_pb2.ReadRequest(device_id=3)).__next__()
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as exc:
        c.get_pipeline()
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    c.close()


def test_pipeline_swap_actions(server, fwd_cpu, kinds):
    _, addr = server
    c = Client(addr, election_id=1)
    # VERIFY checks but installs nothing
    c.set_pipeline(*fwd_cpu, action=Action.VERIFY)
    with pytest.raises(grpc.RpcError):
        c.get_pipeline()
    # bad source is refused with the compiler's reason
    with pytest.raises(grpc.RpcError) as exc:
        c.set_pipeline(fwd_cpu[0], b"control oops {")
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "does not compile" in exc.value.details()
    # a P4Info that does not belong to the program is refused
    with pytest.raises(grpc.RpcError) as exc:
        c.set_pipeline(kinds[0], fwd_cpu[1])
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "does not match" in exc.value.details()
    # VERIFY_AND_SAVE then COMMIT
    c.set_pipeline(*fwd_cpu, action=Action.VERIFY_AND_SAVE)
    with pytest.raises(grpc.RpcError):
        c.get_pipeline()
    c.stub.SetForwardingPipelineConfig(p4runtime_pb2.SetForwardingPipelineConfigRequest(
        device_id=0, election_id=p4runtime_pb2.Uint128(low=1), action=Action.COMMIT))
    cfg = c.get_pipeline()
    assert cfg.p4info == fwd_cpu[0] and cfg.p4_device_config == fwd_cpu[1]
    te = c.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000002, 32)},
                       "MyIngress.ipv4_forward", {"dstAddr": 2, "port": 2})
    c.write_ok((U.INSERT, te), (U.INSERT, mc_group(4, [(1, 0)])))
    # RECONCILE_AND_COMMIT keeps the forwarding state
    c.set_pipeline(*fwd_cpu, action=Action.RECONCILE_AND_COMMIT)
    assert [e.table_entry for e in c.read(c.table_entry("MyIngress.ipv4_lpm"))] == [te]
    assert len(c.read(mc_group(0, []))) == 1
    # VERIFY_AND_COMMIT of another program starts from scratch
    c.set_pipeline(*kinds)
    assert (
        c.get_pipeline(p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE).p4info == kinds[0]
    )
    assert c.read(p4runtime_pb2.TableEntry()) == [] and c.read(mc_group(0, [])) == []
    c.close()

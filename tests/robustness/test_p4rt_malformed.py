"""Malformed P4Runtime requests against a real server on 127.0.0.1 (p4src/dhc.p4).

Every request must be answered promptly with a status that names the problem (no hang, no
INTERNAL, no crash), nothing malformed may change the switch, and the server must keep serving.
Cases are counted per category (printed with ``-s``)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator

import grpc
import pytest
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controller.intent import entry
from dhcwire.p4names import A_SET_NHOP, T_LOCAL, T_LPM
from tests.robustness.p4rt_fixture import config, local_insert, running_switch

U = p4runtime_pb2.Update
SFP = p4runtime_pb2.SetForwardingPipelineConfigRequest
GOOD_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.UNIMPLEMENTED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}


def _lpm(names) -> p4runtime_pb2.TableEntry:
    e = entry(T_LPM, {"dst_addr": (0x0A000001, 32)}, A_SET_NHOP, {"dmac": 2, "port": 1})
    return names.entry_to_proto(e)


def _bad_entries(names, rng: random.Random) -> Iterator[tuple[str, p4runtime_pb2.TableEntry]]:
    base = local_insert(names, 0x0A0000FE).entity.table_entry
    lpm = _lpm(names)

    def variant(
        name: str, src: p4runtime_pb2.TableEntry, fn: Callable
    ) -> tuple[str, p4runtime_pb2.TableEntry]:
        te = p4runtime_pb2.TableEntry()
        te.CopyFrom(src)
        fn(te)
        return name, te

    yield variant("unknown table id", base, lambda t: setattr(t, "table_id", 0x02FFFFFF))
    yield variant("table id 0 in a write", base, lambda t: setattr(t, "table_id", 0))
    yield variant("unknown field id", base, lambda t: setattr(t.match[0], "field_id", 99))
    yield variant("no match field", base, lambda t: t.ClearField("match"))
    yield variant("duplicate field", base, lambda t: t.match.append(t.match[0]))
    yield variant("value too wide", base, lambda t: setattr(t.match[0].exact, "value", b"\x01" * 5))
    yield variant("empty value", base, lambda t: setattr(t.match[0].exact, "value", b""))
    yield variant("8 KB value", base, lambda t: setattr(t.match[0].exact, "value", b"\x7f" * 8192))
    yield variant("lpm given for exact", base, lambda t: (t.match[0].ClearField("exact"),
                                                          setattr(t.match[0].lpm, "value", b"\x0a"),
                                                          setattr(t.match[0].lpm, "prefix_len", 8)))
    yield variant("ternary given for exact", base, lambda t: (t.match[0].ClearField("exact"),
                                                              setattr(t.match[0].ternary, "value", b"\x01"),
                                                              setattr(t.match[0].ternary, "mask", b"\x01")))
    yield variant("no field match kind", base, lambda t: t.match[0].ClearField("exact"))
    yield variant("priority on exact table", base, lambda t: setattr(t, "priority", 10))
    yield variant("negative priority", base, lambda t: setattr(t, "priority", -1))
    yield variant("unknown action", base, lambda t: setattr(t.action.action, "action_id", 0x01FFFFFF))
    yield variant("no action", base, lambda t: t.ClearField("action"))
    yield variant("action of another table", base,
                  lambda t: setattr(t.action.action, "action_id", lpm.action.action.action_id))
    yield variant("lpm prefix too long", lpm, lambda t: setattr(t.match[0].lpm, "prefix_len", 33))
    yield variant("lpm prefix 0 (must be omitted)", lpm, lambda t: setattr(t.match[0].lpm, "prefix_len", 0))
    yield variant("lpm host bits set", lpm, lambda t: (setattr(t.match[0].lpm, "prefix_len", 8)))
    yield variant("missing param", lpm, lambda t: t.action.action.params.pop())
    yield variant("extra param", lpm, lambda t: t.action.action.params.add(param_id=77, value=b"\x01"))
    yield variant(
        "param too wide", lpm, lambda t: setattr(t.action.action.params[1], "value", b"\x01\x00\x00")
    )
    yield variant("duplicate param", lpm, lambda t: t.action.action.params.append(t.action.action.params[0]))
    yield variant("action profile member", lpm, lambda t: (t.action.ClearField("action"),
                                                           setattr(t.action, "action_profile_member_id", 1)))
    yield variant("default entry with match", base, lambda t: setattr(t, "is_default_action", True))
    yield variant("const default action", base, lambda t: (t.ClearField("match"),
                                                           setattr(t, "is_default_action", True)))
    yield variant("meter config", lpm, lambda t: setattr(t.meter_config, "cir", 5))
    yield variant("idle timeout", lpm, lambda t: setattr(t, "idle_timeout_ns", 10**9))
    yield variant("counter data without direct counter", base,
                  lambda t: setattr(t.counter_data, "packet_count", 5))
    for i in range(13):   # random bytes in the value fields
        n = rng.randint(0, 40)
        yield variant(
            f"random value {i}", base, lambda t, n=n: setattr(t.match[0].exact, "value", rng.randbytes(n))
        )


def _write(stub, election, updates: list[p4runtime_pb2.Update], device_id: int = 0):
    req = p4runtime_pb2.WriteRequest(device_id=device_id, election_id=election)
    req.updates.extend(updates)
    return stub.Write(req, timeout=10)


def _status_ok(err: grpc.RpcError) -> bool:
    """A failed Write: UNKNOWN with per-update details, none of them OK-but-failed or INTERNAL."""
    if err.code() != grpc.StatusCode.UNKNOWN:
        return err.code() in GOOD_CODES
    blob = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
    if blob is None:
        return False
    st = status_pb2.Status.FromString(blob)
    codes = []
    for d in st.details:
        e = p4runtime_pb2.Error()
        d.Unpack(e)
        codes.append(e.canonical_code)
    return bool(codes) and code_pb2.INTERNAL not in codes and any(c != code_pb2.OK for c in codes)


@pytest.fixture(scope="module")
def sw():
    with running_switch() as s:
        yield s


def _entries(sw) -> set[bytes]:
    out = set()
    for t in (T_LOCAL, T_LPM):
        q = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=sw.names.table(t).id))
        out |= {e.SerializeToString(deterministic=True) for e in sw.conn.read([q])}
    return out


def test_malformed_requests_are_refused_cleanly(sw) -> None:
    rng = random.Random(5)
    stub = p4runtime_pb2_grpc.P4RuntimeStub(sw.conn.channel)
    election = sw.conn.election_id
    before = _entries(sw)
    tally: Counter[str] = Counter()
    bad: list[str] = []

    def expect_refusal(category: str, what: str, call: Callable[[], object]) -> None:
        tally[category] += 1
        try:
            call()
        except grpc.RpcError as err:
            if not _status_ok(err):
                bad.append(f"{category}/{what}: {err.code().name}: {err.details()}")
            return
        bad.append(f"{category}/{what}: accepted")

    # table entries, as INSERT, MODIFY and DELETE
    for what, te in _bad_entries(sw.names, rng):
        for kind in (U.INSERT, U.MODIFY, U.DELETE):
            up = p4runtime_pb2.Update(type=kind, entity=p4runtime_pb2.Entity(table_entry=te))
            expect_refusal(
                "write-entry", f"{what}/{U.Type.Name(kind)}", lambda up=up: _write(stub, election, [up])
            )
    # other write shapes
    valid = local_insert(sw.names, 0x0A0000FD).entity
    others = {
        "update type unspecified": [p4runtime_pb2.Update(type=U.UNSPECIFIED, entity=valid)],
        "empty entity": [p4runtime_pb2.Update(type=U.INSERT)],
        "register entry": [p4runtime_pb2.Update(type=U.MODIFY, entity=p4runtime_pb2.Entity(
            register_entry=p4runtime_pb2.RegisterEntry(register_id=1)))],
        "digest entry": [p4runtime_pb2.Update(type=U.INSERT, entity=p4runtime_pb2.Entity(
            digest_entry=p4runtime_pb2.DigestEntry(digest_id=1)))],
        "multicast group 0": [p4runtime_pb2.Update(type=U.INSERT, entity=p4runtime_pb2.Entity(
            packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
                multicast_group_entry=p4runtime_pb2.MulticastGroupEntry(multicast_group_id=0))))],
        "counter of unknown id": [p4runtime_pb2.Update(type=U.MODIFY, entity=p4runtime_pb2.Entity(
            counter_entry=p4runtime_pb2.CounterEntry(counter_id=0x12FFFFFF)))],
    }
    for what, ups in others.items():
        expect_refusal("write-other", what, lambda ups=ups: _write(stub, election, ups))
    expect_refusal("write-other", "wrong device id", lambda: _write(stub, election, [p4runtime_pb2.Update(
        type=U.INSERT, entity=valid)], device_id=9))
    expect_refusal("write-other", "not primary", lambda: _write(
        stub, p4runtime_pb2.Uint128(high=0, low=99), [p4runtime_pb2.Update(type=U.INSERT, entity=valid)]))
    atomic = p4runtime_pb2.WriteRequest(device_id=0, election_id=election,
                                        atomicity=p4runtime_pb2.WriteRequest.DATAPLANE_ATOMIC)
    expect_refusal("write-other", "dataplane atomic", lambda: stub.Write(atomic, timeout=10))
    # reads
    reads = {
        "unknown table": p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=0x02FFFFFF)),
        "register": p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry()),
        "empty entity": p4runtime_pb2.Entity(),
        "unknown counter": p4runtime_pb2.Entity(
            counter_entry=p4runtime_pb2.CounterEntry(counter_id=0x12FFFFFF)
        ),
        "meter": p4runtime_pb2.Entity(meter_entry=p4runtime_pb2.MeterEntry(meter_id=1)),
    }
    for what, ent in reads.items():
        expect_refusal("read", what, lambda ent=ent: list(stub.Read(
            p4runtime_pb2.ReadRequest(device_id=0, entities=[ent]), timeout=10)))
    expect_refusal("read", "wrong device", lambda: list(stub.Read(
        p4runtime_pb2.ReadRequest(device_id=3, entities=[reads["unknown table"]]), timeout=10)))
    expect_refusal("read", "role", lambda: list(stub.Read(
        p4runtime_pb2.ReadRequest(device_id=0, role="x", entities=[reads["unknown table"]]), timeout=10)))
    # pipeline configs (VERIFY only: a bad one must never replace the running program)
    good = config()
    text = good.p4_device_config.decode()
    configs = {
        "empty": b"",
        "binary": bytes(range(256)) * 4,
        "BMv2 JSON": b'{"program": "dhc.p4", "__meta__": {"version": [2, 23]}}',
        "include /etc/passwd": ("#include \"/etc/passwd\"\n" + text).encode(),
        "include <v1model.p4>": ("#include <v1model.p4>\n" + text).encode(),
        "truncated program": text[: len(text) // 2].encode(),
        "huge constant": (text + "\nconst bit<8> X = (bit<8>)(1 << 100000000);\n").encode(),
        "macro bomb": ("#define A0 x x x x x x x x x x\n" + "".join(
            f"#define A{i} " + " ".join([f"A{i - 1}"] * 10) + "\n" for i in range(1, 8)) + "A7\n").encode(),
        "#error": b"#error no\n",
    }
    for what, blob in configs.items():
        req = SFP(device_id=0, election_id=election, action=SFP.VERIFY)
        req.config.p4_device_config = blob
        req.config.p4info.CopyFrom(good.p4info)
        # 60 s: a refusal, not a speed test (the macro bomb took > 20 s at a load average of 12)
        expect_refusal("pipeline", what, lambda req=req: stub.SetForwardingPipelineConfig(req, timeout=60))
    req = SFP(device_id=0, election_id=election, action=SFP.VERIFY)
    req.config.p4_device_config = good.p4_device_config
    req.config.p4info.CopyFrom(good.p4info)
    req.config.p4info.tables[0].preamble.id ^= 1
    expect_refusal(
        "pipeline", "p4info that disagrees", lambda: stub.SetForwardingPipelineConfig(req, timeout=20)
    )
    for what, action in (("unspecified action", SFP.UNSPECIFIED), ("commit without save", SFP.COMMIT)):
        r = SFP(device_id=0, election_id=election, action=action)
        expect_refusal("pipeline", what, lambda r=r: stub.SetForwardingPipelineConfig(r, timeout=20))
    # raw garbage instead of a serialised request, to every unary method
    for method in (
        "Write",
        "Read",
        "SetForwardingPipelineConfig",
        "GetForwardingPipelineConfig",
        "Capabilities",
    ):
        for i in range(3):
            blob = rng.randbytes(rng.randint(1, 64))
            call = sw.conn.channel.unary_unary(f"/p4.v1.P4Runtime/{method}", request_serializer=None,
                                               response_deserializer=None)
            tally["garbage"] += 1
            try:
                resp = call(blob, timeout=10)
                if method == "Read":
                    pass
                # some byte strings are valid protobuf; an answer then is fine
                del resp
            except grpc.RpcError as err:
                if err.code() in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
                    bad.append(f"garbage/{method}/{i}: {err.code().name}")

    print(f"malformed P4Runtime requests per category: {dict(tally)} (total {sum(tally.values())})")
    assert not bad, "\n".join(bad)
    # nothing changed, and the server still serves
    assert _entries(sw) == before
    stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=5)
    sw.conn.write([local_insert(sw.names, 0x0A0000FC)])

"""P4Runtime MeterEntry / DirectMeterEntry / TableEntry.meter_config over real gRPC, on both
backends: writes, reads, refusals, and the colours packets get with the written rates (the
meter clock is driven by the test)."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from softswitch.native.build import compiler
from tests.softswitch.runtime.conftest import PROGRAMS, compile_config
from tests.softswitch.runtime.p4rt import Client, U

BACKENDS = ["python", pytest.param("native", marks=pytest.mark.skipif(compiler() is None, reason="no cc"))]
FRAME = bytes(6) + bytes(6) + b"\x88\xb5" + bytes(50)   # 64 bytes


@pytest.fixture(params=BACKENDS)
def ctl(request, server, monkeypatch):
    monkeypatch.setattr("softswitch.backend._default", request.param)
    device, addr = server
    c = Client(addr, election_id=10)
    c.set_pipeline(*compile_config(PROGRAMS / "meters.p4"))
    sw = device.require_pipeline().switch
    assert sw.backend == request.param
    clock = [0]
    sw.set_clock(lambda: clock[0])
    yield c, device, clock
    c.close()


def _meter_id(c: Client, name: str) -> int:
    return c._find(c.p4info.meters, name).preamble.id


def _meter_entry(c: Client, index: int | None, cfg: tuple | None) -> p4runtime_pb2.Entity:
    ent = p4runtime_pb2.Entity()
    ent.meter_entry.meter_id = _meter_id(c, "MyIngress.port_meter")
    if index is not None:
        ent.meter_entry.index.index = index
    if cfg is not None:
        ent.meter_entry.config.CopyFrom(p4runtime_pb2.MeterConfig(cir=cfg[0], cburst=cfg[1], pir=cfg[2],
                                                                  pburst=cfg[3]))
    return ent


def _colours(device, port: int, n: int) -> list[tuple[int, int]]:
    """(port colour, flow colour) of n frames sent on ``port``."""
    out = []
    for _ in range(n):
        device.sent.clear()
        device.receive(port, FRAME)
        src = int.from_bytes(device.sent[0][1][6:12], "big")
        out.append((src >> 4, src & 15))
    return out


def test_meter_entry_write_read_and_colours(ctl):
    c, device, clock = ctl
    assert _colours(device, 3, 2) == [(0, 7), (0, 7)]     # unconfigured: GREEN; table misses
    c.write_ok((U.MODIFY, _meter_entry(c, 3, (1000, 1, 2000, 2))))
    got = c.read(_meter_entry(c, 3, None))
    assert len(got) == 1 and got[0].meter_entry.config == p4runtime_pb2.MeterConfig(
        cir=1000, cburst=1, pir=2000, pburst=2)
    assert not c.read(_meter_entry(c, 4, None))[0].meter_entry.HasField("config")
    # PI reads BMv2's rate (a double per microsecond) back as rate * 1e6 truncated: 249 -> 248
    c.write_ok((U.MODIFY, _meter_entry(c, 5, (249, 1, 251, 2))))
    assert c.read(_meter_entry(c, 5, None))[0].meter_entry.config == p4runtime_pb2.MeterConfig(
        cir=248, cburst=1, pir=250, pburst=2)
    assert [p for p, _f in _colours(device, 3, 3)] == [0, 1, 2]
    clock[0] = 1000                                       # 1 ms: +1 committed, +2 peak tokens
    assert [p for p, _f in _colours(device, 3, 3)] == [0, 1, 2]
    # no index: every cell; a read without index lists all 512
    c.write_ok((U.MODIFY, _meter_entry(c, None, (0, 0, 0, 0))))
    cells = c.read(_meter_entry(c, None, None))
    assert len(cells) == 512 and all(e.meter_entry.config.pir == 0 and e.meter_entry.HasField("config")
                                     for e in cells)
    assert [p for p, _f in _colours(device, 9, 1)] == [2]
    c.write_ok((U.MODIFY, _meter_entry(c, 9, None)))      # unset config: back to GREEN
    assert [p for p, _f in _colours(device, 9, 1)] == [0]


@pytest.mark.parametrize("bad, code, text", [
    (lambda c: (U.INSERT, _meter_entry(c, 1, (1, 1, 1, 1))), grpc.StatusCode.INVALID_ARGUMENT, "only MODIFY"),
    (lambda c: (U.MODIFY, _meter_entry(c, 512, (1, 1, 1, 1))), grpc.StatusCode.INVALID_ARGUMENT, "outside"),
    (lambda c: (U.MODIFY, _meter_entry(c, 1, (5, 1, 4, 1))), grpc.StatusCode.INVALID_ARGUMENT,
     "exceeds peak rate"),
])
def test_meter_entry_refusals(ctl, bad, code, text):
    c, _device, _clock = ctl
    failure = c.write(bad(c))
    assert failure is not None and failure.details[0][0] == code.value[0] and text in failure.details[0][1]


def test_direct_meter_entry_and_table_meter_config(ctl):
    c, device, clock = ctl
    te = c.table_entry("MyIngress.flows", {"hdr.ethernet.etherType": 0x88B5}, "MyIngress.mark")
    # insert with a meter config: bursts of one and two frames (bytes meter, 64-byte frames)
    te.meter_config.CopyFrom(p4runtime_pb2.MeterConfig(cir=0, cburst=64, pir=0, pburst=128))
    c.write_ok((U.INSERT, te))
    assert [f for _p, f in _colours(device, 1, 3)] == [0, 1, 2]
    q = c.table_entry("MyIngress.flows")
    q.meter_config.SetInParent()
    (read,) = c.read(q)
    assert read.table_entry.meter_config.pburst == 128
    # DirectMeterEntry MODIFY, then read it back
    dme = p4runtime_pb2.Entity()
    dme.direct_meter_entry.table_entry.CopyFrom(
        c.table_entry("MyIngress.flows", {"hdr.ethernet.etherType": 0x88B5}))
    dme.direct_meter_entry.config.CopyFrom(p4runtime_pb2.MeterConfig(cir=1_000_000, cburst=64,
                                                                     pir=2_000_000, pburst=64))
    c.write_ok((U.MODIFY, dme))
    q = p4runtime_pb2.Entity()
    q.direct_meter_entry.table_entry.table_id = c.table_id("MyIngress.flows")
    (got,) = c.read(q)
    assert got.direct_meter_entry.config.pir == 2_000_000
    assert [f for _p, f in _colours(device, 1, 2)] == [0, 2]
    clock[0] = 32                                         # 32 us: +64 peak, +32 committed bytes
    assert [f for _p, f in _colours(device, 1, 1)] == [1]
    # MODIFY of the entry without meter_config keeps the meter (BMv2 keeps it per entry)
    c.write_ok((U.MODIFY, c.table_entry("MyIngress.flows", {"hdr.ethernet.etherType": 0x88B5},
                                        "MyIngress.mark")))
    (got,) = c.read(q)
    assert got.direct_meter_entry.config.pir == 2_000_000
    # a table without a direct meter, and meter counter data, are refused
    bad = p4runtime_pb2.Entity()
    bad.direct_meter_entry.table_entry.table_id = c.table_id("MyIngress.flows")
    bad.direct_meter_entry.counter_data.green.packet_count = 1
    failure = c.write((U.MODIFY, bad))
    assert failure is not None and failure.details[0][0] == grpc.StatusCode.UNIMPLEMENTED.value[0]


def test_reconcile_keeps_meter_configurations(ctl):
    c, device, _clock = ctl
    c.write_ok((U.MODIFY, _meter_entry(c, 5, (10, 1, 20, 2))))
    te = c.table_entry("MyIngress.flows", {"hdr.ethernet.etherType": 0x88B5}, "MyIngress.mark")
    te.meter_config.CopyFrom(p4runtime_pb2.MeterConfig(cir=0, cburst=64, pir=0, pburst=128))
    c.write_ok((U.INSERT, te))
    c.set_pipeline(*compile_config(PROGRAMS / "meters.p4"),
                   action=p4runtime_pb2.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT)
    assert c.read(_meter_entry(c, 5, None))[0].meter_entry.config.pir == 20
    q = c.table_entry("MyIngress.flows")
    q.meter_config.SetInParent()
    (read,) = c.read(q)
    assert read.table_entry.meter_config.pburst == 128

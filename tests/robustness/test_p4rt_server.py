"""The P4Runtime server under hostile or careless clients (issue 11, items 2-4).

Idle StreamChannels must not starve the unary RPCs; Write errors must always reach the client
whole (no "Stream removed"); a full table answers RESOURCE_EXHAUSTED; a device config cannot
make the server read a file."""

from __future__ import annotations

import time

import grpc
import pytest
from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controller.deploy.errors import WriteError
from controller.p4rt_client import SwitchConnection
from softswitch.server.errors import P4RuntimeError
from softswitch.server.service import MAX_ERROR_STATUS_BYTES, write_error_status
from tests.robustness.p4rt_fixture import LOCAL_SIZE, IdleStreams, config, local_insert, running_switch


def test_idle_streams_do_not_freeze_the_server() -> None:
    with running_switch() as sw:
        idle = IdleStreams(sw.addr, 20)
        try:
            time.sleep(1.0)
            # 4 streams may wait for arbitration (a quarter of the 16 threads); the others are
            # refused while those 4 are younger than the grace (0.5 s) -- all came in one burst
            assert idle.codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) == 20 - 4
            t0 = time.monotonic()
            stub = p4runtime_pb2_grpc.P4RuntimeStub(sw.conn.channel)
            stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=3)
            sw.conn.write([local_insert(sw.names, 0x0A000001)])
            got = list(sw.conn.read([p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(
                table_id=sw.names.table("DhcIngress.dhc_index.local_addr").id))]))
            assert len(got) == 1
            assert time.monotonic() - t0 < 3
        finally:
            idle.close()
        # closed streams free their places: another controller can open its stream
        time.sleep(0.5)
        other = SwitchConnection(sw.conn.address, election_id=(0, 5), timeout=5)
        other.connect()
        other.close()


def _failures(sw, updates) -> list:
    with pytest.raises(WriteError) as info:
        sw.conn.write(updates, batch=len(updates))
    return info.value.failures


def test_one_failure_in_500_updates_is_reported() -> None:
    with running_switch() as sw:
        sw.conn.write([local_insert(sw.names, 0x0A000001)])
        # 499 deletes of absent keys (well: one present) + 1 duplicate insert = big batch
        D = p4runtime_pb2.Update.DELETE
        ups = [local_insert(sw.names, 0x0A000001)]   # ALREADY_EXISTS
        ups += [local_insert(sw.names, 0x0A000001, D)]  # applied
        ups += [local_insert(sw.names, 0x0A000001, p4runtime_pb2.Update.INSERT)]  # applied
        ups += [local_insert(sw.names, 0x0A000001, p4runtime_pb2.Update.MODIFY)] * 497  # applied
        f = _failures(sw, ups)
        assert len(f) == 1 and f[0].code == "ALREADY_EXISTS"


def test_many_failures_fit_the_trailer() -> None:
    with running_switch() as sw:
        D = p4runtime_pb2.Update.DELETE
        ups = [local_insert(sw.names, 0x0B000000 + i, D) for i in range(300)]   # all NOT_FOUND
        f = _failures(sw, ups)
        detailed = [x for x in f if x.code == "NOT_FOUND"]
        assert detailed and all("0xb00" in x.entity for x in detailed)
        rest = [x for x in f if x.code == "UNKNOWN"]
        # every failure is either detailed or counted
        assert len(detailed) + (int(rest[0].entity.split()[0]) if rest else 0) == 300


def test_huge_match_value_error_is_capped() -> None:
    with running_switch() as sw:
        ent = local_insert(sw.names, 1).entity
        ent.table_entry.match[0].exact.value = b"\x01" * 8192
        ups = [local_insert(sw.names, 2)]
        ups[0].entity = ent
        f = _failures(sw, ups)
        assert f[0].code == "INVALID_ARGUMENT" and len(f[0].message) <= 240


def test_write_error_status_is_bounded() -> None:
    errs = [None if i % 3 else P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT, "x" * 5000)
            for i in range(2000)]
    st = write_error_status(errs)
    assert st.ByteSize() <= MAX_ERROR_STATUS_BYTES
    assert "667 of 2000 updates failed" in st.message
    small = write_error_status([None, P4RuntimeError(grpc.StatusCode.NOT_FOUND, "gone")])
    assert len(small.details) == 2   # spec form: one per update when it fits
    assert status_pb2.Status.FromString(small.SerializeToString()) == small


def test_full_table_is_resource_exhausted() -> None:
    with running_switch() as sw:
        sw.conn.write([local_insert(sw.names, 0x0C000000 + i) for i in range(LOCAL_SIZE)])
        f = _failures(sw, [local_insert(sw.names, 0x0D000000)])
        assert f[0].code == "RESOURCE_EXHAUSTED" and "full" in f[0].message


@pytest.mark.parametrize("include", ['"/proc/self/status"', '"/etc/hostname"', "<v1model.p4>"])
def test_device_config_with_include_is_refused(include: str) -> None:
    with running_switch() as sw:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(sw.conn.channel)
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=0, election_id=sw.conn.election_id,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY)
        req.config.p4_device_config = (f"#include {include}\n" + config().p4_device_config.decode()).encode()
        with pytest.raises(grpc.RpcError) as info:
            stub.SetForwardingPipelineConfig(req, timeout=10)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "#include is not allowed" in info.value.details()
        assert "Name:" not in info.value.details() and "root" not in info.value.details()

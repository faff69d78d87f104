"""Write error trailers reach a Python grpcio client every time (issue 30, item 4).

grpcio drops trailing metadata above its 8 KiB *soft* limit at random ("received metadata size
exceeds soft limit"), so a trailer sized for the 16 KiB hard limit got lost about once in 50
failing Writes.  Here 100 failing Writes each of 1, 100 and 500 failures, with the longest error
texts the server sends, must all arrive as UNKNOWN with a readable status whose details and
count cover every failure."""

from __future__ import annotations

import base64

import grpc
import pytest
from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from softswitch.server.service import CLIENT_METADATA_SOFT_LIMIT, INDEX_SPACE
from tests.robustness.p4rt_fixture import local_insert, running_switch

REPEATS = 100


def _write_request(sw, failures: int, total: int) -> p4runtime_pb2.WriteRequest:
    """``total`` updates of which the first ``failures`` fail with a long (capped) message."""
    req = p4runtime_pb2.WriteRequest(device_id=0, election_id=sw.conn.election_id)
    for i in range(total):
        u = local_insert(sw.names, 0x0A000000 + i, p4runtime_pb2.Update.MODIFY)
        if i < failures:    # a match value far wider than the field: INVALID_ARGUMENT, text capped
            u.entity.table_entry.match[0].exact.value = bytes([1 + i % 250]) * 600
        req.updates.add(type=u.type, entity=u.entity)
    return req


def _trailer_size(md) -> int:
    """Metadata size as gRPC accounts it: name + wire value (base64 for -bin) + 32 per entry."""
    size = 0
    for k, v in md:
        wire = base64.b64encode(v) if k.endswith("-bin") else v.encode()
        size += len(k) + len(wire) + 32
    return size


@pytest.mark.parametrize("failures,total", [(1, 500), (100, 100), (500, 500)])
def test_failed_write_trailer_always_arrives(failures: int, total: int) -> None:
    with running_switch() as sw:
        # the MODIFYs that do not fail need their entries
        sw.conn.write([local_insert(sw.names, 0x0A000000 + i) for i in range(failures, min(total, 64))])
        stub = p4runtime_pb2_grpc.P4RuntimeStub(sw.conn.channel)
        req = _write_request(sw, failures, total)
        for attempt in range(REPEATS):
            with pytest.raises(grpc.RpcError) as info:
                stub.Write(req, timeout=30)
            err = info.value
            assert err.code() == grpc.StatusCode.UNKNOWN, (attempt, err.code(), err.details())
            md = err.trailing_metadata() or ()
            blob = next((v for k, v in md if k == "grpc-status-details-bin"), None)
            assert blob is not None, f"attempt {attempt}: trailer lost"
            assert _trailer_size(md) + len(err.details() or "") < CLIENT_METADATA_SOFT_LIMIT
            st = status_pb2.Status.FromString(blob)
            # every failure is detailed or counted; the first ones are the detailed ones
            failed = sum(1 for d in st.details if _failed(d))
            assert failed >= 1
            assert f"of {total} updates failed" in st.message
            count = int(st.message.split("Write failure: ")[1].split()[0])
            # MODIFYs of absent entries (index >= 64) fail too: NOT_FOUND
            assert count == failures + max(0, total - max(failures, 64))
            assert failed == count or "detailed" in st.message


def _failed(detail) -> bool:
    perr = p4runtime_pb2.Error()
    detail.Unpack(perr)
    if perr.space == INDEX_SPACE:
        return True
    return perr.canonical_code != 0

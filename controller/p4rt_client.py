"""Multi-switch P4Runtime client: one gRPC connection per switch, all driven concurrently.

p4runtime-shell keeps one global connection, which suits interactive use of one switch
(``dhc-ctl shell``) but not a deployment to many.  Here each ``SwitchConnection`` owns its channel
and its StreamChannel (arbitration: we must be primary to write), batches updates into Write RPCs
and turns the per-update ``p4.v1.Error`` details of a failed Write into ``UpdateFailure``s naming
the switch and the entry.  ``MultiSwitchClient`` runs one function per switch on a thread pool.
"""

from __future__ import annotations

import hashlib
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controller.deploy.errors import SwitchError, UpdateFailure, WriteError
from controller.p4rt_codec import P4InfoNames

T = TypeVar("T")
Update = p4runtime_pb2.Update
_UPDATE_NAMES = {Update.INSERT: "INSERT", Update.MODIFY: "MODIFY", Update.DELETE: "DELETE"}
DEFAULT_ELECTION_ID = (0, 1)
#: pause before retrying a StreamChannel the switch had no room for
_RETRY_S = 0.25
#: Updates per Write RPC, and request bytes per Write RPC: small enough that the per-update error
#: details of a failed batch fit the server's trailer (softswitch/server/README.md, "Errors").
DEFAULT_BATCH = 100
MAX_BATCH_BYTES = 1 << 20
#: seconds a pipeline push may take: the target may compile the program first
PIPELINE_TIMEOUT_S = 120.0
#: ``p4.v1.Error.space`` of details that carry the failed update's index in ``code`` (the compact
#: form a server uses when one Error per update would not fit the trailer).
INDEX_SPACE = "update-index"
_COUNT = re.compile(r"(\d+) of (\d+) updates failed")


@dataclass(frozen=True)
class SwitchAddress:
    """Where a switch's P4Runtime server listens, and its device id."""

    name: str
    addr: str  # host:port
    device_id: int = 0


@dataclass
class PendingUpdate:
    """One update with the human description used if the switch rejects it."""

    type: int
    entity: p4runtime_pb2.Entity
    describe: str


def pipeline_cookie(p4info: p4info_pb2.P4Info, device_config: bytes) -> int:
    """A 64-bit fingerprint of a pipeline config: equal cookies mean nothing to push."""
    h = hashlib.sha256(p4info.SerializeToString(deterministic=True) + b"\0" + device_config).digest()
    return int.from_bytes(h[:8], "big")


def _code_name(code: int) -> str:
    try:
        return code_pb2.Code.Name(code)
    except ValueError:
        return str(code)


class SwitchConnection:
    """One switch: channel, primary arbitration, pipeline, batched writes, reads.

    Counts what it sends (``updates_sent``, ``write_rpcs``, ``pipelines_pushed``) so callers and
    tests can tell an idempotent deployment from one that rewrote the same state.
    """

    def __init__(self, address: SwitchAddress, election_id: tuple[int, int] = DEFAULT_ELECTION_ID,
                 timeout: float = 10.0):
        self.address = address
        self.name = address.name
        self.election_id = p4runtime_pb2.Uint128(high=election_id[0], low=election_id[1])
        self.timeout = timeout
        self.channel: grpc.Channel | None = None
        self.stub: p4runtime_pb2_grpc.P4RuntimeStub | None = None
        self._requests: queue.Queue = queue.Queue()
        self._responses: queue.Queue = queue.Queue()
        self._reader: threading.Thread | None = None
        self._stream = None
        self.names: P4InfoNames | None = None
        self.updates_sent = 0
        self.write_rpcs = 0
        self.pipelines_pushed = 0

    # ------------------------------------------------------------ connection
    def _fail(self, message: str) -> SwitchError:
        return SwitchError(
            self.name, f"{message} (P4Runtime at {self.address.addr}, device {self.address.device_id})"
        )

    def open_channel(self) -> None:
        """Open the gRPC channel only: enough for Read and GetForwardingPipelineConfig."""
        self.channel = grpc.insecure_channel(self.address.addr)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=self.timeout)
        except grpc.FutureTimeoutError:
            self.channel.close()
            self.channel = None
            raise self._fail(f"no P4Runtime server answered within {self.timeout:g} s") from None
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)

    def connect(self) -> None:
        """Open the channel and become primary (MasterArbitrationUpdate on the StreamChannel).

        A stream refused for lack of room (RESOURCE_EXHAUSTED: other clients' streams are still
        waiting to arbitrate, and the switch ends those after a few seconds) is retried until
        ``timeout``."""
        self.open_channel()
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._arbitrate(deadline)
            if not (isinstance(msg, grpc.RpcError) and msg.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    and time.monotonic() + _RETRY_S < deadline):
                break
            self._end_stream()
            time.sleep(_RETRY_S)
        if msg is None:
            self.close()
            raise self._fail("no arbitration answer on the StreamChannel")
        if isinstance(msg, grpc.RpcError):
            self.close()
            raise self._fail(f"StreamChannel refused: {msg.code().name}: {msg.details()}")
        arb = msg.arbitration
        if arb.status.code != code_pb2.OK:
            self.close()
            raise self._fail(f"not primary: {arb.status.message or _code_name(arb.status.code)} "
                             f"(our election id {self.election_id.high},{self.election_id.low})")

    def _arbitrate(self, deadline: float):
        """Open a StreamChannel and send our arbitration; the first answer (None: none in time)."""
        self._requests = queue.Queue()
        self._responses = queue.Queue()
        self._stream = self.stub.StreamChannel(iter(self._requests.get, None))
        self._reader = threading.Thread(target=self._read_stream, args=(self._stream, self._responses),
                                        name=f"p4rt-{self.name}", daemon=True)
        self._reader.start()
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.address.device_id
        req.arbitration.election_id.CopyFrom(self.election_id)
        self._requests.put(req)
        try:
            return self._responses.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            return None

    def _end_stream(self) -> None:
        self._requests.put(None)
        if self._stream is not None:
            self._stream.cancel()
        if self._reader is not None:
            self._reader.join(timeout=2)
        self._stream = self._reader = None

    def packet_out(self, payload: bytes) -> None:
        """Send a frame to the switch's CPU port (PacketOut on the StreamChannel; needs primary)."""
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        self._requests.put(req)

    @staticmethod
    def _read_stream(stream, responses: queue.Queue) -> None:
        try:
            for msg in stream:
                if msg.HasField("arbitration"):
                    responses.put(msg)
        except grpc.RpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                responses.put(err)

    def close(self) -> None:
        self._end_stream()
        if self.channel is not None:
            self.channel.close()
        self.channel = self.stub = None

    def _rpc(self, what: str, fn, request, timeout: float | None = None):
        try:
            return fn(request, timeout=timeout or self.timeout)
        except grpc.RpcError as err:
            raise self._fail(f"{what} failed: {err.code().name}: {err.details()}") from None

    # ------------------------------------------------------------ pipeline
    def pipeline_cookie(self) -> int | None:
        """The cookie of the running pipeline, or None if the switch runs none."""
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.address.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.COOKIE_ONLY)
        try:
            resp = self.stub.GetForwardingPipelineConfig(req, timeout=self.timeout)
        except grpc.RpcError as err:
            if err.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND):
                return None
            raise self._fail(
                f"GetForwardingPipelineConfig failed: {err.code().name}: {err.details()}"
            ) from None
        return resp.config.cookie.cookie if resp.config.HasField("cookie") else 0

    def load_p4info(self) -> P4InfoNames:
        """Fetch the P4Info of the running pipeline (for ``--no-pipeline`` and read-only commands)."""
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.address.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        resp = self._rpc("GetForwardingPipelineConfig", self.stub.GetForwardingPipelineConfig, req)
        if not resp.config.HasField("p4info") or not resp.config.p4info.tables:
            raise self._fail("runs no pipeline (deploy without --no-pipeline first)")
        self.names = P4InfoNames(resp.config.p4info)
        return self.names

    def set_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes, force: bool = False) -> bool:
        """Push the pipeline unless the switch already runs exactly it (same cookie).  Pushing
        replaces the program and with it every table entry.  Returns whether it pushed."""
        cookie = pipeline_cookie(p4info, device_config)
        self.names = P4InfoNames(p4info)
        if not force and self.pipeline_cookie() == cookie:
            return False
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.address.device_id, election_id=self.election_id,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        req.config.cookie.cookie = cookie
        # a target may compile the program before it answers (the softswitch builds C, BMv2
        # loads its JSON): give the push more time than a table write
        self._rpc("SetForwardingPipelineConfig", self.stub.SetForwardingPipelineConfig, req,
                  timeout=max(self.timeout, PIPELINE_TIMEOUT_S))
        self.pipelines_pushed += 1
        return True

    # ------------------------------------------------------------ write / read
    @staticmethod
    def batches(updates: list[PendingUpdate], batch: int = DEFAULT_BATCH,
                max_bytes: int = MAX_BATCH_BYTES) -> Iterator[list[PendingUpdate]]:
        """Consecutive runs of ``updates`` of at most ``batch`` updates and ``max_bytes`` bytes
        (a single larger update goes alone)."""
        chunk: list[PendingUpdate] = []
        size = 0
        for u in updates:
            n = u.entity.ByteSize() + 8
            if chunk and (len(chunk) >= batch or size + n > max_bytes):
                yield chunk
                chunk, size = [], 0
            chunk.append(u)
            size += n
        if chunk:
            yield chunk

    def write(self, updates: list[PendingUpdate], batch: int = DEFAULT_BATCH) -> None:
        """Send ``updates`` in order, in batches (``batch`` updates, MAX_BATCH_BYTES) per Write RPC;
        stop at the first batch with rejected updates and raise WriteError listing each rejected
        one (switch, entry, code, reason)."""
        for chunk in self.batches(updates, batch):
            req = p4runtime_pb2.WriteRequest(device_id=self.address.device_id, election_id=self.election_id)
            for u in chunk:
                req.updates.add(type=u.type, entity=u.entity)
            self.write_rpcs += 1
            self.updates_sent += len(chunk)
            try:
                self.stub.Write(req, timeout=self.timeout)
            except grpc.RpcError as err:
                failures = self._failures(err, chunk)
                if failures:
                    raise WriteError(failures) from None
                raise self._fail(f"Write failed: {err.code().name}: {err.details()}") from None

    def _failures(self, err: grpc.RpcError, chunk: list[PendingUpdate]) -> list[UpdateFailure]:
        """Per-update errors from the ``grpc-status-details-bin`` trailer (P4Runtime spec §12.3)."""
        blob = next((v for k, v in (err.trailing_metadata() or ()) if k == "grpc-status-details-bin"), None)
        if blob is None:
            return []
        status = status_pb2.Status.FromString(blob)
        out = []
        for pos, detail in enumerate(status.details):
            perr = p4runtime_pb2.Error()
            if not detail.Unpack(perr) or perr.canonical_code == code_pb2.OK:
                continue
            # spec form: one Error per update, in order; compact form: the index is in ``code``
            i = perr.code if perr.space == INDEX_SPACE else pos
            if not 0 <= i < len(chunk):
                continue
            u = chunk[i]
            out.append(UpdateFailure(self.name, _UPDATE_NAMES.get(u.type, str(u.type)), u.describe,
                                     _code_name(perr.canonical_code), perr.message))
        m = _COUNT.search(status.message)
        if m and int(m.group(1)) > len(out):
            out.append(UpdateFailure(self.name, "WRITE", f"{int(m.group(1)) - len(out)} more update(s) of "
                                     f"this batch of {len(chunk)}", "UNKNOWN", "not detailed by the switch"))
        return out

    def read(self, entities: list[p4runtime_pb2.Entity]) -> Iterator[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.address.device_id)
        req.entities.extend(entities)
        try:
            for resp in self.stub.Read(req, timeout=self.timeout):
                yield from resp.entities
        except grpc.RpcError as err:
            raise self._fail(f"Read failed: {err.code().name}: {err.details()}") from None


class MultiSwitchClient:
    """Connections to many switches, opened, used and closed concurrently.

    ``with MultiSwitchClient(addrs) as c: c.run(lambda conn: ...)`` returns {switch: result}; if
    any switch fails, the WriteErrors of all switches are merged into one (every rejected update
    named), otherwise the first other error is raised after every switch finished.
    """

    def __init__(
        self,
        addresses: dict[str, SwitchAddress],
        election_id: tuple[int, int] = DEFAULT_ELECTION_ID,
        timeout: float = 10.0,
        max_workers: int = 16,
    ):
        self.connections = {n: SwitchConnection(a, election_id, timeout) for n, a in addresses.items()}
        self.max_workers = max(1, min(max_workers, len(addresses)))

    def __enter__(self) -> MultiSwitchClient:
        try:
            self.run(lambda c: c.connect())
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for c in self.connections.values():
            c.close()

    def run(self, fn: Callable[[SwitchConnection], T], only: list[str] | None = None) -> dict[str, T]:
        names = list(self.connections) if only is None else only
        results: dict[str, T] = {}
        errors: list[BaseException] = []
        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            futures = {n: pool.submit(fn, self.connections[n]) for n in names}
            for n, fut in futures.items():
                try:
                    results[n] = fut.result()
                except Exception as err:  # noqa: BLE001 - collected and re-raised below
                    errors.append(err)
        writes = [e for e in errors if isinstance(e, WriteError)]
        if writes:
            raise WriteError([f for e in writes for f in e.failures])
        if errors:
            raise errors[0]
        return results

    @property
    def updates_sent(self) -> int:
        return sum(c.updates_sent for c in self.connections.values())

    @property
    def pipelines_pushed(self) -> int:
        return sum(c.pipelines_pushed for c in self.connections.values())

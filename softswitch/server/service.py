"""The P4Runtime gRPC service of one softswitch device.

Error reporting follows the P4Runtime spec: a Write whose updates fail ends
with gRPC status UNKNOWN and a ``google.rpc.Status`` in the
``grpc-status-details-bin`` trailer whose details hold one ``p4.v1.Error`` per
update, in order (OK for the ones that succeeded) -- as long as that fits the
budget below.  When it does not, the details list only failed updates, each
with its update index (``space`` = ``update-index``, ``code`` = index): the
first ones, as many as fit, and the status message counts them all.  The budget
is set by the clients, not by gRPC's hard limit: a client drops trailers above
its 8 KiB *soft* metadata limit at random (grpcio: "received metadata size
exceeds soft limit"), so the whole trailer -- base64 status, status message and
header overhead -- stays below that.  Every error text is capped.  Everything
else fails with the canonical code of its one problem and a reason.

StreamChannels are bounded (``max_streams`` arbitrated plus ``max_pending`` not yet
arbitrated, below the worker pool size): each open stream holds a pool thread, so
the unary RPCs always have threads left.  A stream that does not arbitrate within
``arbitration_timeout`` ends with DEADLINE_EXCEEDED; how full places are made free
for a new controller is in ``arbitration``.
"""

from __future__ import annotations

import importlib.metadata
import logging
import queue
import threading
import time
from collections.abc import Iterator
from concurrent import futures

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from . import meters, profiles, translate
from .arbitration import Arbitrator, Stream
from .device import Device, compile_pipeline
from .errors import P4RuntimeError

log = logging.getLogger("softswitch.p4runtime")

_CLOSE = object()
#: gRPC clients' soft limit on received metadata: above it a trailer may be dropped at random.
CLIENT_METADATA_SOFT_LIMIT = 8 << 10
#: Serialised size of the Write error status.  In the trailer it is base64 (4/3 larger, 5,464
#: bytes at most) and the status message travels once more as ``grpc-message``; with gRPC's
#: 32 bytes of accounting per entry the whole trailer stays under 6 KiB, well below the soft limit.
MAX_ERROR_STATUS_BYTES = 4 << 10
#: Longest text of one update's error (a rejected 8 KB match value is not echoed whole).
MAX_ERROR_TEXT = 240
#: ``p4.v1.Error.space`` of the compact form: ``code`` is the failed update's index.
INDEX_SPACE = "update-index"
Update = p4runtime_pb2.Update
Action = p4runtime_pb2.SetForwardingPipelineConfigRequest
Resp = p4runtime_pb2.GetForwardingPipelineConfigRequest


def _api_version() -> str:
    try:
        return importlib.metadata.version("p4runtime")
    except importlib.metadata.PackageNotFoundError:
        return "1.3.0"


def _cap(text: str, limit: int = MAX_ERROR_TEXT) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _packed(err: p4runtime_pb2.Error) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(err)
    return packed


def write_error_status(errors: list[P4RuntimeError | None],
                       budget: int = MAX_ERROR_STATUS_BYTES) -> status_pb2.Status:
    """The ``google.rpc.Status`` of a Write with failed updates, never larger than ``budget``:
    one Error per update in order if that fits, else only the failed ones with their index."""
    failed = [(i, e) for i, e in enumerate(errors) if e is not None]
    status = status_pb2.Status(code=code_pb2.UNKNOWN,
                               message=f"Write failure: {len(failed)} of {len(errors)} updates failed")
    for e in errors:
        perr = p4runtime_pb2.Error(canonical_code=code_pb2.OK)
        if e is not None:
            perr.canonical_code = e.code.value[0]
            perr.message = _cap(e.message)
        status.details.append(_packed(perr))
    if status.ByteSize() <= budget:
        return status
    del status.details[:]
    for i, e in failed:
        status.details.append(_packed(p4runtime_pb2.Error(
            canonical_code=e.code.value[0], message=_cap(e.message), space=INDEX_SPACE, code=i)))
        if status.ByteSize() > budget - 200:   # room for the message below
            del status.details[-1]
            break
    status.message += (f"; {len(status.details)} detailed (only failed updates, p4.v1.Error.code = "
                       f"update index, space '{INDEX_SPACE}'); every other update was applied")
    return status


class P4RuntimeService(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, device: Device, max_streams: int = 8, max_pending: int = 4,
                 arbitration_timeout: float = 3.0):
        self.device = device
        self.arb = Arbitrator(device.device_id, max_streams, max_pending)
        self.arbitration_timeout = arbitration_timeout
        device.packet_in = self._send_packet_in

    # ------------------------------------------------------------ helpers

    def _check_device(self, device_id: int) -> None:
        if device_id != self.device.device_id:
            raise P4RuntimeError(
                grpc.StatusCode.NOT_FOUND,
                f"device id {device_id} is not this switch (device id {self.device.device_id})",
            )

    @staticmethod
    def _fail(context: grpc.ServicerContext, err: P4RuntimeError):
        context.abort(err.code, err.message)

    def _send_packet_in(self, msg: p4runtime_pb2.PacketIn) -> None:
        primary = self.arb.primary()
        if primary is None:
            log.debug("PacketIn dropped: no primary controller")
            return
        primary.send(p4runtime_pb2.StreamMessageResponse(packet=msg))

    # ------------------------------------------------------------ RPCs

    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=_api_version())

    def SetForwardingPipelineConfig(self, request, context):
        try:
            self._check_device(request.device_id)
            self.arb.check_primary(request.election_id, request.role, "SetForwardingPipelineConfig")
            action = request.action
            if action == Action.COMMIT:
                with self.device.lock:
                    saved = self.device.saved
                    if saved is None:
                        raise P4RuntimeError(grpc.StatusCode.FAILED_PRECONDITION,
                                             "COMMIT: no config was saved with VERIFY_AND_SAVE")
                    self.device.commit(saved)
                return p4runtime_pb2.SetForwardingPipelineConfigResponse()
            if action not in (Action.VERIFY, Action.VERIFY_AND_SAVE, Action.VERIFY_AND_COMMIT,
                              Action.RECONCILE_AND_COMMIT):
                raise P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT,
                                     f"SetForwardingPipelineConfig: unsupported action {action}")
            pipeline = compile_pipeline(request.config, self.device.cpu_port)
            if action == Action.VERIFY_AND_SAVE:
                with self.device.lock:
                    self.device.saved = pipeline
            elif action in (Action.VERIFY_AND_COMMIT, Action.RECONCILE_AND_COMMIT):
                self.device.commit(pipeline, reconcile=action == Action.RECONCILE_AND_COMMIT)
                log.info("pipeline committed (%d bytes of P4 source)", len(pipeline.device_config))
            return p4runtime_pb2.SetForwardingPipelineConfigResponse()
        except P4RuntimeError as err:
            self._fail(context, err)

    def GetForwardingPipelineConfig(self, request, context):
        try:
            self._check_device(request.device_id)
            p = self.device.require_pipeline()
            resp = p4runtime_pb2.GetForwardingPipelineConfigResponse()
            cfg = resp.config
            if p.cookie:
                cfg.cookie.cookie = p.cookie
            if request.response_type in (Resp.ALL, Resp.P4INFO_AND_COOKIE):
                cfg.p4info.CopyFrom(p.p4info)
            if request.response_type in (Resp.ALL, Resp.DEVICE_CONFIG_AND_COOKIE):
                cfg.p4_device_config = p.device_config
            return resp
        except P4RuntimeError as err:
            self._fail(context, err)

    def Write(self, request, context):
        try:
            self._check_device(request.device_id)
            self.arb.check_primary(request.election_id, request.role, "Write")
            if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
                raise P4RuntimeError(grpc.StatusCode.UNIMPLEMENTED,
                                     "Write: only CONTINUE_ON_ERROR atomicity is supported")
            with self.device.lock:
                p = self.device.require_pipeline()
                errors = [self._apply(p, u) for u in request.updates]
        except P4RuntimeError as err:
            self._fail(context, err)
            return None
        if any(e is not None for e in errors):
            status = write_error_status(errors)
            first = next(e for e in errors if e is not None)
            log.info("Write: %s; first: %s", status.message, _cap(first.message))
            context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
            context.abort(grpc.StatusCode.UNKNOWN, status.message)
        return p4runtime_pb2.WriteResponse()

    def _apply(self, p, update: p4runtime_pb2.Update) -> P4RuntimeError | None:
        try:
            if update.type not in (Update.INSERT, Update.MODIFY, Update.DELETE):
                raise P4RuntimeError(
                    grpc.StatusCode.INVALID_ARGUMENT, f"update type {update.type} unspecified"
                )
            kind = update.entity.WhichOneof("entity")
            if kind == "table_entry":
                translate.write_table_entry(p.switch, p.index, update.type, update.entity.table_entry)
            elif kind == "packet_replication_engine_entry":
                translate.write_pre(p.switch, update.type, update.entity.packet_replication_engine_entry,
                                    p.clone_params)
            elif kind == "counter_entry":
                translate.write_counter(p.switch, p.index, update.type, update.entity.counter_entry)
            elif kind == "action_profile_member":
                profiles.write_member(p.switch, p.index, update.type, update.entity.action_profile_member)
            elif kind == "action_profile_group":
                profiles.write_group(p.switch, p.index, update.type, update.entity.action_profile_group)
            elif kind == "meter_entry":
                meters.write_meter(p.switch, p.index, update.type, update.entity.meter_entry)
            elif kind == "direct_meter_entry":
                meters.write_direct_meter(p.switch, p.index, update.type, update.entity.direct_meter_entry)
            elif kind is None:
                raise P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT, "update without an entity")
            else:
                raise P4RuntimeError(grpc.StatusCode.UNIMPLEMENTED, f"Write of {kind} is not supported")
            return None
        except P4RuntimeError as err:
            return err

    def Read(self, request, context):
        try:
            self._check_device(request.device_id)
            if request.role:
                raise P4RuntimeError(grpc.StatusCode.UNIMPLEMENTED, "only the default role is supported")
            with self.device.lock:
                p = self.device.require_pipeline()
                entities = [e for q in request.entities for e in self._read(p, q)]
        except P4RuntimeError as err:
            self._fail(context, err)
            return
        for start in range(0, max(len(entities), 1), 1000):
            yield p4runtime_pb2.ReadResponse(entities=entities[start:start + 1000])

    def _read(self, p, q: p4runtime_pb2.Entity) -> Iterator[p4runtime_pb2.Entity]:
        kind = q.WhichOneof("entity")
        if kind == "table_entry":
            for te in translate.read_table_entries(p.switch, p.index, q.table_entry):
                yield p4runtime_pb2.Entity(table_entry=te)
        elif kind == "packet_replication_engine_entry":
            for pre in translate.read_pre(p.switch, q.packet_replication_engine_entry, p.clone_params):
                yield p4runtime_pb2.Entity(packet_replication_engine_entry=pre)
        elif kind == "counter_entry":
            for ce in translate.read_counters(p.switch, p.index, q.counter_entry):
                yield p4runtime_pb2.Entity(counter_entry=ce)
        elif kind == "action_profile_member":
            for m in profiles.read_members(p.switch, p.index, q.action_profile_member):
                yield p4runtime_pb2.Entity(action_profile_member=m)
        elif kind == "action_profile_group":
            for g in profiles.read_groups(p.switch, p.index, q.action_profile_group):
                yield p4runtime_pb2.Entity(action_profile_group=g)
        elif kind == "direct_counter_entry":
            for dce in translate.read_direct_counters(p.switch, p.index, q.direct_counter_entry):
                yield p4runtime_pb2.Entity(direct_counter_entry=dce)
        elif kind == "meter_entry":
            for me in meters.read_meters(p.switch, p.index, q.meter_entry):
                yield p4runtime_pb2.Entity(meter_entry=me)
        elif kind == "direct_meter_entry":
            for dme in meters.read_direct_meters(p.switch, p.index, q.direct_meter_entry):
                yield p4runtime_pb2.Entity(direct_meter_entry=dme)
        elif kind is None:
            raise P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT, "read of an empty entity")
        else:
            # BMv2's P4Runtime server does not implement register read/write either.
            raise P4RuntimeError(grpc.StatusCode.UNIMPLEMENTED, f"Read of {kind} is not supported")

    def StreamChannel(self, request_iterator, context):
        try:
            stream = self.arb.open()
        except P4RuntimeError as err:
            context.abort(err.code, err.message)
        reader = threading.Thread(target=self._stream_reader, args=(stream, request_iterator),
                                  name=f"p4rt-stream-{stream.id}", daemon=True)
        context.add_callback(lambda: stream.out.put(_CLOSE))
        reader.start()
        deadline = time.monotonic() + self.arbitration_timeout
        try:
            while True:
                try:
                    wait = None if stream.arbitrated else max(0.0, deadline - time.monotonic())
                    item = stream.out.get(timeout=wait)
                except queue.Empty:
                    if stream.arbitrated:
                        continue
                    context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                  f"no MasterArbitrationUpdate within {self.arbitration_timeout:g} s")
                if item is _CLOSE:
                    return
                if isinstance(item, P4RuntimeError):
                    context.abort(item.code, item.message)
                yield item
        finally:
            self.arb.close(stream)

    def _stream_reader(self, stream: Stream, requests) -> None:
        try:
            for req in requests:
                stream.last_active = time.monotonic()
                kind = req.WhichOneof("update")
                if kind == "arbitration":
                    try:
                        self.arb.arbitrate(stream, req.arbitration)
                    except P4RuntimeError as err:
                        stream.end(err)
                        return
                elif not stream.arbitrated:
                    stream.end(P4RuntimeError(
                        grpc.StatusCode.FAILED_PRECONDITION,
                        "the first StreamChannel message must be a MasterArbitrationUpdate"))
                    return
                elif kind == "packet":
                    self._packet_out(stream, req.packet)
                else:
                    self._stream_error(
                        stream, grpc.StatusCode.UNIMPLEMENTED, f"stream message {kind} not supported"
                    )
        except grpc.RpcError:
            pass  # the client went away; the RPC's callback closes the stream
        except Exception:  # noqa: BLE001
            log.exception("StreamChannel reader failed")
        finally:
            stream.out.put(_CLOSE)

    def _packet_out(self, stream: Stream, pkt: p4runtime_pb2.PacketOut) -> None:
        if not self.arb.is_primary(stream):
            self._stream_error(stream, grpc.StatusCode.PERMISSION_DENIED,
                               "PacketOut from a controller that is not primary", pkt)
            return
        try:
            self.device.packet_out(pkt)
        except P4RuntimeError as err:
            self._stream_error(stream, err.code, err.message, pkt)

    @staticmethod
    def _stream_error(stream: Stream, code: grpc.StatusCode, message: str,
                      pkt: p4runtime_pb2.PacketOut | None = None) -> None:
        msg = p4runtime_pb2.StreamMessageResponse()
        msg.error.canonical_code = code.value[0]
        msg.error.message = message
        if pkt is not None:
            msg.error.packet_out.packet_out.CopyFrom(pkt)
        stream.send(msg)


def serve(device: Device, address: str, max_workers: int = 16,
          max_streams: int | None = None, max_pending: int | None = None,
          arbitration_timeout: float = 3.0) -> tuple[grpc.Server, int]:
    """Start the P4Runtime server on ``address`` (``host:port``; port 0 picks one).

    At most ``max_streams`` arbitrated StreamChannels (default: half the worker threads) and
    ``max_pending`` ones still to arbitrate (default: a quarter) are open at once, so streams can
    never take every thread from Capabilities/Read/Write.
    Returns the started server and the bound port.
    """
    if max_streams is None:
        max_streams = max(1, max_workers // 2)
    if max_pending is None:
        max_pending = max(1, max_workers // 4)
    if not (0 < max_streams and 0 < max_pending and max_streams + max_pending < max_workers):
        raise ValueError(f"max_streams + max_pending must be below the {max_workers} worker threads")
    limit = 256 << 20  # pipeline configs carry whole programs; stay clear of gRPC's 4 MiB default
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="p4rt"),
                         options=[("grpc.max_receive_message_length", limit),
                                  ("grpc.max_send_message_length", limit),
                                  # a switch owns its address: with gRPC's default SO_REUSEPORT a
                                  # second server on the same port binds too and takes half the calls
                                  ("grpc.so_reuseport", 0)])
    service = P4RuntimeService(device, max_streams, max_pending, arbitration_timeout)
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(service, server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot bind the P4Runtime server to {address}")
    server.start()
    return server, port

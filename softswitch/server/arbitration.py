"""Primary/backup controller election for one device (P4Runtime §5, default role only).

The controller with the highest election id among the open StreamChannels is
primary; only its Write and SetForwardingPipelineConfig are accepted.  Every
change of primary is announced to every open stream.
"""

from __future__ import annotations

import itertools
import queue
import threading
from dataclasses import dataclass, field

import grpc
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from softswitch.server.errors import P4RuntimeError


def election_value(uint128: p4runtime_pb2.Uint128) -> int:
    return (uint128.high << 64) | uint128.low


@dataclass(eq=False)
class Stream:
    """One open StreamChannel: its outbound queue and what it claimed in arbitration."""

    id: int
    out: queue.Queue = field(default_factory=queue.Queue)
    election_id: int | None = None  # None until the first arbitration message
    device_id: int | None = None

    def send(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        self.out.put(msg)


class Arbitrator:
    def __init__(self, device_id: int):
        self.device_id = device_id
        self._lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._ids = itertools.count(1)

    def open(self) -> Stream:
        with self._lock:
            s = Stream(next(self._ids))
            self._streams[s.id] = s
            return s

    def _primary_locked(self) -> Stream | None:
        live = [s for s in self._streams.values() if s.election_id]
        return max(live, key=lambda s: s.election_id) if live else None

    def primary(self) -> Stream | None:
        with self._lock:
            return self._primary_locked()

    def _announce_locked(self, to: list[Stream]) -> None:
        primary = self._primary_locked()
        for s in to:
            msg = p4runtime_pb2.StreamMessageResponse()
            upd = msg.arbitration
            upd.device_id = self.device_id
            if primary is not None:
                upd.election_id.high = primary.election_id >> 64
                upd.election_id.low = primary.election_id & ((1 << 64) - 1)
            if primary is None:
                upd.status.code = code_pb2.NOT_FOUND
                upd.status.message = "no primary controller"
            elif s is primary:
                upd.status.code = code_pb2.OK
                upd.status.message = "is primary"
            else:
                upd.status.code = code_pb2.ALREADY_EXISTS
                upd.status.message = "is backup: a controller with a higher election id is primary"
            s.send(msg)

    def arbitrate(self, stream: Stream, update: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        """Apply one MasterArbitrationUpdate; raise P4RuntimeError to end the stream."""
        if update.role.name:
            raise P4RuntimeError(grpc.StatusCode.UNIMPLEMENTED,
                                 f"role '{update.role.name}': only the default role is supported")
        if update.device_id != self.device_id:
            raise P4RuntimeError(
                grpc.StatusCode.NOT_FOUND,
                f"device id {update.device_id} is not this switch (device id {self.device_id})",
            )
        eid = election_value(update.election_id) if update.HasField("election_id") else 0
        with self._lock:
            if stream.device_id is not None and stream.device_id != update.device_id:
                raise P4RuntimeError(grpc.StatusCode.FAILED_PRECONDITION,
                                     "device id changed on an open stream")
            if eid and any(s.election_id == eid for s in self._streams.values() if s is not stream):
                raise P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT,
                                     f"election id {eid} is already used by another controller")
            before = self._primary_locked()
            stream.device_id = update.device_id
            stream.election_id = eid or None
            after = self._primary_locked()
            if after is not before:
                self._announce_locked(list(self._streams.values()))
            else:
                self._announce_locked([stream])

    def close(self, stream: Stream) -> None:
        with self._lock:
            before = self._primary_locked()
            self._streams.pop(stream.id, None)
            after = self._primary_locked()
            if before is stream and after is not before:
                self._announce_locked([s for s in self._streams.values() if s.election_id is not None])

    def check_primary(self, election_id: p4runtime_pb2.Uint128, role: str, what: str) -> None:
        """Refuse a mutating RPC that does not come from the current primary."""
        if role:
            raise P4RuntimeError(grpc.StatusCode.UNIMPLEMENTED,
                                 f"role '{role}': only the default role is supported")
        with self._lock:
            primary = self._primary_locked()
        eid = election_value(election_id)
        if primary is None:
            raise P4RuntimeError(grpc.StatusCode.PERMISSION_DENIED,
                                 f"{what}: no primary controller (open a StreamChannel and arbitrate first)")
        if eid != primary.election_id:
            raise P4RuntimeError(grpc.StatusCode.PERMISSION_DENIED,
                                 f"{what}: election id {eid} is not the primary's ({primary.election_id})")

    def is_primary(self, stream: Stream) -> bool:
        with self._lock:
            return stream.election_id is not None and self._primary_locked() is stream

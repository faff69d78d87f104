"""Primary/backup controller election for one device (P4Runtime §5, default role only).

The controller with the highest election id among the open StreamChannels is
primary; only its Write and SetForwardingPipelineConfig are accepted.  Every
change of primary is announced to every open stream.

Open streams are bounded, since each one holds a server thread, and the bound must
not lock controllers out (issue 30): at most ``max_streams`` arbitrated streams
and ``max_pending`` streams that have not arbitrated yet.  A stream that sends no
MasterArbitrationUpdate within the arbitration timeout is ended by the service;
a new stream finding every pending place taken evicts the oldest pending stream
that is past ``grace`` (a real controller arbitrates within milliseconds); a
stream whose arbitration finds every arbitrated place taken evicts the least
recently active backup with a lower election id, so a controller with a higher
id than every silent, slow or hostile client can always connect.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from dataclasses import dataclass, field

import grpc
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from .errors import P4RuntimeError


def election_value(uint128: p4runtime_pb2.Uint128) -> int:
    return (uint128.high << 64) | uint128.low


@dataclass(eq=False)
class Stream:
    """One open StreamChannel: its outbound queue and what it claimed in arbitration."""

    id: int
    out: queue.Queue = field(default_factory=queue.Queue)
    election_id: int | None = None  # None until the first arbitration message (or id 0)
    device_id: int | None = None    # set by the first arbitration message
    opened: float = field(default_factory=time.monotonic)
    last_active: float = field(default_factory=time.monotonic)

    @property
    def arbitrated(self) -> bool:
        return self.device_id is not None

    def send(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        self.out.put(msg)

    def end(self, err: P4RuntimeError) -> None:
        """Ask the stream's RPC to end with ``err`` (the service aborts with it)."""
        self.out.put(err)


class Arbitrator:
    def __init__(self, device_id: int, max_streams: int = 8, max_pending: int = 4,
                 grace: float = 0.5):
        self.device_id = device_id
        self.max_streams = max_streams
        self.max_pending = max_pending
        self.grace = grace
        self._lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._ids = itertools.count(1)
        self.evicted = 0   # streams ended to make room (for tests and logs)

    def open(self) -> Stream:
        """A new stream, pending until it arbitrates; RESOURCE_EXHAUSTED if there is no room."""
        with self._lock:
            pending = [s for s in self._streams.values() if not s.arbitrated]
            if len(pending) >= self.max_pending:
                oldest = min(pending, key=lambda s: s.opened)
                if time.monotonic() - oldest.opened < self.grace:
                    raise P4RuntimeError(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"too many StreamChannels waiting for arbitration (limit {self.max_pending}); "
                        "retry shortly")
                self._evict_locked(oldest, "no MasterArbitrationUpdate, and a new stream needed the place")
            s = Stream(next(self._ids))
            self._streams[s.id] = s
            return s

    def _evict_locked(self, victim: Stream, why: str) -> None:
        self._streams.pop(victim.id, None)
        self.evicted += 1
        victim.end(P4RuntimeError(grpc.StatusCode.RESOURCE_EXHAUSTED, f"StreamChannel evicted: {why}"))

    def _make_room_locked(self, stream: Stream, eid: int) -> None:
        """Before ``stream`` first arbitrates: keep arbitrated streams within ``max_streams``."""
        arbitrated = [s for s in self._streams.values() if s.arbitrated and s is not stream]
        if len(arbitrated) < self.max_streams:
            return
        primary = self._primary_locked()
        lower = [s for s in arbitrated if s is not primary and (s.election_id or 0) < eid]
        if not lower:
            raise P4RuntimeError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{len(arbitrated)} controllers are connected (limit {self.max_streams}) and none is "
                f"a backup with an election id below {eid}")
        victim = min(lower, key=lambda s: (s.last_active, s.election_id or 0))
        self._evict_locked(victim, f"a controller with a higher election id ({eid}) needed the place")

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
            if stream.id not in self._streams:
                raise P4RuntimeError(grpc.StatusCode.RESOURCE_EXHAUSTED, "StreamChannel was evicted")
            if not stream.arbitrated:
                self._make_room_locked(stream, eid)
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

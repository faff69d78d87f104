"""Reliable step exchange between ring neighbours over UDP: the transport of the ring baseline.

A ring AllReduce is a sequence of *steps*; in every step each host sends one int32 array to its
next neighbour and receives one from its previous neighbour.  This module moves those arrays:

* a step's array goes out as numbered DATA datagrams of at most ``MAX_DATAGRAM`` bytes (header
  plus up to ``VALUES_PER_PACKET`` int32 values);
* the receiver answers every batch of arrivals with one ACK per step: the cumulative count of
  packets received in order plus a 64-bit selective-ack bitmap of the packets after it, sent at
  socket priority ``ACK_PRIORITY`` (a control class: it does not queue behind DATA);
* window, timers and retries are the agent's delivery engine (``hostagent.delivery``), the same
  as DHC's chunk transport: at most ``cwnd`` packets unacknowledged (AIMD, starting in congestion
  avoidance), an RTT-adaptive timeout (RFC 6298, Karn's rule) with exponential backoff, and a
  packet still unacknowledged after ``max_retries`` retransmissions raises ``RingTimeout``
  naming the next neighbour; a previous neighbour silent for as long as those retransmissions
  take raises it naming that one.

Arrivals for later steps (a faster previous neighbour) are buffered; arrivals for finished steps
are acknowledged again (the sender lost the ACK).  ``linger`` keeps re-acknowledging after the
last step until the previous neighbour falls quiet, as TCP's TIME_WAIT does.
"""

from __future__ import annotations

import enum
import select
import socket
import struct
import time
from dataclasses import dataclass, field

import numpy as np

from bench.baselines.ring_native import NativeInbox, run_step
from hostagent.delivery import (
    Delivery,
    DeliveryEndpoint,
    DeliveryTimeout,
    Outstanding,
    RetryPolicy,
    Window,
)
from hostagent.fastio import Destination, FrameSender, Receiver, native_selected
from hostagent.native_delivery import native_engine_selected
from hostagent.sockets import open_udp

#: Ring traffic of job j uses UDP port ``ring_port(j)`` on every host (below the DHC worker ports).
RING_PORT_BASE = 0xB000
RING_PORT_SPAN = 0x1000

MAGIC = b"RG"
#: magic, type, flags, job id, step, seq, count  (little endian, 16 bytes)
HEADER = struct.Struct("<2sBBHHII")
#: UDP payload limit of one datagram (fits a 1500-byte MTU with IP/UDP headers to spare)
MAX_DATAGRAM = 1400
VALUES_PER_PACKET = (MAX_DATAGRAM - HEADER.size) // 4
SACK_BITS = 64
HELLO_INTERVAL = 0.05
#: longest wait for datagrams in one pass (s): the silence check and the timers run this often
POLL_CAP = 0.05
#: socket priority of ACKs (TC_PRIO_INTERACTIVE): ahead of DATA in a priority-aware queue, such as
#: the emulator's (``topologies/shaping.py``), so an ACK does not wait behind this host's window
ACK_PRIORITY = 6
#: the ring's retransmission timing (a host answers faster than a software switch)
RING_RETRY = RetryPolicy(initial_timeout=0.2, min_timeout=0.02, max_timeout=1.0, max_retries=12)


def ring_port(job_id: int) -> int:
    return RING_PORT_BASE + job_id % RING_PORT_SPAN


class Msg(enum.IntEnum):
    DATA = 1       # seq = packet index in the step, count = packets in the step; int32 payload
    ACK = 2        # seq = packets received in order, count = packets in the step; u64 sack payload
    HELLO = 3      # seq = sender's rank, count = tensor elements
    HELLO_ACK = 4  # same fields as HELLO


#: ``HEADER`` as a numpy record, to build a step's DATA headers in one go
HEADER_DTYPE = np.dtype([("magic", "S2"), ("kind", "u1"), ("flags", "u1"), ("job", "<u2"),
                         ("step", "<u2"), ("seq", "<u4"), ("count", "<u4")])
assert HEADER_DTYPE.itemsize == HEADER.size


@dataclass
class DataFrames:
    """A step's DATA datagrams: row i holds datagram i, ``lens[i]`` bytes of it."""

    rows: np.ndarray     # (n, MAX_DATAGRAM) uint8
    lens: np.ndarray     # (n,) uint32


class RingTimeout(DeliveryTimeout):
    """A ring neighbour did not answer within the allowed retransmissions."""


class RingError(ValueError):
    """A neighbour disagrees on the tensor or the protocol (bad input, not a lost packet)."""


@dataclass(frozen=True)
class RingPeer:
    name: str
    ip: str


@dataclass(frozen=True)
class RingConfig:
    """Who this host is on the ring and how patiently it retransmits."""

    job_id: int
    rank: int
    peers: tuple[RingPeer, ...]     # every worker in ring order, this host included
    window: int = 64                # largest number of unacknowledged DATA packets
    retry: RetryPolicy = RING_RETRY
    port: int | None = None         # default: ring_port(job_id)

    def __post_init__(self) -> None:
        if len(self.peers) < 1 or not 0 <= self.rank < len(self.peers):
            raise RingError(f"rank {self.rank} is not a position on a ring of {len(self.peers)}")
        if len({p.ip for p in self.peers}) != len(self.peers):
            raise RingError(f"ring peers must have distinct addresses: {self.peers}")
        if self.window < 1 or self.retry.max_retries < 0 or self.retry.initial_timeout <= 0:
            raise RingError("window must be >= 1, max_retries >= 0 and initial_timeout > 0")

    @property
    def me(self) -> RingPeer:
        return self.peers[self.rank]

    @property
    def next(self) -> RingPeer:
        return self.peers[(self.rank + 1) % len(self.peers)]

    @property
    def prev(self) -> RingPeer:
        return self.peers[(self.rank - 1) % len(self.peers)]

    @property
    def udp_port(self) -> int:
        return self.port if self.port is not None else ring_port(self.job_id)


@dataclass
class RingStats:
    packets_sent: int = 0
    bytes_sent: int = 0          # UDP payload bytes, headers and ACKs included
    packets_received: int = 0
    bytes_received: int = 0
    data_packets_sent: int = 0
    acks_sent: int = 0
    retransmissions: int = 0
    duplicates: int = 0
    foreign_ignored: int = 0
    buffer_grows: int = 0        # native engine: a step longer than its receive buffer
    system_calls: int = 0        # native engine: ppoll + recvmmsg + sendmmsg calls

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class StepInbox:
    """What the previous neighbour sent in one step."""

    count: int
    have: np.ndarray
    pieces: dict[int, bytes] = field(default_factory=dict)
    consumed: bool = False
    dirty: bool = False          # arrivals not yet acknowledged

    @property
    def complete(self) -> bool:
        return bool(self.have.all())

    def ack_fields(self) -> tuple[int, int]:
        missing = np.flatnonzero(~self.have)
        cum = int(missing[0]) if missing.size else self.count
        window = self.have[cum + 1: cum + 1 + SACK_BITS]
        return cum, sum(1 << i for i in np.flatnonzero(window).tolist())


def packets_for(values: np.ndarray) -> list[np.ndarray]:
    """The DATA payloads of a step (at least one packet, possibly empty)."""
    n = max(1, -(-values.size // VALUES_PER_PACKET))
    return [values[i * VALUES_PER_PACKET:(i + 1) * VALUES_PER_PACKET] for i in range(n)]


class RingTransport(DeliveryEndpoint):
    """One UDP socket on ``ring_port(job)``; exchanges step arrays with the two neighbours."""

    def __init__(self, cfg: RingConfig, bind_ip: str | None = None):
        self.cfg = cfg
        self.stats = RingStats()
        self.inbox: dict[int, StepInbox] = {}
        # a host ring starts in congestion avoidance: one packet more per window of ACKs
        self.delivery = Delivery(cfg.retry, Window.opening(cfg.window, slow_start=False))
        self._next_ready = False
        self._prev_heard = False
        self._last_from_prev = time.monotonic()
        self._mismatches: list[str] = []   # disagreements heard, each named once
        self._dim = 0
        self._send: _StepSend | None = None
        #: the first step number of the next collective: steps never repeat on one transport
        self.next_step = 0
        self._sock = open_udp(bind_ip or cfg.me.ip, cfg.udp_port)
        self._next_addr = (cfg.next.ip, cfg.udp_port)
        self._prev_addr = (cfg.prev.ip, cfg.udp_port)
        #: sendmmsg/recvmmsg (``hostagent.fastio``), as DHC's transport, or one call per datagram
        self.native_io = native_selected()
        #: the step loop in C (``ring_native``, ``hostagent.native_delivery``) or in Python
        self.native_engine = native_engine_selected()
        self.native_inbox: dict[int, NativeInbox] = {}   # the next step's early arrivals
        self._rx = Receiver(self._sock) if self.native_io else None

    # ------------------------------------------------------------------ sockets
    def _sendto(self, data: bytes, addr: tuple[str, int]) -> None:
        try:
            self._sock.sendto(data, addr)
        except OSError:
            pass   # a full queue or an ICMP error: lost like any datagram, the timers recover it
        self.stats.packets_sent += 1
        self.stats.bytes_sent += len(data)

    def _header(self, msg: Msg, step: int, seq: int, count: int) -> bytes:
        return HEADER.pack(MAGIC, int(msg), 0, self.cfg.job_id & 0xFFFF, step, seq, count)

    def _who(self, peer: RingPeer) -> str:
        return f"{peer.name} ({peer.ip})"

    # ------------------------------------------------------------------ receive side
    def _poll(self, wait: float, raise_mismatch: bool = True) -> None:
        """Wait up to ``wait`` s for datagrams, handle all that are queued, then send the ACKs."""
        rx, ready = self._rx, select.select([self._sock], [], [], max(0.0, wait))[0]
        if ready and rx is not None:    # recvmmsg, a buffer at a time (hostagent.fastio)
            while n := rx.receive():
                self.stats.packets_received += n
                self.stats.bytes_received += int(rx.lens[:n].sum())
                for k in range(n):
                    self._handle(rx.payload(k), rx.address(k))
        elif ready:                     # the reference: one recvfrom per datagram
            for data, addr in self._recv_each():
                self._handle(data, addr)
        self._send_acks()
        if self._mismatch and raise_mismatch:
            raise RingError(self._mismatch)

    def _send_acks(self) -> None:
        """One ACK for every step with arrivals not yet acknowledged, at the control priority."""
        dirty = [(step, box) for step, box in self.inbox.items() if box.dirty]
        if not dirty:
            return
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, ACK_PRIORITY)
        try:
            for step, box in dirty:
                cum, sack = box.ack_fields()
                self._sendto(self._header(Msg.ACK, step, cum, box.count) + struct.pack("<Q", sack),
                             self._prev_addr)
                self.stats.acks_sent += 1
                box.dirty = False
        finally:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, 0)

    def _handle(self, data: bytes, addr: tuple[str, int]) -> None:
        if len(data) < HEADER.size:
            self.stats.foreign_ignored += 1
            return
        magic, kind, _flags, job, step, seq, count = HEADER.unpack_from(data)
        if magic != MAGIC or job != self.cfg.job_id & 0xFFFF or kind not in Msg._value2member_map_:
            self.stats.foreign_ignored += 1
            return
        kind = Msg(kind)
        from_prev, from_next = addr[0] == self.cfg.prev.ip, addr[0] == self.cfg.next.ip
        if kind == Msg.DATA and from_prev:
            self._on_data(step, seq, count, data[HEADER.size:])
        elif kind == Msg.ACK and from_next and len(data) == HEADER.size + 8:
            self._on_ack(step, seq, struct.unpack_from("<Q", data, HEADER.size)[0])
        elif kind == Msg.HELLO and from_prev:
            self._last_from_prev = time.monotonic()
            self._prev_heard = True
            self._check_peer(self.cfg.prev, seq, count, (self.cfg.rank - 1) % len(self.cfg.peers))
            self._sendto(self._header(Msg.HELLO_ACK, 0, self.cfg.rank, self._dim), self._prev_addr)
        elif kind == Msg.HELLO_ACK and from_next:
            self._check_peer(self.cfg.next, seq, count, (self.cfg.rank + 1) % len(self.cfg.peers))
            self._next_ready = True
        else:
            self.stats.foreign_ignored += 1

    @property
    def _mismatch(self) -> str:
        return "; ".join(self._mismatches)

    def _disagree(self, text: str) -> None:
        if text not in self._mismatches:
            self._mismatches.append(text)

    def _check_peer(self, peer: RingPeer, rank: int, dim: int, want_rank: int) -> None:
        if rank != want_rank or (self._dim and dim != self._dim):
            self._disagree(f"ring job {self.cfg.job_id}: {self._who(peer)} is rank {rank} with "
                           f"{dim} elements; this host ({self._who(self.cfg.me)}) expects rank "
                           f"{want_rank} with {self._dim} elements (different manifests or --dim?)")

    def _on_data(self, step: int, seq: int, count: int, payload: bytes) -> None:
        self._last_from_prev = time.monotonic()
        if count < 1 or len(payload) % 4:
            self.stats.foreign_ignored += 1
            return
        box = self.inbox.get(step)
        if box is None:
            box = self.inbox[step] = StepInbox(count, np.zeros(count, dtype=bool))
        if count != box.count or seq >= box.count:
            self._disagree(f"ring job {self.cfg.job_id}: {self._who(self.cfg.prev)} sent step "
                           f"{step} packet {seq} of {count}, earlier packets said {box.count}")
            return
        box.dirty = True
        if box.have[seq]:
            self.stats.duplicates += 1
            return
        box.have[seq] = True
        if not box.consumed:
            box.pieces[seq] = payload

    def _on_ack(self, step: int, cum: int, sack: int) -> None:
        st = self._send
        if st is None or st.step != step:
            return   # a late ACK of a finished step
        acked, n = st.out.done, st.out.n
        newly = np.flatnonzero(~acked[:min(cum, n)]).tolist()
        bits = sack
        while bits:
            low = bits & -bits
            i = cum + low.bit_length()       # bit b acknowledges packet cum + 1 + b
            if i < n and not acked[i]:
                newly.append(i)
            bits ^= low
        if self.delivery.complete(st.out, np.array(newly, dtype=np.int64)):
            # ACKs come back in order, behind the receiver's own DATA in its queue: what was sent
            # after the newest acknowledged packet is still on its way (RFC 6298 5.3)
            self.delivery.restart_in_flight(st.out, st.out.lo, st.out.sent)

    # ------------------------------------------------------------------ public API
    def rendezvous(self, dim: int, give_up: float | None = None) -> None:
        """Wait until both neighbours are up: the next one answered our HELLO, the previous one
        sent its HELLO.  A neighbour that disagrees on the ring position or ``dim`` raises
        RingError — after both were heard, so that they learn of the disagreement too."""
        self._dim = dim
        hello = self._header(Msg.HELLO, 0, self.cfg.rank, dim)
        limit = give_up if give_up is not None else max(3.0, self.cfg.retry.give_up_after())
        end = time.monotonic() + limit
        while not (self._next_ready and self._prev_heard):
            if time.monotonic() > end:
                if self._mismatch:
                    raise RingError(self._mismatch)
                late = (f"{self._who(self.cfg.next)}, next on the ring after {self._who(self.cfg.me)}, "
                        "did not answer HELLO") if not self._next_ready else (
                        f"{self._who(self.cfg.prev)}, previous on the ring before "
                        f"{self._who(self.cfg.me)}, sent no HELLO")
                raise RingTimeout(f"ring job {self.cfg.job_id}: {late} within {limit:.1f} s "
                                  "(not started, or unreachable)")
            if not self._next_ready:
                self._sendto(hello, self._next_addr)
            t_next = time.monotonic() + HELLO_INTERVAL
            while not (self._next_ready and self._prev_heard) and time.monotonic() < t_next:
                self._poll(t_next - time.monotonic(), raise_mismatch=False)
        if self._mismatch:
            raise RingError(self._mismatch)
        self._last_from_prev = time.monotonic()

    def exchange(self, step: int, values: np.ndarray) -> np.ndarray:
        """Send ``values`` (int32) to the next neighbour as step ``step``; return the previous
        neighbour's int32 array of the same step."""
        frames = self._data_frames(step, np.ascontiguousarray(values, dtype="<i4"))
        self._last_from_prev = max(self._last_from_prev, time.monotonic())
        silence = max(self.cfg.retry.give_up_after(), 2.0)
        if self.native_engine:
            return run_step(self, step, frames, Outstanding(len(frames.lens)), silence,
                            VALUES_PER_PACKET, POLL_CAP)
        st = self._send = _StepSend(self, step, frames, silence)
        self.delivery.run(st.out, st, POLL_CAP)
        self._send = None
        box = self.inbox[step]
        out = np.frombuffer(b"".join(box.pieces[i] for i in range(box.count)), dtype="<i4")
        box.pieces.clear()
        box.consumed = True
        return out.astype(np.int32)

    # ------------------------------------------------------------------ for ring_native
    def unacknowledged(self, step: int, i: int, out: Outstanding) -> RingTimeout:
        """The error for packet ``i`` of ``step`` having spent its retransmissions."""
        return RingTimeout(
            f"ring job {self.cfg.job_id} step {step}: {self._who(self.cfg.next)}, next "
            f"on the ring, did not acknowledge packet {i} of {out.n} after "
            f"{out.tries[i]} retransmissions")

    def silent_prev(self, step: int, silence: float, got: int, total: int | str) -> RingTimeout:
        """The error for a previous neighbour silent for ``silence`` s during ``step``."""
        return RingTimeout(
            f"ring job {self.cfg.job_id} step {step}: nothing from "
            f"{self._who(self.cfg.prev)}, previous on the ring, for {silence:.1f} s "
            f"({got} of {total} packets of the step received)")

    def raise_mismatch(self) -> None:
        if self._mismatch:
            raise RingError(self._mismatch)

    def step_received(self, step: int, count: int) -> None:
        """``step`` is over: its later retransmissions are acknowledged by ``_handle``."""
        self.inbox[step] = StepInbox(count, np.ones(count, dtype=bool), consumed=True)

    def _data_frames(self, step: int, values: np.ndarray) -> DataFrames:
        """A step's DATA datagrams as rows of one array (built with numpy, no loop per packet):
        row i is ``_header(DATA, step, i, n)`` + the i-th ``packets_for`` piece."""
        n = max(1, -(-values.size // VALUES_PER_PACKET))
        rows = np.zeros((n, MAX_DATAGRAM), dtype=np.uint8)
        head = rows[:, :HEADER.size].view(HEADER_DTYPE)[:, 0]
        head["magic"], head["kind"], head["job"] = MAGIC, int(Msg.DATA), self.cfg.job_id & 0xFFFF
        head["step"], head["seq"], head["count"] = step, np.arange(n), n
        body = np.zeros(n * VALUES_PER_PACKET, dtype="<i4")
        body[:values.size] = values
        rows[:, HEADER.size:HEADER.size + 4 * VALUES_PER_PACKET] = \
            body.view(np.uint8).reshape(n, -1)
        lens = np.full(n, HEADER.size + 4 * VALUES_PER_PACKET, dtype=np.uint32)
        lens[-1] = HEADER.size + 4 * (values.size - (n - 1) * VALUES_PER_PACKET)
        return DataFrames(rows, lens)

    def linger(self, quiet: float | None = None, limit: float = 5.0) -> None:
        """Keep answering the previous neighbour (re-ACK, HELLO_ACK) until it is quiet for
        ``quiet`` s: it may have lost our last ACK and be retransmitting."""
        quiet = quiet if quiet is not None else min(max(0.25, 8 * self.rto), 2 * self.cfg.retry.max_timeout)
        end = time.monotonic() + limit
        last = self.stats.packets_received
        calm_since = time.monotonic()
        while time.monotonic() < end and time.monotonic() - calm_since < quiet:
            self._poll(0.02)
            if self.stats.packets_received != last:
                last, calm_since = self.stats.packets_received, time.monotonic()


class _StepSend:
    """One step of one host: the ``delivery.Link`` the engine drives.  The step is over when the
    next neighbour acknowledged every packet and the previous one's array is complete."""

    def __init__(self, transport: RingTransport, step: int, frames: DataFrames,
                 silence: float) -> None:
        self.transport, self.step, self.frames, self.silence = transport, step, frames, silence
        self.out = Outstanding(len(frames.lens))
        self._batch = (FrameSender(transport._sock, frames.rows, Destination.of(transport._next_addr),
                                   frames.lens) if transport.native_io else None)

    def transmit(self, items: np.ndarray, again: bool) -> None:
        t, k = self.transport, int(items.size)
        if again:
            t.stats.retransmissions += k
        t.stats.data_packets_sent += k
        if self._batch is None:             # the reference: one sendto per datagram
            for i in items.tolist():
                t._sendto(self.frames.rows[i, :self.frames.lens[i]].tobytes(), t._next_addr)
            return
        self._batch.send(items)             # a refused datagram is lost, the timers recover it
        t.stats.packets_sent += k
        t.stats.bytes_sent += int(self.frames.lens[items].sum())

    def receive(self, wait: float) -> bool:
        """Take datagrams in (sending ACKs), then check the previous neighbour is not silent."""
        t = self.transport
        t._poll(wait)
        box = t.inbox.get(self.step)
        if (box is None or not box.complete) and time.monotonic() - t._last_from_prev > self.silence:
            got = 0 if box is None else int(box.have.sum())
            raise t.silent_prev(self.step, self.silence, got, "?" if box is None else box.count)
        return True

    def finished(self) -> bool:
        box = self.transport.inbox.get(self.step)
        return self.out.n_done == self.out.n and box is not None and box.complete

    def give_up(self, i: int) -> RingTimeout:
        return self.transport.unacknowledged(self.step, i, self.out)


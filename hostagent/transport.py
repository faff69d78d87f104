"""Reliable, self-clocked chunk exchange with the in-network aggregator of one job.

A worker sends chunk ``c`` of its job's stream to its first aggregating switch (a UDP
datagram to the switch's job address on ``DHC_UDP_PORT``) and waits for the RESULT of
``c``.  Chunk ``c + W`` may be sent only once the RESULT of ``c`` is in, which
keeps a completed slot readable in its shadow set until every worker has it.  Lost
packets are recovered by retransmitting the chunk after a timeout (exponential backoff);
the switch never adds a retransmission twice and answers it with the stored result once
the slot is complete.  Chunk numbers continue across calls, so consecutive rounds and
consecutive AllReduces of the same job walk through the slots in order.

Window, timers, backoff and the retry budget are the delivery engine's (``hostagent.delivery``);
this module knows the DHC frames: it builds them, takes RESULTs in (batched: ``_drain``), answers
liveness probes and, when a chunk's budget is spent, names who stopped answering.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dhcwire import header as wire
from dhcwire.frames import (
    HEADER_BYTES,
    SPANS,
    MalformedPacket,
    decode_datagram,
    encode_datagram,
    encode_frames,
    frame_length,
    parse_frames,
)
from hostagent import native_delivery as nd
from hostagent.delivery import (
    Delivery,
    DeliveryEndpoint,
    DeliveryTimeout,
    Outstanding,
    RetryPolicy,
    Window,
)
from hostagent.fastio import Destination, FrameSender, Receiver, native_selected
from hostagent.liveness import switch_answers_arp
from hostagent.sockets import open_udp

#: first byte of a well-formed RESULT (version and type share it): the fast path's filter
_RESULT_BYTE0 = (wire.DHC_VERSION << 4) | int(wire.PacketType.RESULT)


#: longest wait for RESULTs in one pass (s): the loop looks at its timers at least this often
POLL_CAP = 0.5


class TransportTimeout(DeliveryTimeout):
    """No RESULT for a chunk after the allowed retransmissions."""


def reset_hint(job_id: int) -> str:
    """What the operator does after a failed session: the job's switch state may be mid-session,
    so it moves to a fresh epoch before every worker reruns (docs/recovery.md)."""
    return (f"To recover, run `dhc-ctl jobs reset --job {job_id} --topo ... --manifest ...`, "
            "then restart every worker of the job (a session that kept the epoch must also continue "
            "its chunk sequence: the switch drops older chunks of a session as stale_chunk)")


@dataclass(frozen=True)
class JobEndpoint:
    """Where and as whom a worker talks to the network for one job."""

    job_id: int
    child_id: int          # this worker's child index at its first aggregator
    switch_ip: str         # the first aggregator's address for this job
    window: int            # W: slots the job owns in each aggregator
    lanes: int = wire.DEFAULT_LANES
    bind_ip: str = "0.0.0.0"
    switch_port: int = wire.DHC_UDP_PORT
    peers: tuple[tuple[str, str], ...] = ()  # (name, ip) of the job's other workers
    epoch: int = 0         # the job's current session epoch (dhc-ctl jobs reset moves it)

    @property
    def port(self) -> int:
        """The UDP port this worker binds: its job's worker port (RESULTs arrive there)."""
        return wire.worker_port(self.job_id)


@dataclass
class TransportStats:
    chunks: int = 0
    packets_sent: int = 0
    packets_received: int = 0
    bytes_sent: int = 0          # UDP payload bytes (dhc_h + lanes)
    bytes_received: int = 0
    retransmissions: int = 0
    duplicate_results: int = 0
    foreign_ignored: int = 0     # RESULTs of another job or of chunks not outstanding
    stale_epoch_ignored: int = 0  # RESULTs of this job stamped with another epoch
    malformed_ignored: int = 0
    padding_chunks: int = 0
    send_errors: int = 0
    system_calls: int = 0        # native engine: ppoll + recvmmsg + sendmmsg calls
    engine_cpu_seconds: float = 0.0  # native engine: CPU (user + kernel) inside the C loop
    reasons: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, int | dict[str, int]]:
        return dict(self.__dict__)




class _Exchange:
    """One ``exchange`` call: the ``delivery.Link`` the engine drives (chunks ``base .. base + n
    - 1`` of the job's stream as prebuilt frames) and the RESULTs collected for them."""

    def __init__(self, transport: ChunkTransport, frames: np.ndarray, base: int, lanes: int,
                 progress: Callable[[int], None] | None) -> None:
        self.transport, self.frames, self.base, self.progress = transport, frames, base, progress
        self.n = len(frames)
        self.out = Outstanding(self.n)
        self.results = np.zeros((self.n, lanes), dtype=np.uint32)
        self._frame_bytes = frames.shape[1]
        self._stats = transport.stats
        self._batch = (FrameSender(transport._sock, frames, Destination.of(transport._dest))
                       if transport.native_io and not transport.native_engine else None)

    def transmit(self, items: np.ndarray, again: bool) -> None:
        stats, k = self._stats, int(items.size)
        if again:
            stats.retransmissions += k
        # a local filter (EPERM), a full queue or an ICMP error: the datagram is lost, and
        # the retransmission timer recovers it like any other loss
        refused = self._batch.send(items) if self._batch is not None else self._send_each(items)
        for name, count in refused.items():
            stats.send_errors += count
            stats.reasons[name] = stats.reasons.get(name, 0) + count
        stats.packets_sent += k
        stats.bytes_sent += k * self._frame_bytes

    def _send_each(self, items: np.ndarray) -> dict[str, int]:
        """The reference path: one ``sendto`` per frame."""
        refused: dict[str, int] = {}
        sendto, dest = self.transport._sock.sendto, self.transport._dest
        for i in items.tolist():
            try:
                sendto(self.frames[i], dest)
            except OSError as err:
                refused[type(err).__name__] = refused.get(type(err).__name__, 0) + 1
        return refused

    def receive(self, wait: float) -> bool:
        t = self.transport
        if not select.select([t._sock], [], [], wait)[0]:
            return True
        if t._drain(self):
            t.delivery.restart_backed_off(self.out, self.out.lo, self.out.sent)
        return False    # RESULTs came in: look at the timers on the next quiet pass

    def finished(self) -> bool:
        return self.out.n_done == self.n

    def give_up(self, i: int) -> TransportTimeout:
        t, ep, out = self.transport, self.transport.endpoint, self.out
        chunk = self.base + i
        return TransportTimeout(
            f"job {ep.job_id}: no RESULT for chunk {chunk} (slot "
            f"{wire.slot_for_chunk(chunk, ep.window):#06x}, epoch {ep.epoch}) from switch "
            f"{ep.switch_ip} after {out.tries[i]} retransmissions; {self.n - out.n_done} of "
            f"{self.n} chunks outstanding; {t._blame()}. {t.recovery_hint}")


class ChunkTransport(DeliveryEndpoint):
    """Exchanges a sequence of (level, K lanes) chunks for their aggregated RESULTs."""

    def __init__(self, endpoint: JobEndpoint, retry: RetryPolicy | None = None,
                 sock: socket.socket | None = None, first_chunk: int = 0):
        wire.check_window(endpoint.window)
        if not 0 <= endpoint.epoch <= wire.MAX_EPOCH:
            raise ValueError(f"epoch must be in 0..{wire.MAX_EPOCH}, got {endpoint.epoch}")
        self.endpoint = endpoint
        self.retry = retry or RetryPolicy()
        self.stats = TransportStats()
        #: what a failed session's error tells the user to do (the job service's Agent sets its own)
        self.recovery_hint = reset_hint(endpoint.job_id)
        self.next_chunk = first_chunk
        # in-flight limit below the window W (AIMD): a slow switch is not flooded with
        # more chunks than it can answer within the timeout
        self.delivery = Delivery(self.retry, Window.opening(endpoint.window))
        self._acks: set[str] = set()   # peers that answered the last liveness probe
        self._sock = sock or open_udp(endpoint.bind_ip, endpoint.port)
        self._dest = (endpoint.switch_ip, endpoint.switch_port)
        #: sendmmsg/recvmmsg (``hostagent.fastio``) or one sendto/recvfrom per datagram
        self.native_io = native_selected()
        #: the exchange loop in C (``hostagent.native_delivery``) or the Python engine
        self.native_engine = nd.native_engine_selected()
        self._rx = Receiver(self._sock) if self.native_io else None

    def finish(self) -> int:
        """End the session on a boundary of 2W chunks (zero chunks pad the stream), so every slot's
        last use is shadow set 1 and the next session of this job — or the next job given the
        region — starts cleanly at chunk 0 in set 0 (p4src/README.md).  Returns padding chunks."""
        lap = 2 * self.endpoint.window
        pad = (-self.next_chunk) % lap
        if pad:
            levels = np.full(pad, int(wire.Level.DENSE))
            self.exchange(levels, np.zeros((pad, self.endpoint.lanes), dtype=np.uint32))
            self.stats.padding_chunks += pad
        return pad

    # ------------------------------------------------------------------ exchange
    def exchange(self, levels: np.ndarray, lanes: np.ndarray,
                 progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Send ``len(levels)`` chunks (row i of ``lanes`` at level ``levels[i]``); return the
        aggregated lanes of every chunk, same shape.  Raises TransportTimeout."""
        ep, K = self.endpoint, self.endpoint.lanes
        lanes = np.ascontiguousarray(lanes, dtype=np.uint32)
        if lanes.ndim != 2 or lanes.shape[1] != K or lanes.shape[0] != len(levels):
            raise ValueError(f"lanes must be ({len(levels)}, {K}) uint32, got {lanes.shape}")
        n, W, base = len(levels), ep.window, self.next_chunk
        chunks = base + np.arange(n, dtype=np.int64)
        frames = encode_frames(wire.PacketType.DATA, levels, ep.job_id, ep.child_id, chunks,
                               wire.slot_for_chunk(chunks, W), lanes, epoch=ep.epoch)
        ex = _Exchange(self, frames, base, K, progress)
        # self-clocking: chunk i may go once chunk i - W has its RESULT
        if self.native_engine:
            self._run_native(ex)
        else:
            self.delivery.run(ex.out, ex, POLL_CAP, clock=W)
        self.next_chunk = base + n
        self.stats.chunks += n
        return ex.results

    def _run_native(self, ex: _Exchange) -> None:
        """``delivery.run`` in C (``native_delivery``): the loop returns for datagrams that are
        not RESULTs of this exchange (``_one`` takes them), at the end and on a spent budget."""
        ep, rx, keep = self.endpoint, self._rx, []
        d = nd.FFI.new("hde_dhc *")
        engine, bound = nd.load_engine(self.delivery), nd.BoundOutstanding(ex.out)
        d.engine, d.out = engine, bound.c
        nd.bind_socket(d.sock, self._sock.fileno(), ex.frames, Destination.of(self._dest), None,
                       rx, keep)
        d.base, d.lanes, d.frame_len = ex.base, ep.lanes, frame_length(ep.lanes)
        d.header_bytes, d.result_byte0 = HEADER_BYTES, _RESULT_BYTE0
        d.num_lanes_wire, d.job_id, d.epoch = wire.lanes_on_wire(ep.lanes), ep.job_id, ep.epoch
        for attr, name in (("f_job", "job_id"), ("f_epoch", "epoch"), ("f_chunk", "chunk"),
                           ("f_num_lanes", "num_lanes")):
            span, f = SPANS[name], getattr(d, attr)
            f.first_byte, f.n_bytes, f.shift, f.mask = (span.first_byte, span.n_bytes,
                                                        span.shift, span.mask)
        keep.append(nd.FFI.from_buffer("uint32_t[]", ex.results))
        d.results = keep[-1]
        spent, lib = nd.FFI.new("int64_t *"), nd.lib()
        try:
            while True:
                cpu0 = time.thread_time()
                status = lib.hde_dhc_run(d, POLL_CAP, ep.window, spent)
                self.stats.engine_cpu_seconds += time.thread_time() - cpu0
                bound.sync()
                if status == nd.OTHER:
                    for k in [d.other[j] for j in range(d.n_other)]:
                        self._one(rx.payload(k), rx.address(k), ex)
                    continue
                if status == nd.GIVE_UP:
                    raise ex.give_up(int(spent[0]))
                if status == nd.SOCKET_ERROR:
                    raise OSError(d.sock.rx_errno, "recvmmsg failed")
                break
        finally:
            nd.store_engine(engine, self.delivery)
            self._count_native(d)
        if ex.progress is not None and d.completed:
            ex.progress(int(d.completed))

    def _count_native(self, d) -> None:
        st = self.stats
        nd.add_socket_counts(st, d.sock)
        st.retransmissions += d.retransmissions
        st.duplicate_results += d.duplicates
        st.foreign_ignored += d.foreign
        st.stale_epoch_ignored += d.stale

    def _blame(self, wait: float = 1.0) -> str:
        """Name who stopped answering: the first aggregator if it does not answer ARP (the peers'
        probes cross it, so their silence then says nothing), else the peers that do not answer a
        direct liveness probe."""
        ep = self.endpoint
        silent = self._silent_peers(wait)
        switch_alive = switch_answers_arp(ep.switch_ip, wait)
        if switch_alive is False:
            return (f"switch {ep.switch_ip} (the job's first aggregator) does not answer ARP: it is "
                    "down or unreachable")
        if not ep.peers:
            return "a worker of the job or a switch on its tree is not answering"
        if silent:
            text = "worker(s) not answering a liveness probe: " + ", ".join(silent)
            if switch_alive is None and len(silent) == len(ep.peers):
                text += f" (or switch {ep.switch_ip}, which every probe crosses, is down)"
            return text
        return (f"every peer worker answers; a switch on the job's tree (first aggregator "
                f"{ep.switch_ip}) is not forwarding")

    def _silent_peers(self, wait: float) -> list[str]:
        """Probe every peer worker directly; "name (ip)" of those that do not answer."""
        ep = self.endpoint
        if not ep.peers:
            return []
        self._acks.clear()
        probe = encode_datagram(wire.PacketType.PROBE, 0, ep.job_id, ep.child_id, 0, 0,
                                np.zeros(0, dtype=np.uint32))
        for _name, ip in ep.peers:
            try:
                self._sock.sendto(probe, (ip, ep.port))
            except OSError:
                pass  # unreachable: it stays silent
        end = time.monotonic() + wait
        while time.monotonic() < end and len(self._acks) < len(ep.peers):
            if select.select([self._sock], [], [], max(0.0, end - time.monotonic()))[0]:
                self._drain(None)
        return [f"{name} ({ip})" for name, ip in ep.peers if ip not in self._acks]

    def _answer_probe(self, dg, addr: tuple[str, int]) -> None:
        if dg.pkt_type == wire.PacketType.PROBE:
            ack = encode_datagram(wire.PacketType.PROBE_ACK, 0, self.endpoint.job_id,
                                  self.endpoint.child_id, 0, 0, np.zeros(0, dtype=np.uint32))
            self._sock.sendto(ack, addr)
        else:
            self._acks.add(addr[0])

    def _drain(self, ex: _Exchange | None) -> int:
        """Read every datagram waiting on the socket (answering probes); return how many
        chunks of ``ex`` completed (None: no exchange running, RESULTs are foreign).

        Well-formed RESULTs of the right size are collected and taken in one vectorised step
        (``_absorb``); anything else goes through the per-datagram checks of ``_one``."""
        if self._rx is not None:
            return self._drain_batched(ex)
        results: list[bytes] = []
        size = frame_length(self.endpoint.lanes)
        completed = 0
        for payload, addr in self._recv_each():
            if len(payload) == size and payload[0] == _RESULT_BYTE0 and ex is not None:
                results.append(payload)
            else:
                completed += self._one(payload, addr, ex)
        if results:
            completed += self._absorb(np.frombuffer(b"".join(results), dtype=np.uint8)
                                      .reshape(len(results), -1), ex)
        return completed

    def _drain_batched(self, ex: _Exchange | None) -> int:
        """``_drain`` with recvmmsg: the socket is read a buffer at a time (``fastio``); the
        RESULTs of each buffer are absorbed at once, every other datagram goes to ``_one``."""
        rx, size, completed = self._rx, frame_length(self.endpoint.lanes), 0
        while n := rx.receive():
            lens = rx.lens[:n]
            self.stats.packets_received += n
            self.stats.bytes_received += int(lens.sum())
            fast = (lens == size) & (rx.buf[:n, 0] == _RESULT_BYTE0) & (ex is not None)
            for k in np.flatnonzero(~fast).tolist():
                completed += self._one(rx.payload(k), rx.address(k), ex)
            if fast.any():
                completed += self._absorb(rx.buf[:n][fast, :size], ex)
        return completed

    def _absorb(self, rows: np.ndarray, ex: _Exchange) -> int:
        """Take a batch of RESULT datagrams of the right size and version (one per row): the same
        checks and counters as ``_one``, in the same order, for all of them at once."""
        ep, out = self.endpoint, ex.out
        batch = parse_frames(rows, ep.lanes)
        odd = np.flatnonzero(batch.num_lanes != ep.lanes)   # sized right, but says otherwise
        for r in odd.tolist():
            self._one(rows[r].tobytes(), ("", 0), ex)         # counted as malformed there
        sized = batch.num_lanes == ep.lanes
        mine = sized & (batch.job_id == ep.job_id)
        self.stats.foreign_ignored += int((sized & ~mine).sum())
        current = mine & (batch.epoch == ep.epoch)
        self.stats.stale_epoch_ignored += int((mine & ~current).sum())
        idx = batch.chunk.astype(np.int64) - ex.base
        inside = current & (idx >= 0) & (idx < ex.n)
        self.stats.foreign_ignored += int((current & ~inside).sum())
        rows_in = np.flatnonzero(inside)
        # the first arrival of a chunk not yet held completes it; any other is a duplicate
        chunk_idx, first = np.unique(idx[rows_in], return_index=True)
        new = ~out.done[chunk_idx]
        take_rows, take = rows_in[first[new]], chunk_idx[new]
        self.stats.duplicate_results += int(rows_in.size - take.size)
        if take.size == 0:
            return 0
        ex.results[take] = batch.lanes[take_rows]
        self.delivery.complete(out, take)
        if ex.progress is not None:
            ex.progress(int(take.size))
        return int(take.size)

    def _one(self, payload: bytes, addr: tuple[str, int], ex: _Exchange | None) -> int:
        """Check and take one datagram (probes, malformed or foreign packets, and RESULTs while no
        exchange runs); 1 if it completed a chunk of ``ex``."""
        try:
            dg = decode_datagram(payload)
            if dg.pkt_type in (wire.PacketType.PROBE, wire.PacketType.PROBE_ACK):
                if dg.job_id == self.endpoint.job_id:
                    self._answer_probe(dg, addr)
                return 0
            if len(dg.lanes) != self.endpoint.lanes:
                raise MalformedPacket(f"wrong lane count {len(dg.lanes)} "
                                      f"(expected {self.endpoint.lanes})")
        except MalformedPacket as err:
            self.stats.malformed_ignored += 1
            key = str(err).split(":")[0]
            self.stats.reasons[key] = self.stats.reasons.get(key, 0) + 1
            return 0
        i = dg.chunk - ex.base if ex is not None else -1
        if dg.pkt_type != wire.PacketType.RESULT or dg.job_id != self.endpoint.job_id:
            self.stats.foreign_ignored += 1
            return 0
        if dg.epoch != self.endpoint.epoch:
            self.stats.stale_epoch_ignored += 1   # an earlier (or later) session's RESULT
            return 0
        if ex is None or not 0 <= i < ex.n:
            self.stats.foreign_ignored += 1
            return 0
        if ex.out.done[i]:
            self.stats.duplicate_results += 1
            return 0
        ex.results[i] = dg.lanes
        self.delivery.complete(ex.out, np.array([i], dtype=np.int64))
        if ex.progress is not None:
            ex.progress(1)
        return 1

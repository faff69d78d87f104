"""One reliable-delivery engine for every transport of the project.

A transport hands the engine an exchange of ``n`` numbered items (chunks to the switch, packets
to a ring neighbour) and a ``Link`` that puts a batch of items on the wire (every item the
window allows in one pass, every expired one in one retransmission pass) and takes in answers.  The
engine owns what makes the exchange reliable and polite, the same way for every transport:

* the **outstanding set**: per item its tries, first send time, timeout and deadline;
* the **window**: an AIMD in-flight limit (slow start up to ``ssthresh``, then one item per
  window of completions; halved when a timer expires), capped by the transport's hard limit, and
  optionally self-clocking (item ``i`` goes only once item ``i - clock`` is done: DHC's slots);
* **per-item timers**: the RFC 6298 timeout (``hostagent.rtt``, samples only from items sent
  once, Karn's rule), exponential backoff capped at ``max_timeout``, the restart of backed-off
  timers when newer items complete (RFC 6298 5.3) and, for answers that come in order (the
  ring's ACKs), of the timers of items sent after the newest answer (``restart_in_flight``);
* the **retry budget**: an item still unanswered after ``max_retries`` retransmissions ends the
  exchange with the ``DeliveryTimeout`` the link builds, which names who did not answer.

What an answer is, who is blamed and which packets carry what stays in the transport.
"""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from hostagent.rtt import RttEstimator


@dataclass(frozen=True)
class RetryPolicy:
    """Retransmission timing: first timeout, growth, cap and how many tries per item.

    The timeout adapts to the measured round-trip time as TCP's does (RFC 6298: SRTT + 4 RTTVAR,
    samples only from items sent once — Karn's rule), never below ``min_timeout``; the
    ``initial_timeout`` applies until the first sample."""

    initial_timeout: float = 0.2
    backoff: float = 2.0
    max_timeout: float = 2.0
    max_retries: int = 12
    min_timeout: float = 0.05

    def give_up_after(self) -> float:
        """Seconds one item's transmissions take before its budget is spent (with no RTT sample
        yet): how long a peer may stay silent before it is declared gone."""
        t, total = self.initial_timeout, 0.0
        for _ in range(self.max_retries + 1):
            total += t
            t = min(t * self.backoff, self.max_timeout)
        return total


class DeliveryTimeout(TimeoutError):
    """An item got no answer within the retry budget; the message names who did not answer."""


@dataclass
class Window:
    """AIMD in-flight limit: ``cwnd`` items at most, never above ``limit``.  Below ``ssthresh``
    each completion adds one item (slow start), above it one per window of completions; an
    expired timer halves it (and sets ``ssthresh`` there), never below 2."""

    limit: int
    cwnd: float
    ssthresh: float

    @classmethod
    def opening(cls, limit: int, first: int = 16, slow_start: bool = True) -> Window:
        """A window starting at ``min(first, limit)`` items; ``slow_start`` grows it fast up to
        ``limit``, else it starts in congestion avoidance."""
        return cls(limit, float(min(first, limit)), float(limit) if slow_start else 0.0)

    def grow(self, completed: int) -> None:
        for _ in range(completed):
            self.cwnd += 1.0 if self.cwnd < self.ssthresh else 1.0 / self.cwnd
        self.cwnd = min(self.cwnd, float(self.limit))

    def shrink(self) -> None:
        self.ssthresh = max(2.0, self.cwnd / 2)
        self.cwnd = self.ssthresh


class Outstanding:
    """Per-item state of one exchange of items ``0 .. n - 1``."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.done = np.zeros(n, dtype=bool)
        self.n_done = 0
        self.sent = 0             # items [0, sent) went out at least once, in order
        self.lo = 0               # first item not done: timers are looked at from here
        self.deadline = np.full(n, np.inf)   # retransmission time of each item in flight
        self.first_sent = np.zeros(n)
        self.timeout = np.zeros(n)
        self.tries = np.zeros(n, dtype=np.int64)


class Link(Protocol):
    """What a transport does for the engine during one exchange."""

    def transmit(self, items: np.ndarray, again: bool) -> None:
        """Put ``items`` (ascending item numbers) on the wire, in that order, as one batch
        (``again``: retransmissions).  A send error is a loss."""

    def receive(self, wait: float) -> bool:
        """Take in answers for up to ``wait`` s, reporting completions to the engine; False when
        the timers should wait a pass (answers just arrived and may complete what would expire)."""

    def finished(self) -> bool:
        """The exchange is over (every item done, and whatever else the transport waits for)."""

    def give_up(self, i: int) -> DeliveryTimeout:
        """The error for item ``i`` having spent its budget: names what did not answer."""


class Delivery:
    """The engine of one transport: its RTT estimate and window persist across exchanges."""

    def __init__(self, policy: RetryPolicy, window: Window) -> None:
        self.policy = policy
        self.window = window
        self._rtt = RttEstimator(policy.initial_timeout, policy.min_timeout, policy.max_timeout)

    @property
    def rto(self) -> float:
        """The current retransmission timeout for an item's first transmission."""
        return self._rtt.rto

    def run(self, out: Outstanding, link: Link, poll_cap: float, clock: int | None = None) -> None:
        """Deliver ``out``'s items over ``link`` until ``link.finished()``: send what the window
        (and, given ``clock``, self-clocking) allows, wait for answers up to the next deadline
        (at most ``poll_cap`` s), retransmit what expired.  Raises the link's DeliveryTimeout."""
        rtt, monotonic = self._rtt, time.monotonic
        while not link.finished():
            sent, stop = out.sent, self._sendable(out, clock)
            if stop > sent:                     # first transmissions: the current timeout
                rto = rtt.rto
                out.timeout[sent:stop] = rto
                out.first_sent[sent:stop] = monotonic()
                link.transmit(np.arange(sent, stop, dtype=np.int64), False)
                out.deadline[sent:stop] = monotonic() + rto
                out.sent = sent = stop
            lo = out.lo
            done, deadline = out.done, out.deadline
            while lo < sent and done[lo]:
                lo += 1
            out.lo = lo
            pending = deadline[lo:sent]         # O(window) per pass, not O(n)
            wait = max(0.0, float(pending.min()) - monotonic()) if pending.size else np.inf
            if link.receive(min(wait, poll_cap)):
                self._expire(out, link)

    def _expire(self, out: Outstanding, link: Link) -> None:
        """Retransmit every item whose timer ran out, with its timeout backed off; one expiry pass
        halves the window once."""
        lo = out.lo
        expired = lo + np.flatnonzero(out.deadline[lo:out.sent] <= time.monotonic())
        if expired.size == 0:
            return
        self.window.shrink()
        policy = self.policy
        spent = expired[out.tries[expired] >= policy.max_retries]
        if spent.size:
            raise link.give_up(int(spent[0]))
        out.tries[expired] += 1
        out.timeout[expired] = np.minimum(out.timeout[expired] * policy.backoff,
                                          policy.max_timeout)
        link.transmit(expired, True)
        out.deadline[expired] = time.monotonic() + out.timeout[expired]

    def _sendable(self, out: Outstanding, clock: int | None) -> int:
        """End of the run of items that may go out now, from ``out.sent``: below the item count,
        within ``cwnd`` of the completed ones and, given ``clock``, only items whose item
        ``i - clock`` is done."""
        stop = min(out.n, math.ceil(out.n_done + self.window.cwnd))
        start = max(out.sent, clock or 0)
        if clock is not None and stop > start:
            waiting = np.flatnonzero(~out.done[start - clock:stop - clock])
            if waiting.size:
                stop = start + int(waiting[0])
        return max(stop, out.sent)

    def complete(self, out: Outstanding, items: np.ndarray) -> int:
        """Items (distinct, not yet done) got their answer: stop their timers, take one RTT sample
        from those sent once (the longest), open the window.  Returns how many."""
        k = int(items.size)
        if k == 0:
            return 0
        now = time.monotonic()
        out.done[items] = True
        once = items[out.tries[items] == 0]
        if once.size:       # one sample per batch of answers, as TCP takes one per ACK: the
            self._rtt.sample(now - float(out.first_sent[once].min()))   # oldest, conservative
        out.deadline[items] = np.inf
        out.n_done += k
        self.window.grow(k)
        return k

    def restart_backed_off(self, out: Outstanding, lo: int, hi: int) -> None:
        """New answers arrived: an item of ``[lo, hi)`` older than the newest done one, not done
        itself and waiting out a backed-off timeout, gets the current timeout again (RFC 6298
        5.3: a timer restarts on new acknowledgements).  For a transport whose peers send in
        order (DHC's workers), the answer to item c proves every peer sent the items before c:
        their answers (or our sends) were lost, and waiting up to ``max_timeout`` gains nothing.
        Newer items keep their timers: a peer may simply not have sent them yet."""
        held = np.flatnonzero(out.done[lo:hi])
        if held.size == 0:
            return
        top = lo + int(held[-1])
        waiting = lo + np.flatnonzero(~out.done[lo:top] & (out.tries[lo:top] > 0))
        if waiting.size:
            rto = self.rto
            out.timeout[waiting] = np.minimum(out.timeout[waiting], rto)
            out.deadline[waiting] = np.minimum(out.deadline[waiting], time.monotonic() + rto)


    def restart_in_flight(self, out: Outstanding, lo: int, hi: int) -> None:
        """New answers arrived: every item of ``[lo, hi)`` sent after the newest done one, sent
        once and not answered yet, expires no earlier than its timeout from now (RFC 6298 5.3:
        the retransmission timer restarts on an acknowledgement of new data).  For a transport
        whose answers come back in order (the ring's ACKs), such an item is most likely still
        queued behind the ones just answered: its own timer, started when a whole window went out
        at once, would fire while it waits (a spurious retransmission, and a halved window).
        Items older than the newest answer keep their timers: a gap there is a loss."""
        held = np.flatnonzero(out.done[lo:hi])
        if held.size == 0:
            return
        top = lo + int(held[-1]) + 1
        ahead = top + np.flatnonzero(out.tries[top:hi] == 0)
        if ahead.size:
            out.deadline[ahead] = np.maximum(out.deadline[ahead], time.monotonic() + out.timeout[ahead])


_E = TypeVar("_E", bound="DeliveryEndpoint")


class ReceiveCounters(Protocol):
    packets_received: int
    bytes_received: int


class DeliveryEndpoint:
    """What both transports share around the engine: one UDP socket they own and close (also as a
    context manager), the reference receive loop, and the engine's current retransmission timeout."""

    _sock: socket.socket
    delivery: Delivery
    stats: ReceiveCounters

    def _recv_each(self) -> Iterator[tuple[bytes, Any]]:
        """The datagrams waiting on the (non-blocking) socket, one ``recvfrom`` each, counted: the
        reference receive path the batched one (``hostagent.fastio``) is tested against."""
        while True:
            try:
                data, addr = self._sock.recvfrom(65535)
            except BlockingIOError:
                return
            self.stats.packets_received += 1
            self.stats.bytes_received += len(data)
            yield data, addr

    def close(self) -> None:
        self._sock.close()

    def __enter__(self: _E) -> _E:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def rto(self) -> float:
        """The current retransmission timeout for an item's first transmission."""
        return self.delivery.rto

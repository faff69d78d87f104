"""The native delivery engine (``native_delivery.c``) against the Python reference
(``hostagent.delivery``): the same decisions, step for step, on a scripted network.

Both engines are driven by one ``ScriptedNet``: a fake clock and a seeded schedule deciding,
per transmission, whether it is lost, answered once or twice (duplicates), and after which delay
(reordering; some answers come after the item's timer expired: late answers).  The C loop runs
with the scripted clock, transmit and receive as cffi callbacks (the very ``hde_run`` the
sockets use); the Python engine runs with the same clock patched into ``hostagent.delivery``.
Every transmission (time, items, first or again), the per-item arrays, the RTT estimate and the
window must come out bit for bit the same, and a spent budget must end both at the same item.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from hostagent import delivery as pydelivery
from hostagent import native_delivery as nd
from hostagent.delivery import Delivery, DeliveryTimeout, Outstanding, RetryPolicy, Window

from .native_engine import requires_native

pytestmark = requires_native

POLICY = RetryPolicy(initial_timeout=0.02, backoff=2.0, max_timeout=0.08, max_retries=7,
                     min_timeout=0.004)
POLL_CAP = 0.05


@dataclass
class ScriptedNet:
    """Fake clock and seeded network: losses, duplicates, delays (reordering), late answers."""

    seed: int
    loss: float = 0.15
    dup: float = 0.1
    late: float = 0.05
    silent: frozenset[int] = frozenset()
    t: float = 0.0
    trace: list[tuple[float, tuple[int, ...], bool]] = field(default_factory=list)
    pending: list[tuple[float, int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        self._n = 0

    def now(self) -> float:
        return self.t

    def transmit(self, items: list[int], again: bool) -> None:
        self.trace.append((self.t, tuple(items), again))
        for i in items:
            fate, delay = self.rng.random(), float(self.rng.uniform(0.001, 0.012))
            if i in self.silent or fate < self.loss:
                continue
            if fate < self.loss + self.late:
                delay += 0.1                       # answered after its timer expired
            self._push(self.t + delay, i)
            if self.rng.random() < self.dup:
                self._push(self.t + delay + float(self.rng.uniform(0, 0.01)), i)

    def _push(self, at: float, i: int) -> None:
        self._n += 1
        heapq.heappush(self.pending, (at, self._n, i))

    def arrivals(self, wait: float) -> list[int] | None:
        """Answers arriving within ``wait`` (a batch: those within 1 ms of the first), the clock
        moved to the last of them; None (clock moved by ``wait``) when none does."""
        if not self.pending or self.pending[0][0] > self.t + wait:
            self.t += wait
            return None
        first = self.pending[0][0]
        got = []
        while self.pending and self.pending[0][0] <= first + 0.001:
            at, _, i = heapq.heappop(self.pending)
            self.t = max(self.t, at)
            got.append(i)
        return got


def _fresh(items: list[int], done: np.ndarray) -> np.ndarray:
    """First arrivals of items not yet done (duplicates dropped), as the transports take them."""
    return np.array([i for k, i in enumerate(items) if not done[i] and i not in items[:k]],
                    dtype=np.int64)


def run_python(net: ScriptedNet, n: int, clock: int | None, monkeypatch) -> tuple[Any, ...]:
    class FakeTime:
        monotonic = staticmethod(net.now)

    monkeypatch.setattr(pydelivery, "time", FakeTime)
    engine, out = Delivery(POLICY, Window.opening(8, first=2)), Outstanding(n)

    class Link:
        def transmit(self, items: np.ndarray, again: bool) -> None:
            net.transmit(items.tolist(), again)

        def receive(self, wait: float) -> bool:
            got = net.arrivals(wait)
            if got is None:
                return True
            fresh = _fresh(got, out.done)
            if engine.complete(out, fresh):
                engine.restart_backed_off(out, out.lo, out.sent)
            return False

        def finished(self) -> bool:
            return out.n_done == n

        def give_up(self, i: int) -> DeliveryTimeout:
            return DeliveryTimeout(f"item {i}")

    spent = None
    try:
        engine.run(out, Link(), POLL_CAP, clock=clock)
    except DeliveryTimeout as err:
        spent = str(err)
    return spent, out, engine


def run_native(net: ScriptedNet, n: int, clock: int | None) -> tuple[Any, ...]:
    ffi, lib = nd.FFI, nd.lib()
    engine, out = Delivery(POLICY, Window.opening(8, first=2)), Outstanding(n)
    e, bound = nd.load_engine(engine), nd.BoundOutstanding(out)
    errors: list[BaseException] = []

    @ffi.callback("double(void *)")
    def now(_ctx):
        return net.now()

    @ffi.callback("void(void *, const int64_t *, int64_t, int)")
    def transmit(_ctx, items, k, again):
        net.transmit([items[j] for j in range(k)], bool(again))

    @ffi.callback("int(void *, double)")
    def receive(_ctx, wait):
        try:
            got = net.arrivals(wait)
            if got is None:
                return 1
            fresh = _fresh(got, out.done)
            if fresh.size:
                lib.hde_complete(e, bound.c, ffi.from_buffer("int64_t[]", fresh), fresh.size, net.t)
                lib.hde_restart_backed_off(e, bound.c, bound.c.lo, bound.c.sent, net.t)
            return 0
        except BaseException as err:      # a callback cannot raise through C: stop the loop
            errors.append(err)
            return -1

    @ffi.callback("int(void *)")
    def finished(_ctx):
        return int(bound.c.n_done == n)

    io = ffi.new("hde_io *", {"ctx": ffi.NULL, "now": now, "transmit": transmit,
                              "receive": receive, "finished": finished})
    spent_p = ffi.new("int64_t *")
    status = lib.hde_run(e, bound.c, io, POLL_CAP, clock or 0, spent_p)
    assert not errors, errors
    bound.sync()
    nd.store_engine(e, engine)
    assert status in (nd.DONE, nd.GIVE_UP)
    return (f"item {spent_p[0]}" if status == nd.GIVE_UP else None), out, engine


def assert_same(a: tuple[Any, ...], b: tuple[Any, ...], net_a: ScriptedNet,
                net_b: ScriptedNet) -> None:
    (spent_a, out_a, eng_a), (spent_b, out_b, eng_b) = a, b
    assert net_a.trace == net_b.trace
    assert spent_a == spent_b
    for name in ("done", "tries", "timeout", "deadline", "first_sent"):
        assert np.array_equal(getattr(out_a, name), getattr(out_b, name)), name
    assert (out_a.n_done, out_a.sent, out_a.lo) == (out_b.n_done, out_b.sent, out_b.lo)
    assert (eng_a._rtt.srtt, eng_a._rtt.rttvar) == (eng_b._rtt.srtt, eng_b._rtt.rttvar)
    assert (eng_a.window.cwnd, eng_a.window.ssthresh) == (eng_b.window.cwnd, eng_b.window.ssthresh)


@pytest.mark.parametrize("clock", [None, 4])
@pytest.mark.parametrize("seed", range(6))
def test_same_decisions_on_losses_duplicates_reordering_and_late_answers(seed, clock,
                                                                         monkeypatch) -> None:
    net_c, net_p = ScriptedNet(seed), ScriptedNet(seed)
    native = run_native(net_c, 120, clock)
    python = run_python(net_p, 120, clock, monkeypatch)
    assert_same(native, python, net_c, net_p)
    assert native[0] is None and native[1].done.all()
    kinds = {again for _, _, again in net_c.trace}
    assert kinds == {False, True}                  # the schedule did make it retransmit


def test_same_item_blamed_when_a_budget_is_spent(monkeypatch) -> None:
    net_c, net_p = ScriptedNet(3, silent=frozenset({37})), ScriptedNet(3, silent=frozenset({37}))
    native = run_native(net_c, 60, 4)
    python = run_python(net_p, 60, 4, monkeypatch)
    assert native[0] == python[0] == "item 37"
    assert_same(native, python, net_c, net_p)
    assert native[1].tries[37] == POLICY.max_retries


def test_engine_state_round_trips_between_python_and_c() -> None:
    engine = Delivery(POLICY, Window.opening(64, slow_start=False))
    engine._rtt.sample(0.013)
    engine.window.grow(5)
    e = nd.load_engine(engine)
    assert nd.lib().hde_rto(e) == engine.rto
    other = Delivery(POLICY, Window.opening(64))
    nd.store_engine(e, other)
    assert (other._rtt.srtt, other._rtt.rttvar, other.window.cwnd, other.window.ssthresh) == \
        (engine._rtt.srtt, engine._rtt.rttvar, engine.window.cwnd, engine.window.ssthresh)


def test_engine_selection(monkeypatch) -> None:
    monkeypatch.setenv(nd.ENV, "turbo")
    with pytest.raises(nd.fastio.HostIOError, match="DHC_HOST_ENGINE must be 'native' or 'python'"):
        nd.native_engine_selected()
    monkeypatch.setenv(nd.ENV, "python")
    assert nd.native_engine_selected() is False
    monkeypatch.setenv(nd.ENV, "native")
    monkeypatch.setenv(nd.fastio.ENV, "python")
    with pytest.raises(nd.fastio.HostIOError, match="needs the batched host I/O"):
        nd.native_engine_selected()
    monkeypatch.delenv(nd.fastio.ENV)
    assert nd.native_engine_selected() is True
    monkeypatch.delenv(nd.ENV)
    assert nd.native_engine_selected() is True


@pytest.mark.parametrize("seed", range(4))
def test_in_flight_timers_restart_the_same_way(seed, monkeypatch) -> None:
    """``hde_restart_in_flight`` (the ring's ACK path in C) against ``restart_in_flight``."""
    now = 5.0

    class FakeTime:
        monotonic = staticmethod(lambda: now)

    monkeypatch.setattr(pydelivery, "time", FakeTime)
    outs = []
    for _ in range(2):                # two identical states, one per engine
        r = np.random.default_rng(seed)
        out = Outstanding(40)
        out.sent, out.lo = 36, 3
        out.done[:] = r.random(40) < 0.3
        out.done[36:] = False
        out.tries[:] = (r.random(40) < 0.3) * r.integers(1, 4, 40)
        out.timeout[:] = r.uniform(0.01, 0.2, 40)
        out.deadline[:] = np.where(out.done, np.inf, now + r.uniform(-0.05, 0.2, 40))
        outs.append(out)
    engine = Delivery(POLICY, Window.opening(8))
    engine.restart_in_flight(outs[0], outs[0].lo, outs[0].sent)
    bound = nd.BoundOutstanding(outs[1])
    nd.lib().hde_restart_in_flight(nd.load_engine(engine), bound.c, 3, 36, now)
    for name in ("deadline", "timeout", "tries", "done"):
        assert np.array_equal(getattr(outs[0], name), getattr(outs[1], name)), name


def test_socket_counters_add_up_the_same_for_both_transports() -> None:
    """``add_socket_counts``: packets and bytes each way into either transport's stats; refused
    sends by exception name where the stats keep them (DHC's), ignored where not (the ring's)."""
    import errno

    from bench.baselines.ring_transport import RingStats
    from hostagent.transport import TransportStats

    sock = nd.FFI.new("hde_sock *")
    sock.packets_sent, sock.bytes_sent, sock.packets_received, sock.bytes_received = 5, 500, 3, 90
    sock.errs[0], sock.errs[1], sock.n_errs = errno.ENOBUFS, errno.ECONNREFUSED, 2
    dhc, ring = TransportStats(packets_sent=1, reasons={"ConnectionRefusedError": 4}), RingStats()
    nd.add_socket_counts(dhc, sock)
    nd.add_socket_counts(ring, sock)
    assert (dhc.packets_sent, dhc.bytes_sent, dhc.packets_received, dhc.bytes_received) == \
        (6, 500, 3, 90)
    assert (ring.packets_sent, ring.bytes_sent, ring.packets_received, ring.bytes_received) == \
        (5, 500, 3, 90)
    assert dhc.send_errors == 2
    assert dhc.reasons == {"ConnectionRefusedError": 5, "OSError": 1}

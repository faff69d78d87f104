"""The delivery engine on its own (``hostagent.delivery``), driven by an in-memory link whose
answers and losses the test decides; the transports over real sockets are tested in
test_loopback.py, test_blame.py, test_epoch.py and tests/bench/test_ring.py."""

from __future__ import annotations

import numpy as np
import pytest

from hostagent.delivery import Delivery, DeliveryTimeout, Outstanding, RetryPolicy, Window

FAST = RetryPolicy(initial_timeout=0.01, backoff=2.0, max_timeout=0.04, max_retries=3,
                   min_timeout=0.005)


class MemoryLink:
    """Answers every item in flight at once, except the transmissions listed in ``lose``
    ((item, try) pairs) and every item in ``silent``."""

    def __init__(self, engine: Delivery, out: Outstanding, clock: int | None = None,
                 lose: set[tuple[int, int]] = frozenset(), silent: set[int] = frozenset()) -> None:
        self.engine, self.out, self.clock, self.lose, self.silent = engine, out, clock, lose, silent
        self.sent: list[tuple[int, bool]] = []
        self.first: set[int] = set()         # items sent at least once
        self.in_flight: list[int] = []       # transmissions that will be answered
        self.max_in_flight = 0
        self.first_pass = -1                 # items sent before the first receive

    def transmit(self, items: np.ndarray, again: bool) -> None:
        assert items.dtype == np.int64 and np.all(np.diff(items) > 0)
        for i in items.tolist():
            if self.clock is not None and i >= self.clock:
                assert self.out.done[i - self.clock], f"item {i} sent before item {i - self.clock}"
            self.sent.append((i, again))
            self.first.add(i)
            self.max_in_flight = max(self.max_in_flight, len(self.first) - self.out.n_done)
            if i not in self.silent and (i, int(self.out.tries[i])) not in self.lose:
                self.in_flight.append(i)

    def receive(self, wait: float) -> bool:
        if self.first_pass < 0:
            self.first_pass = len(self.sent)
        answered = np.array(sorted(set(self.in_flight) - set(np.flatnonzero(self.out.done))),
                            dtype=np.int64)
        self.in_flight.clear()
        self.engine.complete(self.out, answered)
        return answered.size == 0

    def finished(self) -> bool:
        return self.out.n_done == self.out.n

    def give_up(self, i: int) -> DeliveryTimeout:
        return DeliveryTimeout(f"item {i}: nobody answered after {self.out.tries[i]} retransmissions")


def test_every_item_delivered_once_without_loss_and_the_window_opens() -> None:
    engine = Delivery(FAST, Window.opening(8, first=2))
    out = Outstanding(40)
    link = MemoryLink(engine, out)
    engine.run(out, link, poll_cap=0.01)
    assert [i for i, _ in link.sent] == list(range(40)) and out.done.all()
    assert link.first_pass == 2                                  # the window opens at 2 ...
    assert engine.window.cwnd == 8 and link.max_in_flight == 8  # ... and grows to its limit


def test_lost_items_are_retransmitted_with_backoff_and_the_window_halves() -> None:
    engine = Delivery(FAST, Window.opening(8))
    out = Outstanding(10)
    link = MemoryLink(engine, out, lose={(3, 0), (3, 1), (7, 0)})
    engine.run(out, link, poll_cap=0.01)
    assert out.done.all()
    assert sorted(i for i, again in link.sent if again) == [3, 3, 7]
    assert list(out.tries[[3, 7]]) == [2, 1] and out.tries.sum() == 3
    assert out.timeout[3] == pytest.approx(4 * out.timeout[0])     # doubled twice
    assert engine.window.ssthresh < 8                                # an expiry halved it


def test_self_clocking_never_reuses_a_slot_before_its_answer() -> None:
    engine = Delivery(FAST, Window.opening(4))
    out = Outstanding(20)
    link = MemoryLink(engine, out, clock=4, lose={(1, 0), (6, 0)})
    engine.run(out, link, poll_cap=0.01, clock=4)     # MemoryLink asserts the rule on every send
    assert out.done.all()


def test_spent_budget_raises_the_links_error_after_max_retries() -> None:
    engine = Delivery(FAST, Window.opening(4))
    out = Outstanding(3)
    link = MemoryLink(engine, out, silent={1})
    with pytest.raises(DeliveryTimeout, match="item 1: nobody answered after 3 retransmissions"):
        engine.run(out, link, poll_cap=0.01)
    assert [again for i, again in link.sent if i == 1] == [False, True, True, True]
    assert out.timeout[1] == FAST.max_timeout                        # 0.01 -> 0.02 -> 0.04 (cap)


def test_window_slow_start_and_congestion_avoidance() -> None:
    fast = Window.opening(64)
    fast.grow(10)
    assert fast.cwnd == 26                      # slow start: one item per completion
    slow = Window.opening(64, slow_start=False)
    slow.grow(16)
    assert 16.9 < slow.cwnd < 17.0              # congestion avoidance: about one per window
    slow.shrink()
    assert slow.cwnd == slow.ssthresh == pytest.approx(16.97 / 2, abs=0.01)
    tiny = Window.opening(3)
    tiny.shrink()
    tiny.shrink()
    assert tiny.cwnd == 2.0                     # never below 2


def test_give_up_after_sums_the_backed_off_timeouts() -> None:
    assert FAST.give_up_after() == pytest.approx(0.01 + 0.02 + 0.04 + 0.04)
    assert RetryPolicy(initial_timeout=0.2, max_timeout=1.0, max_retries=12).give_up_after() \
        == pytest.approx(0.2 + 0.4 + 0.8 + 10 * 1.0)


def test_an_answer_restarts_the_timers_of_items_sent_after_it_only(monkeypatch) -> None:
    """RFC 6298 5.3 for in-order answers (the ring's ACKs): items newer than the newest answer,
    sent once, expire no earlier than their timeout from now; a gap before it (a loss) and a
    retransmitted item keep their timers, and no timer is brought forward."""
    from hostagent import delivery as pydelivery

    class FakeTime:
        monotonic = staticmethod(lambda: 10.0)

    monkeypatch.setattr(pydelivery, "time", FakeTime)
    engine, out = Delivery(FAST, Window.opening(8)), Outstanding(8)
    out.sent = 7
    out.done[[0, 1, 3]] = True
    out.tries[:] = [0, 0, 0, 0, 0, 1, 0, 0]
    out.timeout[:] = 0.05
    out.deadline[:] = [np.inf, np.inf, 10.01, np.inf, 10.01, 10.01, 10.2, np.inf]
    engine.restart_in_flight(out, 0, out.sent)
    assert out.deadline[2] == 10.01                    # a gap behind the newest answer: a loss
    assert out.deadline[4] == 10.05                    # in flight behind it: restarted
    assert out.deadline[5] == 10.01                    # retransmitted: its own backed-off timer
    assert out.deadline[6] == 10.2                     # later than a restart would put it
    assert out.deadline[7] == np.inf                   # not sent yet
    before = out.deadline.copy()
    engine.restart_in_flight(out, 4, out.sent)         # nothing answered in [4, 7): no change
    assert np.array_equal(out.deadline, before)

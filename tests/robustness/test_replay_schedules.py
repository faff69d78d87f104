"""Replays and delayed duplicates against ``p4src/dhc.p4`` (issue 30, item 1), in-process on the
softswitch: one root, three workers, W = 4, K = 4 (``tests.p4src.test_aggregation.make_rig``).

Session A runs a clean exact AllReduce (lock-step, padded to a 2W boundary as the agent pads) and
every DATA frame it sends is kept.  Then any of those frames, and frames of session B itself, are
sent again at random points of session B (before a chunk, or between two workers' contributions).
Session B either continues A's chunk sequence in the same epoch (a manifest-path session:
``hostagent/chunk_state.py``) or runs in a new epoch from chunk 0 (a reset / the job service).
Whatever the schedule, every RESULT of session B is the exact sum, to every worker, with no
reset; and a frame of an earlier chunk whose cell was reused is counted as stale_chunk (15).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dhcwire.p4names import DROP_STALE_CHUNK, DROP_STALE_EPOCH
from tests.p4src.dhcnet import drops, set_epoch
from tests.p4src.test_aggregation import Rig, make_rig

W = 4
LAP = 2 * W
WORKERS = 3


@dataclass(frozen=True)
class Sent:
    """One DATA a worker sent: enough to send it again, byte for byte the same frame."""

    worker: int
    chunk: int
    epoch: int
    lanes: tuple[int, ...]


def _lanes(session: int, chunk: int, worker: int) -> tuple[int, ...]:
    """Distinct per (session, chunk, worker), so a stray contribution changes a sum."""
    return tuple((session * 1_000_003 + chunk * 1_009 + worker * 101 + i * 7 + 1) & 0xFFFFFFFF
                 for i in range(4))


def _send(rig: Rig, s: Sent) -> list[tuple[int, bytes]]:
    return rig.send(s.worker, list(s.lanes), chunk=s.chunk, epoch=s.epoch)


def run_chunk(rig: Rig, session: int, chunk: int, epoch: int, order: list[int], log: list[Sent],
              replays_between: dict[int, list[int]]) -> None:
    """Every worker contributes ``chunk`` in ``order``; before the k-th contribution, the frames
    ``log[i % len(log)]`` for i in ``replays_between[k]`` are sent again (any frame sent so far,
    this session's included).  The last contribution must bring the exact sum to every worker."""
    out: list[tuple[int, bytes]] = []
    for k, w in enumerate(order):
        for i in replays_between.get(k, []):
            _send(rig, log[i % len(log)])      # whatever the switch does with it, it is ignored
        s = Sent(w, chunk, epoch, _lanes(session, chunk, w))
        out = _send(rig, s)
        log.append(s)
    got = rig.parse(out)
    assert sorted(got) == [1, 2, 3], f"session {session} chunk {chunk}: no RESULT to every worker"
    want = [sum(_lanes(session, chunk, w)[i] for w in range(WORKERS)) & 0xFFFFFFFF for i in range(4)]
    for p in got.values():
        assert p.header["chunk"] == chunk and p.lanes == want, f"session {session} chunk {chunk}"


def run_session(rig: Rig, session: int, first: int, n: int, epoch: int, orders, log: list[Sent],
                replays: dict[tuple[int, int], list[int]] | None = None) -> int:
    """Chunks first .. first + n - 1, padded to a 2W boundary (as ChunkTransport.finish does)."""
    n += (-(first + n)) % LAP
    for i in range(n):
        between = {k: rs for (c, k), rs in (replays or {}).items() if c == i}
        run_chunk(rig, session, first + i, epoch, orders[i % len(orders)], log, between)
    return first + n


replay_plan = st.lists(st.tuples(st.integers(0, 10_000),     # which earlier frame
                                 st.integers(0, 3 * LAP),    # before which chunk of session B
                                 st.integers(0, WORKERS - 1)),  # after how many contributions
                       min_size=1, max_size=12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_a=st.integers(1, 2 * LAP), n_b=st.integers(1, 2 * LAP), new_epoch=st.booleans(),
       orders=st.lists(st.permutations(range(WORKERS)), min_size=1, max_size=4), plan=replay_plan)
# found by this test: worker 0's chunk 10 again between the first two contributions of chunk 14
# (slot 2, the other shadow set), after worker 0 had contributed chunk 14; clearing the sender's
# bit in the other set (SwitchML's rule) wiped that contribution and chunk 14 never completed
@example(n_a=1, n_b=1, new_epoch=False, orders=[[0, 1, 2]], plan=[(1234, 6, 1)])
def test_next_allreduce_is_exact_whatever_is_replayed(n_a, n_b, new_epoch, orders, plan) -> None:
    rig = make_rig()
    log: list[Sent] = []
    end_a = run_session(rig, 0, 0, n_a, 0, orders, log)
    if new_epoch:
        set_epoch(rig.sw, rig.agg.job, 1, old=0)
    first_b, epoch_b = (0, 1) if new_epoch else (end_a, 0)
    replays: dict[tuple[int, int], list[int]] = {}
    for idx, at, k in plan:
        replays.setdefault((at, k), []).append(idx)
    end_b = run_session(rig, 1, first_b, n_b, epoch_b, orders, log, replays)
    assert end_b % LAP == 0
    # and a third session continuing B is exact too, with replays of B's own frames first
    for s in log[-3 * LAP:][::5]:
        _send(rig, s)
    run_session(rig, 2, end_b, LAP, epoch_b, orders, log)
    got = drops(rig.sw)
    assert set(got) <= {DROP_STALE_CHUNK, DROP_STALE_EPOCH, 5}, got   # 5: duplicate of a pending slot


def test_replayed_middle_chunk_and_first_lap_after_a_session_are_stale() -> None:
    """The issue's replay: after a clean AllReduce, one frame from the middle and then chunks 0-7
    of every worker come again; all are older than their cells' chunks, so all are dropped as
    stale_chunk without touching a register, and the next AllReduce (same session) is exact."""
    rig = make_rig()
    log: list[Sent] = []
    orders = [[0, 1, 2]]
    end = run_session(rig, 0, 0, 3 * LAP, 0, orders, log)
    middle = [s for s in log if s.chunk == 12 and s.worker == 1]
    first_lap = [s for s in log if s.chunk < LAP]
    for s in middle + first_lap:
        assert _send(rig, s) == [], s
    assert drops(rig.sw) == {DROP_STALE_CHUNK: len(middle) + len(first_lap)}
    run_session(rig, 1, end, 2 * LAP, 0, orders, log)


def test_a_session_restarting_at_chunk_zero_in_the_same_epoch_is_dropped() -> None:
    """Why a manifest-path session continues the chunk sequence (hostagent/chunk_state.py): chunk 0
    of a second session in the same epoch is older than the cells' chunks, so it is stale."""
    rig = make_rig()
    log: list[Sent] = []
    run_session(rig, 0, 0, 2 * LAP, 0, [[0, 1, 2]], log)       # chunk 8 now holds chunk 0's cell
    assert rig.send(0, [1, 2, 3, 4], chunk=0, epoch=0) == []
    assert drops(rig.sw) == {DROP_STALE_CHUNK: 1}

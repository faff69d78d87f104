"""Epochs (p4src/README.md, "Epochs"): only the job's current epoch reaches the registers, and a
new epoch is the first writer of every (slot, set) cell, so whatever an abandoned session left
mid-lap cannot change a later session's sums."""

from __future__ import annotations

from dhcwire.p4names import DROP_STALE_EPOCH
from tests.p4src.dhcnet import drops, job_counts, set_epoch
from tests.p4src.test_aggregation import SUM_LEVEL, Rig, make_rig


def round_(rig: Rig, chunk: int, values: list[int], epoch: int) -> list[int]:
    """Every worker sends ``chunk``; the completing RESULT's lanes (one worker's copy)."""
    out = []
    for w, v in enumerate(values):
        out = rig.send(w, [v, v + 1, v + 2, v + 3], chunk=chunk, epoch=epoch)
    got = rig.parse(out)
    assert sorted(got) == [1, 2, 3], f"chunk {chunk}: no RESULT to all three workers"
    assert {p.header["epoch"] for p in got.values()} == {epoch}
    return got[1].lanes


def test_frames_of_another_epoch_are_dropped_and_counted() -> None:
    rig = make_rig()
    assert rig.send(0, [1, 2, 3, 4], epoch=1) == []
    assert drops(rig.sw) == {DROP_STALE_EPOCH: 1}
    assert job_counts(rig.sw, 2)["contributions"] == 0
    assert round_(rig, 0, [1, 10, 100], epoch=0) == [111, 114, 117, 120]


def test_new_epoch_after_an_abandoned_session_sums_exactly() -> None:
    """Session 0 dies mid-lap: slots hold partial sums, bitmaps bits and counts; a stray frame
    of session 0 arrives after the reset.  Session 1 starts again at chunk 0 and every sum is
    exact, also for the set-1 chunks and for a second lap of the window."""
    rig = make_rig()
    window = rig.agg.window
    for chunk in range(window + 2):                  # both sets partly filled, two workers only
        rig.send(0, [7] * 4, chunk=chunk, epoch=0)
        rig.send(1, [9] * 4, chunk=chunk, epoch=0)
    set_epoch(rig.sw, rig.agg.job, 1, old=0)
    assert rig.send(2, [5] * 4, chunk=1, epoch=0) == []          # stray frame of the old session
    assert drops(rig.sw) == {DROP_STALE_EPOCH: 1}
    for chunk in range(2 * window + 3):
        base = 1000 * (chunk + 1)
        assert round_(rig, chunk, [base, base + 10, base + 100], epoch=1) == [
            3 * base + 110 + 3 * i for i in range(4)], f"chunk {chunk}"


def test_epoch_wraps_and_reuses_a_value_safely() -> None:
    """Epoch 255 -> 0: the cells hold 255's data, so 0 is again a first writer."""
    rig = make_rig()
    set_epoch(rig.sw, rig.agg.job, 255, old=0)
    rig.send(0, [1] * 4, chunk=0, epoch=255)                    # abandoned after one contribution
    set_epoch(rig.sw, rig.agg.job, 0, old=255)
    assert round_(rig, 0, [2, 20, 200], epoch=0) == [222, 225, 228, 231]


def test_duplicate_within_an_epoch_is_still_a_duplicate() -> None:
    rig = make_rig()
    set_epoch(rig.sw, rig.agg.job, 4, old=0)
    rig.send(0, [1] * 4, chunk=0, epoch=4)
    rig.send(0, [50] * 4, chunk=0, epoch=4)                      # retransmission: not added
    rig.send(1, [2] * 4, chunk=0, epoch=4)
    got = rig.parse(rig.send(2, [3] * 4, chunk=0, epoch=4, level=SUM_LEVEL))
    assert got[1].lanes == [6] * 4
    assert job_counts(rig.sw, 2) == {"contributions": 3, "completions": 1, "duplicates": 1, "results": 1}

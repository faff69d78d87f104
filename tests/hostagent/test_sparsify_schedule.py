"""The dense warm-up before top-k: which configuration and codec each training step uses."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from bench.train.train_worker import apply_schedule  # noqa: E402
from hostagent.torch_hook import DHCHookState  # noqa: E402
from hostagent.torch_sparsify import SparsifyConfig, WarmupSchedule  # noqa: E402

TOPK = SparsifyConfig("topk", ratio=0.01)


def test_schedule_is_dense_for_the_warmup_steps_then_topk():
    s = WarmupSchedule(TOPK, dense_steps=3)
    assert [s.is_dense(i) for i in range(5)] == [True, True, True, False, False]
    assert [s.at(i).mode for i in range(5)] == [None, None, None, "topk", "topk"]
    assert s.at(3) is TOPK
    assert not WarmupSchedule(TOPK).is_dense(0)
    assert WarmupSchedule(SparsifyConfig()).is_dense(10)   # no top-k at all: dense throughout


@pytest.mark.parametrize("bad", [-1, 1.5, None])
def test_schedule_rejects_bad_step_counts(bad):
    with pytest.raises(ValueError, match="warm-up"):
        WarmupSchedule(TOPK, dense_steps=bad)


def test_apply_schedule_switches_the_hook_from_dense_codec_to_hgsketch():
    state = DHCHookState(n_workers=2, sparsify=TOPK)
    schedule = WarmupSchedule(TOPK, dense_steps=2)
    seen = []
    for step in range(4):
        apply_schedule(state, schedule, "dhc_topk", step)
        seen.append((state.codec, state.sparsify.mode))
    assert seen == [("dense", None), ("dense", None), ("hg", "topk"), ("hg", "topk")]
    dense = DHCHookState(n_workers=2, codec="dense", error_feedback=False)
    apply_schedule(dense, schedule, "dhc_dense", 5)       # dense INA stays dense
    assert (dense.codec, dense.sparsify.mode) == ("dense", None)
    apply_schedule(None, schedule, "ddp", 0)              # plain DDP has no hook state

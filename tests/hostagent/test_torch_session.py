"""The session key a torchrun attempt's ranks agree on, the warning about torchrun's shared store,
and the error feedback's checkpoint (what a restarted run needs to continue exactly)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hostagent.torch_session import (  # noqa: E402
    FRESH_STORE_ENV,
    agreed_session_key,
    restart_store_warning,
)
from hostagent.torch_sparsify import ErrorFeedback  # noqa: E402


def test_every_rank_gets_rank_0s_key_and_each_attempt_a_new_one():
    drawn: list[torch.Tensor] = []

    def broadcast(t: torch.Tensor) -> None:     # a group of one "wire": rank 0's value wins
        if not drawn:
            drawn.append(t.clone())
        t.copy_(drawn[0])

    keys = [agreed_session_key(rank, broadcast) for rank in range(4)]
    assert len(set(keys)) == 1 and len(keys[0]) == 16
    drawn.clear()
    assert agreed_session_key(0, broadcast) != keys[0]     # the next attempt: another key


@pytest.mark.parametrize("env, warns", [
    ({"TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_MAX_RESTARTS": "2"}, True),
    ({"TORCHELASTIC_USE_AGENT_STORE": "False", "TORCHELASTIC_MAX_RESTARTS": "2"}, False),
    ({"TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_MAX_RESTARTS": "0"}, False),
    ({}, False),
])
def test_restart_store_warning_only_when_restarts_would_reuse_the_store(monkeypatch, env, warns):
    for name in ("TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_MAX_RESTARTS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    why = restart_store_warning()
    assert (why is not None) == warns
    if warns:
        assert f"{FRESH_STORE_ENV}=1" in why


def test_error_feedback_checkpoint_round_trip_continues_bit_for_bit():
    rng = np.random.default_rng(5)
    keys, sizes = ("a", "b"), (3, 5)

    def step(ef: ErrorFeedback, g: np.ndarray) -> np.ndarray:
        c = ef.compensate(g, keys, sizes)
        sent = np.where(np.abs(c) > 0.5, c, 0.0)
        ef.update(c, sent, 10, 4, keys, sizes)
        return c

    grads = [rng.normal(size=8).astype(np.float32) for _ in range(3)]
    ref = ErrorFeedback()
    for g in grads[:2]:
        step(ref, g)
    before = ref.residual("a").copy()
    ref.state_dict()["a"][0] += 1.0            # a copy: changing it changes nothing in ref
    assert np.array_equal(ref.residual("a"), before)
    restored = ErrorFeedback()
    restored.load_state_dict(ref.state_dict())
    assert np.array_equal(step(ref, grads[2]), step(restored, grads[2]))
    assert all(np.array_equal(ref.residual(k), restored.residual(k)) for k in keys)

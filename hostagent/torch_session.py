"""The job-service session key that the ranks of one torchrun attempt agree on.

The job service starts a new session (and ends the old one at once) when a rank joins under a
new key, so a restarted group must use one key on every rank, new for each attempt.
``TORCHELASTIC_RESTART_COUNT`` cannot be that key: each node's torchrun agent counts only the
failures of its own workers, so after one node's worker dies and torchrun restarts every
node's workers, that node's ranks see 1 and all others 0 (pytorch/pytorch#135712).  Rank 0
draws a random key and broadcasts it over the group instead.

The same issue breaks gloo itself after a restart when torchrun's agent shares its TCPStore
with the workers (the default since torch 2.4): the store outlives the attempt, and the new
attempt's gloo groups read the dead processes' addresses from it ("Connection refused").  With
``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1`` every attempt gets a fresh store;
:func:`restart_store_warning` says so when a restartable run lacks it.
"""

import os
import secrets
import warnings
from collections.abc import Callable

import torch

#: The environment variable that gives each torchrun attempt a fresh TCPStore.
FRESH_STORE_ENV = "TORCH_DISABLE_SHARE_RDZV_TCP_STORE"


def agreed_session_key(rank: int, broadcast_from_0: Callable[[torch.Tensor], None]) -> str:
    """A random key drawn by rank 0 and broadcast to every rank (``broadcast_from_0`` broadcasts
    a tensor in place from the group's rank 0)."""
    key = torch.tensor([secrets.randbits(62) if rank == 0 else 0], dtype=torch.int64)
    broadcast_from_0(key)
    return f"{int(key.item()):016x}"


def restart_store_warning() -> str | None:
    """Why torchrun's restarts will fail to reconnect gloo here, or None if they can."""
    shared = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
    try:
        restarts = int(os.environ.get("TORCHELASTIC_MAX_RESTARTS", "0"))
    except ValueError:
        restarts = 0
    if not (shared and restarts > 0):
        return None
    return (f"torchrun shares its TCPStore with the workers ({FRESH_STORE_ENV} is not 1): after a "
            "restart, gloo groups read the previous attempt's addresses from it and fail to connect "
            f"(pytorch/pytorch#135712); launch torchrun with {FRESH_STORE_ENV}=1 so --max-restarts works")


def warn_if_restarts_cannot_reconnect() -> None:
    why = restart_store_warning()
    if why is not None:
        warnings.warn(why, RuntimeWarning, stacklevel=3)

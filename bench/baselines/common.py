"""What every baseline returns, and the small helpers several of them share.

Transport model used for every codec (so bytes are comparable): one aggregation hop (an in-network
switch or a parameter server) between the workers, payload bytes only (packet headers excluded
everywhere).  ``bytes_up`` is what one worker sends, ``bytes_down`` what it receives back;
``bytes_per_worker = max(up, down)`` because a full-duplex link is bound by its busier direction.
A codec that cannot be aggregated in the network (top-k) must deliver every other worker's
message, so its ``bytes_down`` grows with N.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dhc import quantize as qz


@dataclass
class CodecRun:
    """Result of one simulated allreduce by one codec over N workers' tensors."""

    codec: str
    sum: np.ndarray            # float64: the sum every worker decodes (its full-precision output)
    quantized_sum: np.ndarray  # float64: exact sum of what the workers actually encoded
    bytes_up: int
    bytes_down: int
    encode_seconds: float      # worker 0
    decode_seconds: float      # worker 0
    lossless_claim: bool       # does the design promise sum == quantized_sum exactly?
    notes: dict = field(default_factory=dict)

    @property
    def bytes_per_worker(self) -> int:
        return max(self.bytes_up, self.bytes_down)


def check_tensors(tensors: Sequence[object]) -> list[np.ndarray]:
    """Flat float32 copies of the workers' tensors; all must have the same size."""
    if len(tensors) == 0:
        raise ValueError("a baseline needs at least one worker tensor")
    arrs = [np.asarray(t, dtype=np.float32).reshape(-1) for t in tensors]
    d = arrs[0].size
    if d == 0:
        raise ValueError("tensors are empty")
    for i, a in enumerate(arrs):
        if a.size != d:
            raise ValueError(f"worker {i} has {a.size} elements, worker 0 has {d}")
        if not np.isfinite(a).all():
            raise ValueError(f"worker {i} tensor contains NaN/Inf")
    return arrs


def exact_sum(tensors: Sequence[np.ndarray]) -> np.ndarray:
    """float64 sum of the inputs (exact for up to 2**29 float32 addends of similar magnitude;
    the reference every error is measured against)."""
    return np.sum(np.stack([t.astype(np.float64) for t in tensors]), axis=0)


def global_scale_exponent(tensors: Sequence[np.ndarray]) -> int:
    """The power-of-two scale exponent DHC uses (max |x| over all workers and the worker count),
    so every int32 quantizing baseline gets the same precision and overflow guarantee."""
    exps = [qz.max_exponent(t) for t in tensors]
    known = [e for e in exps if e is not None]
    return qz.scale_exponent(max(known) if known else None, len(tensors))


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def bitmap_bytes(d: int) -> int:
    """A d-bit bitmap rounded up to whole 32-bit lanes."""
    return 4 * -(-d // 32)

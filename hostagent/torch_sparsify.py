"""Gradient sparsification with error feedback, for the DDP hook (numpy only, no torch).

Per bucket the hook forms the *compensated* gradient ``c = g + r`` (``r``: what earlier steps
did not deliver), keeps the top-k or above-threshold entries of ``c`` and hands them to the
codec.  After the round it knows the global scale ``s`` and sets ``r = c - q/s`` where
``q = rint(sparse * s)`` is exactly what this worker contributed to the sum: the residual holds
both the dropped entries and the quantization error, so over many steps every gradient unit is
eventually applied (error feedback, Seide et al. 2014; Karimireddy et al. 2019).

A short dense warm-up (``WarmupSchedule``) sends every entry for the first few steps, while the
weights move fastest and top-k's residuals would otherwise pile up (as DGC's warm-up does,
Lin et al. 2018); the hook then aggregates those steps with the dense codec.

Residuals are stored per parameter, not per bucket: DDP rebuilds its buckets after the first
iteration (a different parameter order, possibly different bucket boundaries), and a per-bucket
residual would be misaligned after the rebuild.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from dhc import quantize as qz

MODES = (None, "topk", "threshold")


@dataclass(frozen=True)
class SparsifyConfig:
    """Which entries of a bucket's compensated gradient are sent.

    ``mode=None``: all (dense input to the codec); ``"topk"``: the ``ceil(ratio * d)`` entries of
    largest magnitude (at least one); ``"threshold"``: entries with ``|c| >= threshold``."""

    mode: str | None = None
    ratio: float = 0.01
    threshold: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"sparsify mode must be one of {MODES}, got {self.mode!r}")
        if self.mode == "topk" and not 0.0 < self.ratio <= 1.0:
            raise ValueError(f"top-k ratio must be in (0, 1], got {self.ratio!r}")
        if self.mode == "threshold" and not (self.threshold >= 0.0 and math.isfinite(self.threshold)):
            raise ValueError(f"threshold must be a finite number >= 0, got {self.threshold!r}")

    def keep_count(self, d: int) -> int:
        """k for a bucket of d elements (top-k mode)."""
        return min(d, max(1, math.ceil(self.ratio * d)))


@dataclass(frozen=True)
class WarmupSchedule:
    """``dense_steps`` steps that send every entry, then ``sparse`` for the rest of training."""

    sparse: SparsifyConfig
    dense_steps: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.dense_steps, int) or self.dense_steps < 0:
            raise ValueError(f"dense warm-up steps must be an int >= 0, got {self.dense_steps!r}")

    def is_dense(self, step: int) -> bool:
        """True while step ``step`` (counted from 0) is still in the warm-up."""
        return step < self.dense_steps or self.sparse.mode is None

    def at(self, step: int) -> SparsifyConfig:
        """The configuration in effect at step ``step``."""
        return SparsifyConfig() if step < self.dense_steps else self.sparse


def sparsify(values: np.ndarray, cfg: SparsifyConfig) -> np.ndarray:
    """A copy of 1-D ``values`` with the unselected entries set to zero."""
    if values.ndim != 1:
        raise ValueError(f"sparsify expects a 1-D array, got shape {values.shape}")
    if cfg.mode is None:
        return values.copy()
    out = np.zeros_like(values)
    mag = np.abs(values)
    if cfg.mode == "topk":
        k = cfg.keep_count(values.size)
        keep = np.argpartition(mag, values.size - k)[values.size - k:] if k < values.size \
            else np.arange(values.size)
    else:
        keep = np.flatnonzero(mag >= cfg.threshold)
    out[keep] = values[keep]
    return out


class ErrorFeedback:
    """Per-parameter residuals r (float64), keyed by any hashable parameter key."""

    def __init__(self) -> None:
        self._residual: dict[Hashable, np.ndarray] = {}

    def compensate(self, grad: np.ndarray, keys: Sequence[Hashable],
                   sizes: Sequence[int]) -> np.ndarray:
        """float64 ``grad + r`` for a bucket laid out as the concatenation of ``keys``."""
        if sum(sizes) != grad.size:
            raise ValueError(f"bucket has {grad.size} elements but its parameters hold {sum(sizes)}")
        out = grad.astype(np.float64, copy=True)
        offset = 0
        for key, n in zip(keys, sizes, strict=True):
            r = self._residual.get(key)
            if r is not None:
                if r.size != n:
                    raise ValueError(f"parameter {key!r} changed size from {r.size} to {n}")
                out[offset:offset + n] += r
            offset += n
        return out

    def update(self, compensated: np.ndarray, sent: np.ndarray, scale_exponent: int,
               n_workers: int, keys: Sequence[Hashable], sizes: Sequence[int]) -> np.ndarray:
        """Store ``r = c - q/s`` with q the quantized values this worker contributed; returns q
        at the nonzeros of ``sent`` (q is 0 elsewhere)."""
        # q is zero wherever sent is, and c - 0.0 == c bit for bit (-0.0 included): only the
        # sent entries need quantizing, so a top-k bucket costs O(k) here plus one copy
        nz = np.flatnonzero(sent)
        q = qz.quantize(sent[nz], scale_exponent, n_workers)
        residual = compensated.copy()
        residual[nz] = compensated[nz] - np.ldexp(q.astype(np.float64), -scale_exponent)
        offset = 0
        for key, n in zip(keys, sizes, strict=True):
            self._residual[key] = residual[offset:offset + n].copy()
            offset += n
        return q

    def residual(self, key: Hashable) -> np.ndarray | None:
        return self._residual.get(key)

    def clear(self) -> None:
        self._residual.clear()

    def state_dict(self) -> dict[Hashable, np.ndarray]:
        """Every residual (copies): what a checkpoint keeps so a restarted run continues exactly."""
        return {k: r.copy() for k, r in self._residual.items()}

    def load_state_dict(self, state: dict[Hashable, np.ndarray]) -> None:
        self._residual = {k: np.asarray(r, dtype=np.float64).copy() for k, r in state.items()}

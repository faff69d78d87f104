"""``dhc.protocol.Reducer`` over ``torch.distributed``: what the switch does, done by collectives.

Used by the DDP hook when no in-network job is configured.  Every worker of the process group
calls :meth:`TorchDistReducer.reduce` with its round; the result must be bit-identical to the
switch's lane arithmetic, so:

* **SUM lanes** (uint32 add, wraps mod 2**32).  ``sum_wire="int32"`` (default, 4 bytes per
  lane like the switch): the lanes are reinterpreted as int32 and summed with ``ReduceOp.SUM``;
  two's complement addition mod 2**32 is the same bit operation as uint32 addition.  Gloo's int32
  sum is a plain C++ ``a + b`` that compiles to the wrapping machine add on every platform torch
  ships for; ``tests/hostagent/test_torch_hook.py`` checks wrapping sums across 4 processes
  against numpy's uint32 sum.  ``sum_wire="int64"`` sends 8 bytes per lane and never wraps
  (N < 2**31 workers): the exact integer sum, reduced mod 2**32 afterwards — a portable fallback.
* **OR lanes.**  ``or_mode="bor"``: ``ReduceOp.BOR`` (gloo implements it for integer tensors;
  exact).  ``or_mode="gather"``: ``all_gather`` of every worker's lanes, OR-ed locally (for
  backends without BOR, e.g. NCCL; N times the traffic).  ``"auto"``: BOR on gloo, else gather.

A round's segments are packed into at most two collectives (one per op), or, with
``collective="gather"``, into ONE ``all_gather`` of every worker's lanes, after which each rank
adds (uint32, wrapping) and ORs locally: the same bits, N times the bytes received, but one
collective per round instead of two, and a gather needs half the message steps of a ring
allreduce.  On loopback with small rounds the collective's latency, not its bytes, sets the
hook's cost (``"auto"``: gather while a round holds at most ``GATHER_MAX_LANES`` lanes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

try:
    import torch
    import torch.distributed as dist
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("hostagent.torch_reducer needs PyTorch: pip install 'dhc[torch]'") from exc

from dhc.protocol import Segment
from dhcwire.lanes import Op

OR_MODES = ("auto", "bor", "gather")
SUM_WIRES = ("int32", "int64")
COLLECTIVES = ("allreduce", "gather", "auto")
#: "auto" gathers rounds up to this many lanes (x world size received: 4 MB at 4 ranks)
GATHER_MAX_LANES = 1 << 18


@dataclass
class ReducerStats:
    """Collectives issued and lane bytes this worker put into them."""

    rounds: int = 0
    collectives: int = 0
    bytes_sent: int = 0


class TorchDistReducer:
    """Aggregates codec rounds with ``torch.distributed`` collectives on ``group``."""

    def __init__(self, group: object | None = None, or_mode: str = "auto",
                 sum_wire: str = "int32", collective: str = "allreduce") -> None:
        if collective not in COLLECTIVES:
            raise ValueError(f"collective must be one of {COLLECTIVES}, got {collective!r}")
        if or_mode not in OR_MODES:
            raise ValueError(f"or_mode must be one of {OR_MODES}, got {or_mode!r}")
        if sum_wire not in SUM_WIRES:
            raise ValueError(f"sum_wire must be one of {SUM_WIRES}, got {sum_wire!r}")
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("TorchDistReducer needs an initialised torch.distributed process "
                               "group (torch.distributed.init_process_group)")
        self.group = group
        self.world_size = dist.get_world_size(group)
        if or_mode == "auto":
            or_mode = "bor" if dist.get_backend(group) == "gloo" else "gather"
        self.or_mode = or_mode
        self.sum_wire = sum_wire
        self.collective = collective
        self.stats = ReducerStats()

    def reduce(self, segments: Sequence[Segment]) -> list[np.ndarray]:
        lanes = sum(s.lanes.size for s in segments)
        if self.collective == "gather" or (self.collective == "auto"
                                           and lanes <= GATHER_MAX_LANES):
            return self._gather_round(segments)
        out: list[np.ndarray | None] = [None] * len(segments)
        for op in (Op.SUM, Op.OR):
            idx = [i for i, s in enumerate(segments) if s.op is op]
            if not idx:
                continue
            flat = np.concatenate([segments[i].lanes for i in idx]) if len(idx) > 1 \
                else segments[idx[0]].lanes
            agg = self._sum(flat) if op is Op.SUM else self._or(flat)
            offset = 0
            for i in idx:
                n = segments[i].lanes.size
                out[i] = agg[offset:offset + n]
                offset += n
        self.stats.rounds += 1
        return [a for a in out if a is not None]

    def _gather_round(self, segments: Sequence[Segment]) -> list[np.ndarray]:
        """One all_gather of the whole round; SUM (wrapping) and OR computed locally."""
        flat = np.concatenate([s.lanes for s in segments]) if segments else \
            np.zeros(0, np.uint32)
        t = torch.from_numpy(flat.view(np.int32).copy())
        parts = [torch.empty_like(t) for _ in range(self.world_size)]
        self.stats.collectives += 1
        self.stats.bytes_sent += t.numel() * 4
        dist.all_gather(parts, t, group=self.group)
        stacked = np.stack([p.numpy().view(np.uint32) for p in parts])
        out = []
        offset = 0
        for seg in segments:
            block = stacked[:, offset:offset + seg.lanes.size]
            offset += seg.lanes.size
            out.append(np.sum(block, axis=0, dtype=np.uint32) if seg.op is Op.SUM
                       else np.bitwise_or.reduce(block, axis=0))
        self.stats.rounds += 1
        return out

    def _sum(self, lanes: np.ndarray) -> np.ndarray:
        self.stats.collectives += 1
        if self.sum_wire == "int32":
            t = torch.from_numpy(lanes.view(np.int32).copy())
            self.stats.bytes_sent += t.numel() * 4
            dist.all_reduce(t, op=dist.ReduceOp.SUM, group=self.group)
            return t.numpy().view(np.uint32)
        t = torch.from_numpy(lanes.astype(np.int64))
        self.stats.bytes_sent += t.numel() * 8
        dist.all_reduce(t, op=dist.ReduceOp.SUM, group=self.group)
        return (t.numpy() & 0xFFFFFFFF).astype(np.uint32)

    def _or(self, lanes: np.ndarray) -> np.ndarray:
        self.stats.collectives += 1
        t = torch.from_numpy(lanes.view(np.int32).copy())
        if self.or_mode == "bor":
            self.stats.bytes_sent += t.numel() * 4
            dist.all_reduce(t, op=dist.ReduceOp.BOR, group=self.group)
            return t.numpy().view(np.uint32)
        parts = [torch.empty_like(t) for _ in range(self.world_size)]
        self.stats.bytes_sent += t.numel() * 4 * self.world_size
        dist.all_gather(parts, t, group=self.group)
        stacked = np.stack([p.numpy().view(np.uint32) for p in parts])
        return np.bitwise_or.reduce(stacked, axis=0)

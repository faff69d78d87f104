"""Worker processes for the DDP hook tests: 4 gloo ranks on loopback, one spawn for all runs.

Each rank trains the same small MLP three times (plain DDP, DHC hook dense, DHC hook top-k),
runs reducer checks on lanes whose sums wrap, and pickles what the parent test needs to check
the hook independently: final parameters, the scale log, and (top-k run) every bucket record
with parameter names instead of object ids.
"""

from __future__ import annotations

import pickle
import socket
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from dhc.protocol import Segment
from dhcwire.lanes import Level
from hostagent.torch_hook import DHCHookState, dhc_hook
from hostagent.torch_reducer import TorchDistReducer
from hostagent.torch_sparsify import SparsifyConfig

WORLD = 4
STEPS = 50
LR = 0.05
BATCH = 16
TOPK_RATIO = 0.1
BUCKET_CAP_MB = 0.002     # ~2 KB: several buckets for the ~7 KB model
REDUCER_LANES = 1000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_model(dtype: torch.dtype) -> nn.Module:
    torch.manual_seed(1234)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                         nn.Linear(32, 4)).to(dtype)


def batch(rank: int, step: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Synthetic regression data: rank- and step-specific inputs, a fixed teacher map."""
    g = torch.Generator().manual_seed(10_000 * rank + step)
    x = torch.randn(BATCH, 16, generator=g, dtype=torch.float64)
    teacher = torch.Generator().manual_seed(99)
    w = torch.randn(16, 4, generator=teacher, dtype=torch.float64)
    y = torch.sin(x @ w)
    return x.to(dtype), y.to(dtype)


def train(rank: int, state: DHCHookState | None, dtype: torch.dtype) -> dict:
    model = make_model(dtype)
    ddp = DDP(model, bucket_cap_mb=BUCKET_CAP_MB)
    if state is not None:
        ddp.register_comm_hook(state, dhc_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    losses = []
    t0 = time.perf_counter()
    for step in range(STEPS):
        x, y = batch(rank, step, dtype)
        opt.zero_grad()
        loss = nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    seconds = time.perf_counter() - t0
    names = {id(p): n for n, p in model.named_parameters()}
    out = {"params": {n: p.detach().numpy().copy() for n, p in model.named_parameters()},
           "seconds": seconds, "losses": losses}
    if state is not None:
        buckets = {r.bucket for r in state.scales}
        out["scales"] = [asdict(r) for r in state.scales]
        out["buckets"] = len(buckets)
        out["lane_bytes"] = state.reducer.stats.bytes_sent
        out["dense_float32_bytes"] = STEPS * sum(p.numel() for p in model.parameters()) * 4
        out["records"] = [
            {**{k: v for k, v in asdict(r).items() if k != "param_keys"},
             "param_names": [names[k] for k in r.param_keys]}
            for r in state.records]
    return out


def reducer_lanes(rank: int) -> np.ndarray:
    """Full-range uint32 lanes: sums of 4 of them wrap mod 2**32 most of the time."""
    return np.random.default_rng(777 + rank).integers(0, 1 << 32, REDUCER_LANES, dtype=np.uint32)


def reducer_checks(rank: int) -> dict:
    lanes = reducer_lanes(rank)
    segs = [Segment(Level.VALUE_SKETCH, lanes), Segment(Level.ELEMENT_INDEX, lanes[::-1].copy()),
            Segment(Level.SCALE, lanes[:7].copy())]
    out = {}
    for or_mode in ("bor", "gather"):
        for sum_wire in ("int32", "int64"):
            red = TorchDistReducer(None, or_mode=or_mode, sum_wire=sum_wire)
            out[(or_mode, sum_wire)] = red.reduce(segs)
    return out


def rank_main(rank: int, port: int, out_dir: str) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD)
    torch.set_num_threads(1)
    try:
        result = {"reducer": reducer_checks(rank),
                  "plain": train(rank, None, torch.float64),
                  "dhc": train(rank, DHCHookState(error_feedback=False), torch.float64),
                  "plain32": train(rank, None, torch.float32),
                  "topk": train(rank, DHCHookState(sparsify=SparsifyConfig("topk", TOPK_RATIO),
                                                   record=True), torch.float32)}
    finally:
        dist.destroy_process_group()
    with open(Path(out_dir) / f"rank{rank}.pkl", "wb") as f:
        pickle.dump(result, f)


def run_all(out_dir: Path) -> list[dict]:
    """Spawn the WORLD ranks; returns their results in rank order."""
    mp.spawn(rank_main, args=(free_port(), str(out_dir)), nprocs=WORLD, join=True)
    results = []
    for r in range(WORLD):
        with open(out_dir / f"rank{r}.pkl", "rb") as f:
            results.append(pickle.load(f))
    return results

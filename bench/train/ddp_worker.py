"""One rank of ``dhc-bench ddp``: trains every (model, mode) pair with DDP on gloo and pickles
its per-step times, losses, test accuracy and a digest of its final parameters.

Data: scikit-learn's bundled handwritten digits (1797 8x8 images, no download), loaded once
by the parent (``bench/train/ddp.py``) and handed to the ranks, so that no rank pays for importing
scikit-learn; rank r trains on every WORLD-th training image.  Models: a small CNN (about 38k
parameters) and a wide MLP (about 5M parameters at width 2048).  Modes: plain DDP, the DHC
hook without sparsification, the DHC hook with top-k, trained side by side (one step of each
in turn).  Every rank runs the same sequence, so the collectives line up.
"""

from __future__ import annotations

import hashlib
import pickle
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from hostagent.torch_hook import DHCHookState, dhc_hook
from hostagent.torch_sparsify import SparsifyConfig


@dataclass(frozen=True)
class RunConfig:
    """What every rank runs (picklable: it crosses the spawn)."""

    world: int
    models: tuple[str, ...]          # "cnn", "large"
    modes: tuple[str, ...]           # "plain", "dhc", "dhc_topk"
    steps: dict                      # model -> steps
    warmup: int                      # steps left out of the per-step time
    batch: int
    lr: float
    topk: float
    large_width: int
    seed: int
    data: tuple = ()                 # (train x, train y, test x, test y), see digits_split


def digits_split(images: np.ndarray, target: np.ndarray, seed: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(train x, train y, test x, test y): pixels scaled to [0, 1], a fixed 80/20 split."""
    x = (np.asarray(images) / 16.0).astype(np.float32)
    y = np.asarray(target).astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    cut = int(0.8 * len(y))
    tr, te = order[:cut], order[cut:]
    return x[tr], y[tr], x[te], y[te]


def make_model(name: str, width: int) -> nn.Module:
    torch.manual_seed(1234)
    if name == "cnn":
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                             nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))
    if name == "large":
        return nn.Sequential(nn.Flatten(), nn.Linear(64, width), nn.ReLU(),
                             nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    raise ValueError(f"unknown model {name!r}")


def make_state(mode: str, topk: float) -> DHCHookState | None:
    if mode == "plain":
        return None
    # fused rounds: two round trips per step instead of three (the sketch is sized from the
    # summed nonzero counts; on loopback a round trip costs more than the extra lanes)
    if mode == "dhc":
        return DHCHookState(codec_params={"fuse_rounds": True})
    if mode == "dhc_topk":
        return DHCHookState(sparsify=SparsifyConfig("topk", ratio=topk),
                            codec_params={"fuse_rounds": True})
    raise ValueError(f"unknown mode {mode!r}")


def digest(model: nn.Module) -> str:
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()[:16]


@dataclass
class _Arm:
    """One mode's replica, optimizer and measurements during an interleaved run."""

    mode: str
    model: nn.Module
    ddp: DDP
    opt: torch.optim.Optimizer
    state: DHCHookState | None
    times: list
    losses: list


def train(rank: int, cfg: RunConfig, model_name: str) -> list[dict]:
    """Every mode on the same model, interleaved step by step (plain, dhc, dhc_topk, plain,
    ...): each step of each mode sees the same batch, and the load of a shared machine hits
    every mode alike, so their ratios are measured side by side."""
    xtr, ytr, xte, yte = cfg.data
    mine = np.arange(rank, len(ytr), cfg.world)
    arms = []
    for mode in cfg.modes:
        model = make_model(model_name, cfg.large_width)
        ddp = DDP(model)
        state = make_state(mode, cfg.topk)
        if state is not None:
            ddp.register_comm_hook(state, dhc_hook)
        opt = torch.optim.SGD(ddp.parameters(), lr=cfg.lr, momentum=0.9)
        arms.append(_Arm(mode, model, ddp, opt, state, [], []))
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng([cfg.seed, rank])
    dist.barrier()
    for _ in range(cfg.steps[model_name]):
        idx = rng.choice(mine, size=cfg.batch, replace=False)
        xb = torch.from_numpy(xtr[idx]).unsqueeze(1)
        yb = torch.from_numpy(ytr[idx])
        for arm in arms:
            t0 = time.perf_counter()
            arm.opt.zero_grad()
            loss = loss_fn(arm.ddp(xb), yb)
            loss.backward()
            arm.opt.step()
            arm.times.append(time.perf_counter() - t0)
            arm.losses.append(float(loss.item()))
    out = []
    for arm in arms:
        with torch.no_grad():
            pred = arm.model(torch.from_numpy(xte).unsqueeze(1)).argmax(dim=1).numpy()
        out.append({"model": model_name, "mode": arm.mode,
                    "parameters": sum(p.numel() for p in arm.model.parameters()),
                    "step_seconds": arm.times, "losses": arm.losses,
                    "test_accuracy": float(np.mean(pred == yte)), "digest": digest(arm.model),
                    "buckets": len({r.bucket for r in arm.state.scales}) if arm.state else None})
    return out


def rank_main(rank: int, port: int, cfg: RunConfig, out_dir: str) -> None:
    """Entry point of one spawned rank."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=cfg.world)
    try:
        runs = [run for m in cfg.models for run in train(rank, cfg, m)]
    finally:
        dist.destroy_process_group()
    with open(Path(out_dir) / f"rank{rank}.pkl", "wb") as f:
        pickle.dump({"rank": rank, "config": asdict(cfg), "runs": runs}, f)

"""One data-parallel training rank on a Mininet host (started by ``dhc-bench train``).

    python -m bench.train.train_worker --manifest M --host h1 --rank 0 --world 4 \
        --master 10.0.0.1:29500 --mode dhc_topk --steps 200 --out h1.json

Joins a gloo process group over the emulated network (its TCP crosses the P4 switches as plain
IPv4), wraps the model in DDP and trains on its shard of scikit-learn's digits.  ``--mode``:

* ``ddp``: plain DDP, gloo's dense ring AllReduce between the hosts;
* ``dhc_topk``: the DHC hook, top-k (``--ratio``) with error feedback, HG-Sketch summed by the
  switches of the job (endpoint from the manifest), after ``--dense-warmup`` dense steps (every
  quantized value summed by the switches, the dense codec);
* ``dhc_dense``: the DHC hook, every quantized value summed by the switches (SwitchML style);
* ``sketch_ring``: the DHC hook's top-k + HG-Sketch, but the lanes summed by gloo's AllReduce
  between the hosts (the torch.distributed reducer): compression without in-network aggregation
  (the same dense warm-up, dense codec over gloo).

Prints one JSON line: per-step seconds and loss, test accuracy every ``--eval-every`` steps (with
the wall-clock time it was reached), bytes the host's interface sent, and a digest of the final
parameters (every rank must hold the same model).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from bench.train.train import TRAIN_MODES
from bench.train.train_data import MODELS, accuracy, batch_for, digits_split, make_model, parameter_count
from hostagent.manifest import load_endpoint
from hostagent.torch_hook import DHCHookState, dhc_hook
from hostagent.torch_sparsify import SparsifyConfig, WarmupSchedule


def tx_bytes(ifname: str) -> int:
    """Bytes this namespace's interface ``ifname`` has sent (everything: TCP, UDP, ARP)."""
    return int(Path(f"/sys/class/net/{ifname}/statistics/tx_bytes").read_text())


def hook_state(mode: str, manifest: Path, host: str, ratio: float) -> DHCHookState | None:
    """The DHC hook's state for ``mode`` (None: plain DDP)."""
    topk = SparsifyConfig("topk", ratio=ratio)
    if mode == "ddp":
        return None
    if mode == "sketch_ring":
        return DHCHookState(sparsify=topk)
    endpoint, n_workers = load_endpoint(manifest, host)
    if mode == "dhc_topk":
        return DHCHookState(endpoint=endpoint, n_workers=n_workers, sparsify=topk)
    return DHCHookState(endpoint=endpoint, n_workers=n_workers, codec="dense",
                        error_feedback=False)


def params_digest(model: nn.Module) -> str:
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()[:16]


def apply_schedule(state: DHCHookState | None, schedule: WarmupSchedule, mode: str,
                   step: int) -> None:
    """Set what the hook sends in step ``step``: dense (dense codec) during the warm-up, top-k
    with HG-Sketch after it.  ``dhc_dense`` and plain DDP are dense throughout."""
    if state is None or mode == "dhc_dense":
        return
    state.sparsify = schedule.at(step)
    state.codec = "dense" if schedule.is_dense(step) else "hg"


def train(args: argparse.Namespace) -> dict:
    split = digits_split()
    model = make_model(args.model)
    ddp = DDP(model, bucket_cap_mb=args.bucket_mb)
    state = hook_state(args.mode, args.manifest, args.host, args.ratio)
    if state is not None:
        ddp.register_comm_hook(state, dhc_hook)
    schedule = WarmupSchedule(SparsifyConfig("topk", ratio=args.ratio), args.dense_warmup)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    step_seconds, losses, curve = [], [], []
    sent0 = tx_bytes(args.ifname)
    t_start = time.perf_counter()
    try:
        for step in range(args.steps):
            x, y = batch_for(split, args.rank, args.world, step, args.batch)
            apply_schedule(state, schedule, args.mode, step)
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = loss_fn(ddp(x), y)
            loss.backward()
            opt.step()
            step_seconds.append(time.perf_counter() - t0)
            losses.append(float(loss))
            if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
                curve.append({"step": step + 1, "seconds": sum(step_seconds),
                              "accuracy": accuracy(model, split)})
    finally:
        if state is not None:
            state.close()
    return {"mode": args.mode, "host": args.host, "rank": args.rank, "world": args.world,
            "model": args.model, "parameters": parameter_count(model), "steps": args.steps,
            "step_seconds": step_seconds, "losses": losses, "curve": curve,
            "wall_seconds": time.perf_counter() - t_start,
            "tx_bytes": tx_bytes(args.ifname) - sent0, "params_digest": params_digest(model),
            "final_accuracy": curve[-1]["accuracy"] if curve else None}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.train.train_worker",
                                description=__doc__.splitlines()[0])
    p.add_argument("--manifest", type=Path, required=True)
    p.add_argument("--host", required=True)
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--master", required=True, help="ADDR:PORT of rank 0's TCP store")
    p.add_argument("--ifname", required=True, help="this host's interface (gloo and tx bytes)")
    p.add_argument("--mode", choices=TRAIN_MODES, required=True)
    p.add_argument("--model", choices=MODELS, default="large")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=32, help="per-worker batch")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--ratio", type=float, default=0.01, help="top-k share of each bucket")
    p.add_argument("--dense-warmup", type=int, default=0,
                   help="first steps sent dense by the top-k modes (dense codec)")
    p.add_argument("--bucket-mb", type=float, default=25.0, help="DDP bucket size")
    p.add_argument("--eval-every", type=int, default=20)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    os.environ["GLOO_SOCKET_IFNAME"] = args.ifname
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{args.master}", rank=args.rank,
                            world_size=args.world)
    try:
        result = train(args)
    finally:
        dist.destroy_process_group()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

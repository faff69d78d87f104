"""``dhc-bench train-sim``: which sparsification keeps accuracy, without a network (one process).

    .venv/bin/dhc-bench train-sim --json [--steps 200] [--schemes ddp,topk,topk_warmup,dgc]

The accuracy side of ``dhc-bench train``, quickly: the same model, data, shards, learning rate
and batches (``bench.train.train_data``), and the N workers' gradients computed one after the other in
this process.  The sum of the workers' messages is what any exact aggregation returns (the
switch, gloo or the ring all deliver the exact sum), so only the float->int32 quantization of
the real runs is left out (its error is below ``N / 2**scale`` per element and carried by error
feedback).  Schemes:

* ``ddp``: the dense average, SGD with momentum 0.9 (plain DDP);
* ``topk``: each worker sends the top ``--ratio`` of its gradient plus residual (error feedback),
  SGD with momentum 0.9 on the average;
* ``topk_warmup``: ``topk`` after ``--dense-warmup`` dense steps (what ``dhc-bench train`` does);
* ``dgc``: momentum correction and momentum-factor masking of Deep Gradient Compression (Lin et
  al. 2018): each worker accumulates velocity u = 0.9 u + g and sends the top entries of the
  accumulated u, zeroing u and the residual where it sent; plain SGD on the average.
  ``dgc_warmup``: the same after the dense warm-up.

Reports test accuracy every ``--eval-every`` steps per scheme and the points each scheme is
behind ``ddp`` at the last step.
"""

from __future__ import annotations

import argparse
import math
import time

import torch
from torch import nn

from bench.train.train_data import MODELS, accuracy, batch_for, digits_split, make_model

SCHEMES = ("ddp", "topk", "topk_warmup", "dgc", "dgc_warmup")
MOMENTUM = 0.9


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schemes", default="ddp,topk,topk_warmup,dgc")
    parser.add_argument("--model", choices=MODELS, default="large")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32, help="per-worker batch")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--ratio", type=float, default=0.01, help="top-k share")
    parser.add_argument("--dense-warmup", type=int, default=5, help="dense steps of *_warmup")
    parser.add_argument("--eval-every", type=int, default=20)


def _topk(c: torch.Tensor, ratio: float) -> torch.Tensor:
    """Indices of the ceil(ratio * d) entries of largest magnitude."""
    k = min(c.numel(), max(1, math.ceil(ratio * c.numel())))
    return torch.topk(c.abs(), k, sorted=False).indices


class Worker:
    """One worker's sparsifier state: residual r (error feedback) and velocity u (DGC)."""

    def __init__(self, d: int) -> None:
        self.r, self.u = torch.zeros(d), torch.zeros(d)

    def message(self, g: torch.Tensor, scheme: str, ratio: float, dense: bool) -> torch.Tensor:
        """What this worker contributes to the sum in this step."""
        if scheme.startswith("dgc"):
            self.u = MOMENTUM * self.u + g
            c = self.r + self.u
        else:
            c = self.r + g
        if dense:
            self.r.zero_()
            if scheme.startswith("dgc"):
                self.u.zero_()
            return c
        idx = _topk(c, ratio)
        sent = torch.zeros_like(c)
        sent[idx] = c[idx]
        self.r = c - sent
        if scheme.startswith("dgc"):
            self.u[idx] = 0.0          # momentum-factor masking
        return sent


def train_scheme(scheme: str, args: argparse.Namespace, split) -> list[dict]:
    """Accuracy curve of one scheme."""
    model = make_model(args.model)
    params = list(model.parameters())
    d = sum(p.numel() for p in params)
    opt = torch.optim.SGD(params, lr=args.lr, momentum=0.0 if scheme.startswith("dgc") else MOMENTUM)
    workers = [Worker(d) for _ in range(args.workers)]
    loss_fn = nn.CrossEntropyLoss()
    curve = []
    for step in range(args.steps):
        total = torch.zeros(d)
        dense = scheme == "ddp" or (scheme.endswith("_warmup") and step < args.dense_warmup)
        for rank, w in enumerate(workers):
            x, y = batch_for(split, rank, args.workers, step, args.batch)
            model.zero_grad()
            loss_fn(model(x), y).backward()
            g = torch.cat([p.grad.reshape(-1) for p in params])
            total += g if scheme == "ddp" else w.message(g, scheme, args.ratio, dense)
        average, offset = total / args.workers, 0
        for p in params:
            p.grad = average[offset:offset + p.numel()].view_as(p).clone()
            offset += p.numel()
        opt.step()
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            curve.append({"step": step + 1, "accuracy": accuracy(model, split)})
    return curve


def run(args: argparse.Namespace) -> dict:
    schemes = [s.strip() for s in args.schemes.split(",") if s.strip()]
    if not schemes or any(s not in SCHEMES for s in schemes):
        raise SystemExit(f"dhc-bench train-sim: --schemes: choose from {', '.join(SCHEMES)}")
    if args.steps < 1 or args.workers < 1 or args.eval_every < 1 or not 0 < args.ratio <= 1:
        raise SystemExit("dhc-bench train-sim: --steps, --workers, --eval-every >= 1 and "
                         "--ratio in (0, 1] please")
    torch.set_num_threads(1)
    split = digits_split()
    out: dict[str, dict] = {}
    for scheme in schemes:
        t0 = time.perf_counter()
        curve = train_scheme(scheme, args, split)
        out[scheme] = {"curve": curve, "final_accuracy": curve[-1]["accuracy"],
                       "seconds": time.perf_counter() - t0}
    if "ddp" in out:
        for row in out.values():
            row["points_behind_ddp"] = 100 * (out["ddp"]["final_accuracy"] - row["final_accuracy"])
    return {"schemes": out, "config": {k: getattr(args, k) for k in (
        "model", "steps", "workers", "batch", "lr", "ratio", "dense_warmup")}}

"""One rank of a torchrun job on a Mininet host, joined through the job service.

Started by ``tests/service/test_service_mininet.py`` as ``torchrun --nnodes 4 ... torch_worker.py``
on every host, with ``DHC_CONTROLLER``/``DHC_TOKEN`` in the environment and nothing else of DHC:
``--mode backend`` trains the project's small CNN (``bench/train_data.py``) with
``init_process_group("dhc")`` (DDP, no comm hook); ``--mode hook`` with gloo and the DHC hook
with top-k.  Every step ends with a per-rank checkpoint, so a group that torchrun restarts
resumes from the last step every rank finished (agreed with an all_reduce MIN, which the ``dhc``
backend delegates to gloo).  ``--kill-rank R --kill-step S``: on the first attempt only, rank R
kills itself with SIGKILL once its agent has sent a few chunks of step S (mid-AllReduce).
Rank 0 saves the final parameters to ``OUT/final.pt``.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

import hostagent.torch_backend  # noqa: F401 - registers the "dhc" backend
from bench.train_data import batch_for, digits_split, make_model
from hostagent.torch_hook import DHCHookState, dhc_hook
from hostagent.torch_sparsify import SparsifyConfig

BATCH = 16
LR = 0.1


def _agent(pg, state):
    return state.agent if state is not None else getattr(pg, "agent", None)


def _kill_mid_allreduce(pg, state, chunks_more: int = 8) -> None:
    """SIGKILL this process once its agent has sent ``chunks_more`` more chunks."""
    def watch() -> None:
        start = None
        while True:
            agent = _agent(pg, state)
            if agent is not None:
                sent = agent.transport.stats.chunks
                start = sent if start is None else start
                if sent - start >= chunks_more:
                    os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(0.002)
    threading.Thread(target=watch, daemon=True).start()


def _resume(out: Path, rank: int, model: nn.Module) -> int:
    """Load the newest step every rank finished (0: start fresh)."""
    mine = [int(p.stem.split("-s")[1]) for p in out.glob(f"r{rank}-s*.pt")]
    step = torch.tensor([max(mine, default=0)], dtype=torch.int64)
    dist.all_reduce(step, op=dist.ReduceOp.MIN)
    k = int(step.item())
    if k:
        model.load_state_dict(torch.load(out / f"r{rank}-s{k}.pt"))
    return k


def _checkpoint(out: Path, rank: int, model: nn.Module, step: int) -> None:
    tmp = out / f".r{rank}-s{step}.tmp"
    torch.save(model.state_dict(), tmp)
    tmp.replace(out / f"r{rank}-s{step}.pt")
    old = out / f"r{rank}-s{step - 2}.pt"
    old.unlink(missing_ok=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["backend", "hook"], required=True)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--kill-rank", type=int, default=-1)
    p.add_argument("--kill-step", type=int, default=-1)
    args = p.parse_args()
    dist.init_process_group("dhc" if args.mode == "backend" else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    args.out.mkdir(parents=True, exist_ok=True)
    split = digits_split()
    model = make_model("small")
    done = _resume(args.out, rank, model)
    ddp = DDP(model)
    state = None
    if args.mode == "hook":
        state = DHCHookState(sparsify=SparsifyConfig("topk", ratio=0.01))
        ddp.register_comm_hook(state, dhc_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    first_attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") == "0"
    for step in range(done, args.steps):
        if first_attempt and rank == args.kill_rank and step == args.kill_step:
            _kill_mid_allreduce(dist.group.WORLD, state)
        x, y = batch_for(split, rank, world, step, BATCH)
        opt.zero_grad()
        loss_fn(ddp(x), y).backward()
        opt.step()
        _checkpoint(args.out, rank, model, step + 1)
    if rank == 0:
        torch.save({n: t.detach().clone() for n, t in model.state_dict().items()}, args.out / "final.pt")
    if state is not None:
        state.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""One rank of a torchrun job on a Mininet host, joined through the job service.

Started by ``tests/service/test_service_mininet.py`` as ``torchrun --nnodes 4 ... torch_worker.py``
on every host, with ``DHC_CONTROLLER``/``DHC_TOKEN`` in the environment and nothing else of DHC.
One launch trains two copies of the project's small CNN (``bench/train/train_data.py``) side by side,
each through its own process group and its own in-network job:

* ``backend``: ``init_process_group("dhc")`` and DDP with no comm hook (DDP's buckets are
  all-reduced through the switch; job ``$TORCHELASTIC_RUN_ID``);
* ``hook``: a gloo group and the DHC hook with top-k (job ``$TORCHELASTIC_RUN_ID-hook``).

The launch trains twice from the same initial weights: ``OUT/clean`` without faults, then (with
``--kill-rank R --kill-step S``) ``OUT/faulty``, where on the first attempt only rank R kills
itself with SIGKILL once the backend's agent has sent a few chunks of step S (mid-AllReduce).
Every step ends with a per-rank checkpoint (both models and the hook's error-feedback
residuals), so a group that torchrun restarts resumes from the last step every rank finished
(agreed with an all_reduce MIN, which the ``dhc`` backend delegates to gloo): the finished clean
run is skipped, the faulty one continues.  Rank 0 saves each run's final parameters to
``final-backend.pt`` and ``final-hook.pt`` in its directory.
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
from bench.train.train_data import batch_for, digits_split, make_model
from hostagent.torch_hook import DHCHookState, dhc_hook
from hostagent.torch_sparsify import ErrorFeedback, SparsifyConfig

BATCH = 16
LR = 0.1
MODES = ("backend", "hook")


def _kill_mid_allreduce(pg, chunks_more: int = 8) -> None:
    """SIGKILL this process once the backend's agent has sent ``chunks_more`` more chunks."""
    def watch() -> None:
        start = None
        while True:
            agent = getattr(pg, "agent", None)
            if agent is not None:
                sent = agent.transport.stats.chunks
                start = sent if start is None else start
                if sent - start >= chunks_more:
                    os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(0.002)
    threading.Thread(target=watch, daemon=True).start()


def _resume(out: Path, rank: int, models: dict[str, nn.Module], state: DHCHookState) -> int:
    """Load the newest step every rank finished (0: start fresh)."""
    mine = [int(p.stem.split("-s")[1]) for p in out.glob(f"r{rank}-s*.pt")]
    step = torch.tensor([max(mine, default=0)], dtype=torch.int64)
    dist.all_reduce(step, op=dist.ReduceOp.MIN)
    k = int(step.item())
    if k:
        saved = torch.load(out / f"r{rank}-s{k}.pt", weights_only=False)
        for mode, model in models.items():
            model.load_state_dict(saved[mode])
        # top-k's error feedback continues (the hook keys residuals by id(parameter))
        params = dict(models["hook"].named_parameters())
        state.feedback.load_state_dict({id(params[n]): r for n, r in saved["residuals"].items()})
        state.step = saved["hook_step"]
    return k


def _checkpoint(out: Path, rank: int, models: dict[str, nn.Module], state: DHCHookState, step: int) -> None:
    tmp = out / f".r{rank}-s{step}.tmp"
    residuals = state.feedback.state_dict()
    by_name = {n: residuals[id(p)] for n, p in models["hook"].named_parameters() if id(p) in residuals}
    torch.save({**{mode: m.state_dict() for mode, m in models.items()},
                "residuals": by_name, "hook_step": state.step}, tmp)
    tmp.replace(out / f"r{rank}-s{step}.pt")
    (out / f"r{rank}-s{step - 2}.pt").unlink(missing_ok=True)


def _train(out: Path, gloo, state: DHCHookState, steps: int, kill: tuple[int, int] | None) -> None:
    """One training run of both models from their initial weights (or from the newest step every
    rank finished, after a restart) through the two groups; rank 0 saves the final parameters."""
    rank, world = dist.get_rank(), dist.get_world_size()
    out.mkdir(parents=True, exist_ok=True)
    split = digits_split()
    models = {mode: make_model("small") for mode in MODES}
    state.feedback, state.step = ErrorFeedback(), 0
    done = _resume(out, rank, models, state)
    ddp = {"backend": DDP(models["backend"]), "hook": DDP(models["hook"], process_group=gloo)}
    ddp["hook"].register_comm_hook(state, dhc_hook)
    opts = {mode: torch.optim.SGD(ddp[mode].parameters(), lr=LR) for mode in MODES}
    loss_fn = nn.CrossEntropyLoss()
    for step in range(done, steps):
        if kill == (rank, step):
            _kill_mid_allreduce(dist.group.WORLD)
        x, y = batch_for(split, rank, world, step, BATCH)
        for mode in MODES:
            opts[mode].zero_grad()
            loss_fn(ddp[mode](x), y).backward()
            opts[mode].step()
        _checkpoint(out, rank, models, state, step + 1)
    if rank == 0:
        for mode, model in models.items():
            final = {n: t.detach().clone() for n, t in model.state_dict().items()}
            torch.save(final, out / f"final-{mode}.pt")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--kill-rank", type=int, default=-1)
    p.add_argument("--kill-step", type=int, default=-1)
    args = p.parse_args()
    dist.init_process_group("dhc")
    gloo = dist.new_group(backend="gloo")
    rank = dist.get_rank()
    args.out.mkdir(parents=True, exist_ok=True)
    first_attempt = not list(args.out.glob(f"attempt-r{rank}-*"))
    (args.out / f"attempt-r{rank}-{os.getpid()}").touch()
    state = DHCHookState(process_group=gloo, job=f"{os.environ['TORCHELASTIC_RUN_ID']}-hook",
                         sparsify=SparsifyConfig("topk", ratio=0.01))
    _train(args.out / "clean", gloo, state, args.steps, None)
    if args.kill_rank >= 0:
        kill = (args.kill_rank, args.kill_step) if first_attempt else None
        _train(args.out / "faulty", gloo, state, args.steps, kill)
    state.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

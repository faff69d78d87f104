"""One DDP rank on a Mininet host: gloo over the P4 switch, gradients aggregated in the switch.

Started by ``tests/e2e/test_ddp_mininet.py`` once per host, inside the host's network namespace.
The rank joins a gloo process group whose TCP traffic (store, DDP's parameter broadcast and
bucket rebuild) crosses the P4 switch as plain IPv4, then trains a small MLP wrapped in DDP once
per configuration (``--configs``), each time with the DHC hook on the job's in-network endpoint
(read from the deployment's manifest).  Every run ends with ``DHCHookState.close()``, which pads
the job's chunk stream so the next run starts cleanly at chunk 0.

It pickles what the test checks independently: final parameters, every bucket record (with
parameter names instead of object ids), the scale log and the transport's counters.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time
from dataclasses import asdict
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from hostagent.manifest import load_endpoint
from hostagent.torch_hook import DHCHookState, dhc_hook
from hostagent.torch_sparsify import SparsifyConfig

LR = 0.05
BATCH = 16
BUCKET_CAP_MB = 0.002     # ~2 KB: several buckets for the ~7 KB float32 model
#: name -> sparsification of the bucket before the codec (None: HG-Sketch of the dense bucket)
CONFIGS: dict[str, SparsifyConfig] = {
    "topk": SparsifyConfig("topk", ratio=0.1),
    "hg": SparsifyConfig(),
}


def make_model() -> nn.Module:
    """The same initial weights on every rank (DDP broadcasts rank 0's anyway)."""
    torch.manual_seed(1234)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                         nn.Linear(32, 4))


def batch(rank: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Synthetic regression: rank- and step-specific inputs, one fixed teacher map."""
    g = torch.Generator().manual_seed(10_000 * rank + step)
    x = torch.randn(BATCH, 16, generator=g)
    w = torch.randn(16, 4, generator=torch.Generator().manual_seed(99))
    return x, torch.sin(x @ w)


def train(rank: int, manifest: Path, host: str, cfg: SparsifyConfig, steps: int) -> dict:
    """``steps`` SGD steps of DDP with the DHC hook on the job's switch; what the test checks."""
    endpoint, n_workers = load_endpoint(manifest, host)
    model = make_model()
    ddp = DDP(model, bucket_cap_mb=BUCKET_CAP_MB)
    state = DHCHookState(endpoint=endpoint, n_workers=n_workers, sparsify=cfg, record=True)
    ddp.register_comm_hook(state, dhc_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    losses = []
    t0 = time.perf_counter()
    try:
        for step in range(steps):
            x, y = batch(rank, step)
            opt.zero_grad()
            loss = nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        seconds = time.perf_counter() - t0
        transport = state.reducer.transport     # NetworkReducer opened from endpoint=
        before_close = transport.stats.as_dict()
    finally:
        state.close()                           # pads the stream to a 2W boundary, closes
    names = {id(p): n for n, p in model.named_parameters()}
    return {
        "params": {n: p.detach().numpy().copy() for n, p in model.named_parameters()},
        "losses": losses,
        "seconds": seconds,
        "endpoint": asdict(endpoint),
        "n_workers": n_workers,
        "transport": before_close,
        "transport_closed": transport.stats.as_dict(),
        "scales": [asdict(r) for r in state.scales],
        "records": [{**{k: v for k, v in asdict(r).items() if k != "param_keys"},
                     "param_names": [names[k] for k in r.param_keys]} for r in state.records],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--manifest", type=Path, required=True)
    p.add_argument("--host", required=True, help="this host's name in the manifest")
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--master", required=True, help="ADDR:PORT of rank 0's TCP store")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--configs", nargs="+", choices=sorted(CONFIGS), default=list(CONFIGS))
    p.add_argument("--out", type=Path, required=True, help="pickle written here")
    args = p.parse_args()
    if "GLOO_SOCKET_IFNAME" not in os.environ:
        raise SystemExit("set GLOO_SOCKET_IFNAME to the host's interface (the hostname resolves "
                         "to the machine, not to the Mininet host)")
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    dist.init_process_group("gloo", init_method=f"tcp://{args.master}", rank=args.rank,
                            world_size=args.world)
    t1 = time.perf_counter()
    try:
        result: dict = {name: train(args.rank, args.manifest, args.host, CONFIGS[name], args.steps)
                        for name in args.configs}
        result["timing"] = {"init_process_group": t1 - t0, "training": time.perf_counter() - t1}
    finally:
        dist.destroy_process_group()
    with open(args.out, "wb") as f:
        pickle.dump(result, f)


if __name__ == "__main__":
    main()

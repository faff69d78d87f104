"""The ``dhc`` backend of ``torch.distributed``: ``all_reduce`` through the switches.

    import hostagent.torch_backend  # registers "dhc"
    dist.init_process_group("dhc")  # under torchrun, with DHC_CONTROLLER (and DHC_TOKEN) set

``all_reduce`` with SUM or AVG of a floating-point CPU tensor runs the codec's rounds through
the job's switches (the job service, ``dhc-ctl serve``, grants the endpoint on the first call;
the job name is ``TORCHELASTIC_RUN_ID`` or ``DHC_JOB``); every other collective, op or dtype is
delegated to a gloo process group on the same store.  DDP needs no comm hook: its buckets are
SUM all-reduces of float tensors.  The codec is ``DHC_CODEC`` (default ``dense``: DDP's
gradients are dense; ``hg`` for sparse ones; the DDP hook in ``torch_hook.py`` remains for
sparsification and error feedback).  Only the group of all ranks uses the network (one job per
process); sub-groups delegate everything to gloo.

The result is the codec's exact sum of the quantised inputs (``docs/codec.md``), not gloo's
float sum, so it is identical on every rank and from run to run.  torch is imported here only
(and in ``torch_hook.py``/``torch_reducer.py``).
"""

import atexit
import os
import threading

import numpy as np

try:
    import torch
    import torch.distributed as dist
    from torch._C._distributed_c10d import _create_work_from_future
    from torch.futures import Future
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("hostagent.torch_backend needs PyTorch: pip install 'dhc[torch]'") from exc

from hostagent.agent import Agent
from hostagent.service_client import config_from_env
from hostagent.torch_session import agreed_session_key, warn_if_restarts_cannot_reconnect

BACKEND = "dhc"
NETWORK_OPS = (dist.ReduceOp.SUM, dist.ReduceOp.AVG)
_network_taken = threading.Lock()


def _done(result: object):
    fut = Future()
    fut.set_result(result)
    return _create_work_from_future(fut)


class DHCProcessGroup(dist.ProcessGroup):
    """A process group whose float SUM/AVG all-reduces go through the network; gloo does the rest."""

    def __init__(self, store, rank: int, size: int, timeout, network: bool):
        super().__init__(rank, size)
        self._rank, self._size = rank, size
        # not keyed by TORCHELASTIC_RESTART_COUNT: it differs between nodes after a restart
        # (torch_session.py); a restart needs a fresh store per attempt, which torchrun gives
        # with TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1
        self.gloo = dist.ProcessGroupGloo(dist.PrefixStore("dhc-gloo", store), rank, size, timeout)
        self.network = network
        self.agent: Agent | None = None
        self.codec = os.environ.get("DHC_CODEC", "dense")
        self.network_allreduces = 0
        #: the job service's session key of this group, the same on every rank (torch_session.py)
        self.session_key = agreed_session_key(rank, self._broadcast_from_0) if network else ""
        if network:
            warn_if_restarts_cannot_reconnect()
        atexit.register(self.shutdown)

    def _broadcast_from_0(self, t: torch.Tensor) -> None:
        opts = dist.BroadcastOptions()
        opts.rootRank, opts.rootTensor = 0, 0
        self.gloo.broadcast([t], opts).wait()

    def getBackendName(self) -> str:  # noqa: N802 - torch's name
        return BACKEND

    def size(self) -> int:
        return self._size

    # ---------------------------------------------------------------- in the network
    def _agent(self) -> Agent:
        if self.agent is None:
            cfg = config_from_env(rank=self._rank, world_size=self._size, session_key=self.session_key)
            self.agent = Agent.join(cfg, codec=self.codec)
        return self.agent

    def _through_network(self, tensors: list, op) -> bool:
        op = getattr(op, "op", op)   # a ReduceOp object carries its RedOpType in .op
        return (self.network and any(op == o for o in NETWORK_OPS) and len(tensors) == 1
                and tensors[0].device.type == "cpu" and tensors[0].is_floating_point())

    def allreduce(self, tensors, opts=None):
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        if not self._through_network(tensors, op):
            return self.gloo.allreduce(tensors, opts) if opts is not None else self.gloo.allreduce(tensors)
        t = tensors[0]
        x = t.detach().reshape(-1).to(torch.float32).numpy()
        total, _ = self._agent().allreduce(np.ascontiguousarray(x))
        out = torch.from_numpy(np.asarray(total, dtype=np.float32))
        if getattr(op, "op", op) == dist.ReduceOp.AVG:
            out = out / self._size
        with torch.no_grad():
            t.copy_(out.view(t.shape).to(t.dtype))
        self.network_allreduces += 1
        return _done(tensors)

    def shutdown(self) -> None:
        """Leave the job's session (the closing padding is aggregated: every rank does this)."""
        agent, self.agent = self.agent, None
        if agent is not None:
            agent.close()

    # ---------------------------------------------------------------- delegated to gloo
    def allreduce_coalesced(self, tensors, opts=None):
        return self.gloo.allreduce_coalesced(tensors, opts) if opts else \
            self.gloo.allreduce_coalesced(tensors)

    def broadcast(self, tensors, opts=None):
        return self.gloo.broadcast(tensors, opts) if opts else self.gloo.broadcast(tensors)

    def allgather(self, outputs, inputs, opts=None):
        return self.gloo.allgather(outputs, inputs, opts) if opts else self.gloo.allgather(outputs, inputs)

    def _allgather_base(self, output, input, opts=None):  # noqa: A002 - torch's parameter name
        return self.gloo._allgather_base(output, input, opts) if opts else \
            self.gloo._allgather_base(output, input)

    def allgather_coalesced(self, outputs, inputs, opts=None):
        return self.gloo.allgather_coalesced(outputs, inputs, opts) if opts else \
            self.gloo.allgather_coalesced(outputs, inputs)

    def gather(self, outputs, inputs, opts=None):
        return self.gloo.gather(outputs, inputs, opts) if opts else self.gloo.gather(outputs, inputs)

    def scatter(self, outputs, inputs, opts=None):
        return self.gloo.scatter(outputs, inputs, opts) if opts else self.gloo.scatter(outputs, inputs)

    def reduce(self, tensors, opts=None):
        return self.gloo.reduce(tensors, opts) if opts else self.gloo.reduce(tensors)

    def reduce_scatter(self, outputs, inputs, opts=None):
        return self.gloo.reduce_scatter(outputs, inputs, opts) if opts else \
            self.gloo.reduce_scatter(outputs, inputs)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):  # noqa: A002
        args = (output, input, output_split_sizes, input_split_sizes)
        return self.gloo.alltoall_base(*args, opts) if opts else self.gloo.alltoall_base(*args)

    def barrier(self, opts=None):
        return self.gloo.barrier(opts) if opts else self.gloo.barrier()

    def send(self, tensors, dst: int, tag: int = 0):
        return self.gloo.send(tensors, dst, tag)

    def recv(self, tensors, src: int, tag: int = 0):
        return self.gloo.recv(tensors, src, tag)

    def recv_anysource(self, tensors, tag: int = 0):
        return self.gloo.recv_anysource(tensors, tag)


def _create(opts, _pg_options=None) -> DHCProcessGroup:
    """torch's creator: the group of all ranks (the first one) aggregates in the network."""
    everyone = opts.global_ranks_in_group in ([], list(range(opts.group_size))) and \
        (not dist.is_initialized() or opts.group_size == dist.get_world_size())
    network = everyone and _network_taken.acquire(blocking=False)
    return DHCProcessGroup(opts.store, opts.group_rank, opts.group_size, opts.timeout, network)


if BACKEND.upper() not in dist.Backend._plugins:
    dist.Backend.register_backend(BACKEND, _create, extended_api=True, devices=["cpu"])

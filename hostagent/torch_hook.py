"""PyTorch DDP communication hook that aggregates gradient buckets with HG-Sketch.

Usage (see docs/ddp.md)::

    from hostagent.torch_hook import DHCHookState, dhc_hook
    state = DHCHookState(sparsify=SparsifyConfig("topk", ratio=0.01))
    ddp_model.register_comm_hook(state, dhc_hook)

Per bucket: compensated gradient ``c = g + r`` (error feedback), optional top-k/threshold
sparsification, the codec's rounds (HG-Sketch by default) through a ``dhc.protocol.Reducer``,
decode, average.  The rounds of all buckets of a step run together once the last bucket is
handed over (one reduce call per round, not per round and bucket).  The reducer is, in order
of precedence: ``reducer=`` (any ready Reducer), ``agent=`` (an in-network job through a
``hostagent.agent.Agent``: its transport, codec and worker count; :meth:`DHCHookState.from_agent`),
``endpoint=`` (an in-network job: the state opens its own ``Agent``), ``controller=`` (or
``DHC_CONTROLLER`` in the environment: the job service grants the endpoint, see
``hostagent/service_client.py``; under torchrun nothing else is needed), else
:class:`TorchDistReducer` on the DDP process group (gloo collectives of the lanes).

Guarantee: the bucket's new content is ``float(sum_w q_w / s) / N`` where ``q_w`` are the
quantized values worker w sent and ``sum_w q_w`` is exact (the codec decodes the exact integer
sum or raises).  Each ``q_w`` is within ``0.5 / s`` of the sent value, so the average is within
``0.5 / s`` of the average of the sent values; ``s`` is recorded per step and bucket.

torch is imported here only; nothing else in the project imports this module.  No
``from __future__ import annotations``: DDP checks the hook's annotations as objects.
"""

import os
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

try:
    import torch
    import torch.distributed as dist
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("hostagent.torch_hook needs PyTorch: pip install 'dhc[torch]'") from exc

from dhc.codec import make_worker
from dhc.protocol import CodecWorker, Reducer, run_workers
from hostagent.agent import Agent
from hostagent.reducer import NetworkReducer
from hostagent.service_client import config_from_env
from hostagent.torch_reducer import TorchDistReducer
from hostagent.torch_session import agreed_session_key, warn_if_restarts_cannot_reconnect
from hostagent.torch_sparsify import ErrorFeedback, SparsifyConfig, sparsify

#: Most ScaleRecords a state keeps (oldest dropped first).
SCALE_LOG_LIMIT = 100_000


@dataclass(frozen=True)
class ScaleRecord:
    """The scale one bucket used in one step: q = rint(v * 2**scale_exponent)."""

    step: int
    bucket: int
    scale_exponent: int
    elements: int
    sent_nonzeros: int
    world_size: int

    @property
    def scale(self) -> float:
        return float(np.ldexp(1.0, self.scale_exponent))

    @property
    def average_error_bound(self) -> float:
        """Max |returned average - average of the sent values| per element: 0.5 / s."""
        return 0.5 / self.scale


@dataclass
class BucketRecord:
    """Everything one bucket of one step saw (kept only with ``record=True``; for tests)."""

    step: int
    bucket: int
    param_keys: tuple[Hashable, ...]
    param_sizes: tuple[int, ...]
    raw: np.ndarray           # the local gradient as DDP handed it over
    compensated: np.ndarray   # float64 raw + residual (== raw without error feedback)
    sent: np.ndarray          # float64, what went into the codec (sparsified compensated)
    scale_exponent: int
    sum_int: np.ndarray       # int64 exact sum of every worker's quantized values
    average: np.ndarray       # what the hook returned (bucket dtype)


@dataclass
class PendingBucket:
    """One bucket between its hook call and the end of its rounds (see :func:`dhc_hook`)."""

    bucket: int
    keys: tuple[Hashable, ...]
    sizes: tuple[int, ...]
    flat: np.ndarray           # the local gradient as handed over
    compensated: np.ndarray    # float64 flat + residual
    sent: np.ndarray           # what goes into the codec
    worker: CodecWorker
    n_workers: int


@dataclass
class DHCHookState:
    """State of the hook on one worker: configuration, reducer, residuals, scale log.

    Parameters
    ----------
    process_group : torch.distributed.ProcessGroup, optional
        The DDP group (default: the world), for ``TorchDistReducer`` and the worker count.
    reducer, agent, endpoint, controller
        At most one: a ready ``dhc.protocol.Reducer``; a ``hostagent.agent.Agent`` (see
        :meth:`from_agent`); a ``JobEndpoint`` (the state opens its own Agent); the job
        service's address (default ``$DHC_CONTROLLER``).  None of them: ``TorchDistReducer``.
    n_workers : int, optional
        Workers of the job (default: the process group's size).
    codec : {"hg", "dense"}
    codec_params : dict
    sparsify : SparsifyConfig
        Top-k / threshold sparsification of each compensated bucket (default: none).
    error_feedback : bool
        Keep what quantisation and sparsification left out and add it to the next step.
    or_mode, sum_wire, collective : str
        ``TorchDistReducer`` options.
    record : bool
        Keep a ``BucketRecord`` per bucket and step (tests).

    Raises
    ------
    TypeError
        For a ``sparsify`` that is not a ``SparsifyConfig`` or a reducer without ``reduce``.
    ValueError
        If more than one of ``reducer``, ``agent``, ``endpoint``, ``controller`` is given.

    Examples
    --------
    One bucket of a one-worker job, without DDP (``dhc_hook`` runs the same steps per bucket):

    >>> import numpy as np
    >>> from dhc.protocol import ThreadGroup
    >>> state = DHCHookState(reducer=ThreadGroup(1).reducer(0), n_workers=1, codec="dense")
    >>> state.allreduce_bucket(np.array([0.5, -1.0, 2.0], np.float32), ["w"], [3]).tolist()
    [0.5, -1.0, 2.0]
    >>> state.scales[-1].scale_exponent
    28
    """

    process_group: object | None = None
    reducer: Reducer | None = None
    endpoint: object | None = None        # hostagent.transport.JobEndpoint of an in-network job
    agent: Agent | None = None            # an in-network job's Agent (see from_agent)
    controller: str | None = None         # the job service's address (default $DHC_CONTROLLER)
    n_workers: int | None = None          # default: size of the process group
    codec: str = "hg"
    codec_params: dict = field(default_factory=dict)
    sparsify: SparsifyConfig = field(default_factory=SparsifyConfig)
    error_feedback: bool = True
    or_mode: str = "auto"                 # TorchDistReducer only
    sum_wire: str = "int32"               # TorchDistReducer only
    collective: str = "auto"              # TorchDistReducer only: "allreduce", "gather", "auto"
    record: bool = False
    step: int = 0
    scales: deque = field(default_factory=lambda: deque(maxlen=SCALE_LOG_LIMIT))
    records: list = field(default_factory=list)
    job: str | None = None                # controller=: the job's name (default $DHC_JOB, torchrun's run id)

    def __post_init__(self) -> None:
        if not isinstance(self.sparsify, SparsifyConfig):
            raise TypeError(f"sparsify must be a SparsifyConfig, got {type(self.sparsify).__name__}")
        if self.reducer is not None and not callable(getattr(self.reducer, "reduce", None)):
            raise TypeError(f"reducer {self.reducer!r} has no reduce(segments) method")
        given = [n for n in ("reducer", "agent", "endpoint", "controller") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(f"give either reducer=, agent=, endpoint= or controller=, not "
                             f"{' and '.join(given)}")
        if not given and os.environ.get("DHC_CONTROLLER"):
            self.controller = os.environ["DHC_CONTROLLER"]
        self.feedback = ErrorFeedback()
        #: buckets of the current step waiting for the last one (dhc_hook)
        self.pending: list[tuple[PendingBucket, torch.Tensor, torch.futures.Future]] = []
        #: the Agent this state opened itself (endpoint=): close() closes it
        self._own_agent: Agent | None = None
        #: controller=: the job service's session key, agreed by the group's ranks (torch_session.py)
        self._session_key: str | None = None
        if self.controller is not None and dist.is_initialized():
            self._session_key = self._agree_session_key()
            warn_if_restarts_cannot_reconnect()

    def _agree_session_key(self) -> str:
        pg = self.process_group
        src = dist.get_global_rank(pg, 0) if pg is not None else 0
        return agreed_session_key(dist.get_rank(pg), lambda t: dist.broadcast(t, src=src, group=pg))

    @classmethod
    def from_agent(cls, agent: Agent, **kwargs: object) -> "DHCHookState":
        """State that aggregates in the network through ``agent`` (codec, its parameters and
        the worker count are taken from the agent; the caller keeps and closes the agent)."""
        kwargs.setdefault("codec", agent.codec)
        kwargs.setdefault("codec_params", dict(agent.codec_params))
        kwargs.setdefault("n_workers", agent.n_workers)
        return cls(agent=agent, **kwargs)

    def world_size(self) -> int:
        if self.n_workers is not None:
            return self.n_workers
        if not dist.is_initialized():
            raise RuntimeError("n_workers not given and torch.distributed is not initialised")
        return dist.get_world_size(self.process_group)

    def get_reducer(self) -> Reducer:
        """The reducer, created on first use (collectives need an initialised group)."""
        if self.reducer is None:
            if self.agent is None and self.controller is not None:
                # the job service grants the endpoint; torchrun's RANK/WORLD_SIZE/run id name us
                if self._session_key is None and dist.is_initialized():
                    self._session_key = self._agree_session_key()
                cfg = config_from_env(self.controller, world_size=self.n_workers, job=self.job,
                                      session_key=self._session_key)
                self._own_agent = self.agent = Agent.join(cfg, self.codec, codec_params=self.codec_params)
                self.n_workers = self.agent.n_workers
            if self.agent is None and self.endpoint is not None:
                self._own_agent = self.agent = Agent(self.endpoint, self.world_size(),
                                                     self.codec, codec_params=self.codec_params)
            if self.agent is not None:
                self.reducer = NetworkReducer(self.agent.transport)
            else:
                reducer = TorchDistReducer(self.process_group, self.or_mode, self.sum_wire,
                                           self.collective)
                if self.n_workers is not None and self.n_workers != reducer.world_size:
                    # the scale's overflow bound is computed for n_workers: a larger group could wrap
                    raise ValueError(f"n_workers={self.n_workers} but the process group has "
                                     f"{reducer.world_size} ranks")
                self.reducer = reducer
        return self.reducer

    def close(self, finish: bool = True) -> None:
        """Close the Agent this state opened itself (``endpoint=``) with ``Agent.close``:
        unless ``finish`` is False or a bucket failed, it first pads the job's stream to a
        2W-chunk boundary, so the next session of the job starts cleanly at chunk 0
        (p4src/README.md).  The padding is aggregated, so every worker of the job must close
        the same way.  An agent passed in (``from_agent``) is its owner's to close."""
        agent, self._own_agent = self._own_agent, None
        if agent is not None:
            agent.close(finish)

    def prepare_bucket(self, grad: np.ndarray, param_keys: Sequence[Hashable],
                       param_sizes: Sequence[int], bucket: int = 0) -> PendingBucket:
        """Error feedback, sparsification and the codec worker of one bucket (no I/O)."""
        n = self.world_size()
        keys, sizes = tuple(param_keys), tuple(int(s) for s in param_sizes)
        flat = np.asarray(grad).reshape(-1)
        if self.error_feedback:
            compensated = self.feedback.compensate(flat, keys, sizes)
        else:
            if sum(sizes) != flat.size:
                raise ValueError(f"bucket has {flat.size} elements but its parameters hold "
                                 f"{sum(sizes)}")
            compensated = flat.astype(np.float64)
        sent = sparsify(compensated, self.sparsify)
        worker = make_worker(sent, n, self.codec, **self.codec_params)
        return PendingBucket(bucket, keys, sizes, flat, compensated, sent, worker, n)

    def run_rounds(self, buckets: Sequence[PendingBucket]) -> None:
        """The codec rounds of ``buckets`` together: one reduce call per round for all of
        them (every worker of the job must pass the same buckets in the same order)."""
        try:
            run_workers([p.worker for p in buckets], self.get_reducer())
        except BaseException:
            if self.agent is not None:   # no peer would complete the close padding; the service
                self.agent.fail("a bucket's AllReduce failed")   # moves the job to a new epoch
            raise

    def finish_bucket(self, p: PendingBucket) -> np.ndarray:
        """Residual update, scale log, record; returns the averaged bucket (float64, 1-D)."""
        n, worker = p.n_workers, p.worker
        t = worker.scale_exponent
        if self.error_feedback:
            self.feedback.update(p.compensated, p.sent, t, n, p.keys, p.sizes)
        support = getattr(worker, "support", None)
        if self.record or support is None:
            sum_int = np.asarray(worker.result_int()).reshape(-1)
            average = np.ldexp(sum_int.astype(np.float64), -t) / n
        else:
            # the same numbers from the sparse sum (0.0 elsewhere either way): no dense int64
            idx, values = support()
            average = np.zeros(p.flat.size)
            average[idx] = np.ldexp(values.astype(np.float64), -t) / n
        self.scales.append(ScaleRecord(self.step, p.bucket, t, int(p.flat.size),
                                       int(np.count_nonzero(p.sent)), n))
        if self.record:
            self.records.append(BucketRecord(
                self.step, p.bucket, p.keys, p.sizes, p.flat.copy(), p.compensated, p.sent, t,
                sum_int.copy(), average.astype(p.flat.dtype)))
        return average

    def allreduce_bucket(self, grad: np.ndarray, param_keys: Sequence[Hashable],
                         param_sizes: Sequence[int], bucket: int = 0) -> np.ndarray:
        """The averaged bucket (float64, 1-D) for this worker's flat gradient ``grad``, on its
        own (one reduce call per round for this bucket alone).

        Every worker of the job must call this with the same layout in the same order."""
        p = self.prepare_bucket(grad, param_keys, param_sizes, bucket)
        self.run_rounds([p])
        return self.finish_bucket(p)

    def flush(self) -> None:
        """Run the rounds of every pending bucket together, write each average into its
        bucket buffer and complete its future.  On an error every pending future gets it."""
        pending, self.pending = self.pending, []
        try:
            self.run_rounds([p for p, _, _ in pending])
            for p, buf, fut in pending:
                average = self.finish_bucket(p)
                buf.copy_(torch.from_numpy(average).view(buf.shape).to(buf.dtype))
                fut.set_result(buf)
        except BaseException as exc:
            for _, _, fut in pending:
                if not fut.done():
                    fut.set_exception(exc)
            raise
        finally:
            self.step += 1


def dhc_hook(state: DHCHookState, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """``DistributedDataParallel.register_comm_hook`` hook: HG-Sketch allreduce of the buckets.

    A bucket's error feedback, sparsification and codec worker are prepared when DDP hands
    it over, and its future is returned pending.  When the last bucket of the step arrives
    (DDP launches buckets in index order on every rank), the rounds of all buckets run
    together, one reduce call per round (blocking collectives or the network transport), and
    every future completes with its averaged bucket (written into the bucket buffer).

    Parameters
    ----------
    state : DHCHookState
        This worker's hook state (reducer, residuals, scale log).
    bucket : torch.distributed.GradBucket
        The gradient bucket DDP hands over.

    Returns
    -------
    torch.futures.Future
        Completes with the bucket buffer holding the average over the workers, once the step's
        last bucket has arrived and every bucket's rounds have run.

    Raises
    ------
    CodecError, TransportTimeout
        From preparing the bucket or running the rounds; every pending future of the step gets
        the error too.

    Examples
    --------
    DDP in one process (a group of one worker); the average of one worker is its gradient,
    through the codec's quantisation:

    >>> import torch.distributed as dist
    >>> from dhc.protocol import ThreadGroup
    >>> dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    >>> model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 1, bias=False))
    >>> state = DHCHookState(reducer=ThreadGroup(1).reducer(0), codec="dense")
    >>> model.register_comm_hook(state, dhc_hook)
    >>> model(torch.tensor([[0.5, -1.0, 2.0]])).sum().backward()
    >>> model.module.weight.grad.tolist(), state.step
    ([[0.5, -1.0, 2.0]], 1)
    >>> dist.destroy_process_group()
    """
    buf = bucket.buffer()
    params = bucket.parameters()
    keys = [id(p) for p in params]
    sizes = [p.numel() for p in params]
    # numpy has no bfloat16: such buckets go through the codec as float32 (exactly representable)
    host_dtype = torch.float32 if buf.dtype == torch.bfloat16 else buf.dtype
    grad = buf.detach().to("cpu", host_dtype).numpy()
    fut: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    try:
        pending = state.prepare_bucket(grad, keys, sizes, bucket.index())
    except BaseException as exc:
        for _, _, f in state.pending:
            f.set_exception(exc)
        state.pending = []
        raise
    state.pending.append((pending, buf, fut))
    if bucket.is_last():
        state.flush()
    return fut

"""The PyTorch DDP hook: sparsification + error feedback, reducers, and 4-rank gloo training.

Fast tests drive the hook's bucket path with the codec's in-process ThreadGroup reducer (the
same injection point the in-network NetworkReducer uses).  The slow test spawns 4 gloo ranks
once (tests/hostagent/torch_workers.py) and checks, independently of the hook's own code:
wrapping SUM / exact OR of the torch reducer, the dense run against plain DDP within the
quantization bound computed from the recorded scales, and the top-k run's aggregate bit for bit.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections import defaultdict

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from dhc import quantize as qz  # noqa: E402
from dhc.protocol import ThreadGroup  # noqa: E402
from hostagent.torch_hook import DHCHookState  # noqa: E402
from hostagent.torch_sparsify import ErrorFeedback, SparsifyConfig, sparsify  # noqa: E402
from tests.hostagent import torch_workers as tw  # noqa: E402


def q_of(values: np.ndarray, t: int) -> np.ndarray:
    """Reference quantization, written out: rint(v * 2**t)."""
    return np.rint(np.asarray(values, np.float64) * 2.0 ** t).astype(np.int64)


# ---------------------------------------------------------------------- sparsification, EF
def test_topk_keeps_the_largest_magnitudes() -> None:
    v = np.array([0.5, -3.0, 0.1, 2.0, -0.2, 1.0, 0.0, -2.5])
    out = sparsify(v, SparsifyConfig("topk", ratio=0.3))     # ceil(2.4) = 3
    assert out.tolist() == [0, -3.0, 0, 2.0, 0, 0, 0, -2.5]
    assert sparsify(v, SparsifyConfig("topk", ratio=0.01)).tolist() == [0, -3.0, 0, 0, 0, 0, 0, 0]
    assert np.array_equal(sparsify(v, SparsifyConfig()), v)


def test_threshold_keeps_entries_at_or_above() -> None:
    v = np.array([0.5, -3.0, 0.1, 2.0, -0.2, 1.0])
    assert sparsify(v, SparsifyConfig("threshold", threshold=1.0)).tolist() == [0, -3.0, 0, 2.0, 0, 1.0]


@pytest.mark.parametrize("kwargs", [{"mode": "top"}, {"mode": "topk", "ratio": 0.0},
                                    {"mode": "topk", "ratio": 1.5},
                                    {"mode": "threshold", "threshold": -1.0},
                                    {"mode": "threshold", "threshold": float("nan")}])
def test_bad_sparsify_config_is_rejected(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        SparsifyConfig(**kwargs)


def test_error_feedback_keeps_dropped_and_rounding_error_per_parameter() -> None:
    ef = ErrorFeedback()
    g = np.array([1.0, -0.3, 0.26, 2.0, 0.01])
    comp = ef.compensate(g, ["a", "b"], [2, 3])
    sent = sparsify(comp, SparsifyConfig("topk", ratio=0.4))   # keeps 2.0 and 1.0
    t = 2                                                   # s = 4: 1.0 and 2.0 are exact
    ef.update(comp, sent, t, 1, ["a", "b"], [2, 3])
    assert ef.residual("a").tolist() == [0.0, -0.3]
    assert ef.residual("b").tolist() == [0.26, 0.0, 0.01]
    # the next bucket may order the parameters differently (DDP rebuilds its buckets)
    comp2 = ef.compensate(np.zeros(5), ["b", "a"], [3, 2])
    assert comp2.tolist() == [0.26, 0.0, 0.01, 0.0, -0.3]
    with pytest.raises(ValueError, match="parameters hold"):
        ef.compensate(np.zeros(4), ["a", "b"], [2, 3])


# ---------------------------------------------------------------------- hook state
def test_state_rejects_bad_configuration() -> None:
    with pytest.raises(TypeError, match="SparsifyConfig"):
        DHCHookState(sparsify="topk")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="reduce"):
        DHCHookState(reducer=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="either"):
        DHCHookState(reducer=ThreadGroup(1).reducer(0), endpoint=object())


def test_state_without_process_group_needs_n_workers() -> None:
    state = DHCHookState()
    with pytest.raises(RuntimeError, match="n_workers"):
        state.allreduce_bucket(np.ones(4, np.float32), ["w"], [4])


def test_from_agent_uses_the_agents_transport() -> None:
    from hostagent.agent import Agent
    from hostagent.reducer import NetworkReducer
    from hostagent.transport import JobEndpoint
    ep = JobEndpoint(job_id=7, child_id=0, switch_ip="127.0.0.1", window=8,
                     bind_ip="127.0.0.1")
    with Agent(ep, 3, codec="hg", codec_params={"block_size": 64}) as agent:
        state = DHCHookState.from_agent(agent, sparsify=SparsifyConfig("topk", 0.1))
        red = state.get_reducer()
        assert isinstance(red, NetworkReducer) and red.transport is agent.transport
        assert (state.n_workers, state.codec, state.codec_params) == (3, "hg", {"block_size": 64})
        closes = _record_closes(agent)
        state.close()                     # the agent is its owner's: left open
        assert closes == []
        with pytest.raises(ValueError, match="either"):
            DHCHookState(agent=agent, endpoint=ep)


def test_endpoint_state_opens_and_closes_its_own_agent() -> None:
    from hostagent.agent import Agent
    from hostagent.reducer import NetworkReducer
    from hostagent.transport import JobEndpoint
    ep = JobEndpoint(job_id=7, child_id=0, switch_ip="127.0.0.1", window=8,
                     bind_ip="127.0.0.1")
    state = DHCHookState(endpoint=ep, n_workers=2, codec_params={"block_size": 64})
    red = state.get_reducer()
    agent = state.agent
    assert isinstance(agent, Agent) and isinstance(red, NetworkReducer)
    assert red.transport is agent.transport
    assert (agent.n_workers, agent.codec, agent.codec_params) == (2, "hg", {"block_size": 64})
    closes = _record_closes(agent)
    state.close(finish=False)         # Agent.close without the padding
    state.close()                     # a second close does nothing
    assert closes == [False]


def _record_closes(agent: object) -> list[bool]:
    """Record every ``agent.close(finish)`` (still closing for real)."""
    calls: list[bool] = []
    real = agent.close

    def close(finish: bool = True) -> None:
        calls.append(finish)
        real(finish)

    agent.close = close
    return calls


def test_single_rank_gloo_group_and_worker_count_check() -> None:
    import torch.distributed as dist

    from hostagent.torch_reducer import TorchDistReducer
    with pytest.raises(RuntimeError, match="init_process_group"):
        TorchDistReducer()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{tw.free_port()}", rank=0,
                            world_size=1)
    try:
        with pytest.raises(ValueError, match="n_workers=2 but the process group has 1"):
            DHCHookState(n_workers=2).get_reducer()
        with pytest.raises(ValueError, match="or_mode"):
            TorchDistReducer(or_mode="max")
        state = DHCHookState(record=True)
        g = np.array([0.0, 1.5, -0.25, 3.0], np.float32)
        avg = state.allreduce_bucket(g, ["p"], [4])
        t = state.scales[-1].scale_exponent
        assert t == qz.precision_bits(1) - 2 and np.array_equal(avg, g)   # exact in fixed point
        assert state.reducer.stats.rounds == 3
    finally:
        dist.destroy_process_group()


def run_ranks(states: list[DHCHookState], grads: list[np.ndarray], sizes: list[int]
              ) -> list[np.ndarray]:
    """One bucket allreduce on every state, each in its own thread (like DDP ranks)."""
    out: list[np.ndarray | None] = [None] * len(states)
    errors: list[BaseException] = []

    def go(r: int) -> None:
        try:
            out[r] = states[r].allreduce_bucket(grads[r], ["w", "b"], sizes, bucket=0)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(r,)) for r in range(len(states))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    if errors:
        raise errors[0]
    return [o for o in out if o is not None]


@pytest.mark.parametrize("codec", ["hg", "dense"])
def test_injected_reducer_gives_the_exact_average_of_sparsified_values(codec: str) -> None:
    n, d = 4, 600
    group = ThreadGroup(n)
    states = [DHCHookState(reducer=group.reducer(r), n_workers=n, codec=codec, record=True,
                           sparsify=SparsifyConfig("topk", ratio=0.05)) for r in range(n)]
    rng = np.random.default_rng(5)
    residual = [np.zeros(d) for _ in range(n)]
    for step in range(3):
        grads = [rng.standard_normal(d).astype(np.float32) * 10.0 ** -(r + step) for r in range(n)]
        averages = run_ranks(states, grads, [500, 100])
        comp = [grads[r].astype(np.float64) + residual[r] for r in range(n)]
        sent = []
        for c in comp:
            keep = np.argsort(-np.abs(c), kind="stable")[:30]
            s = np.zeros(d)
            s[keep] = c[keep]
            sent.append(s)
        top = max(float(np.max(np.abs(s))) for s in sent)
        t = qz.precision_bits(n) - int(np.frexp(top)[1])
        total = sum(q_of(s, t) for s in sent)
        for r in range(n):
            rec = states[r].records[-1]
            assert rec.scale_exponent == t and states[r].scales[-1].scale_exponent == t
            assert np.array_equal(rec.sum_int, total)
            assert np.array_equal(averages[r], total * 2.0 ** -t / n)
            residual[r] = comp[r] - q_of(sent[r], t) * 2.0 ** -t
        for st in states:
            st.step += 1


def test_torch_is_not_imported_by_the_rest_of_the_project() -> None:
    code = ("import sys, dhc.codec, dhc.protocol, hostagent.agent, hostagent.reducer, "
            "hostagent.torch_sparsify; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------- 4 gloo ranks
@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return tw.run_all(tmp_path_factory.mktemp("ddp"))


@pytest.mark.slow
def test_torch_reducer_wraps_and_ors_like_the_switch(ranks: list[dict]) -> None:
    lanes = [tw.reducer_lanes(r) for r in range(tw.WORLD)]
    wide = np.sum(np.stack(lanes).astype(np.int64), axis=0)
    assert np.count_nonzero(wide >= 1 << 32) > 100     # the sums really wrap
    want_sum = (wide & 0xFFFFFFFF).astype(np.uint32)
    want_or = np.bitwise_or.reduce(np.stack([x[::-1] for x in lanes]), axis=0)
    want_scale = np.bitwise_or.reduce(np.stack([x[:7] for x in lanes]), axis=0)
    for rank in ranks:
        assert len(rank["reducer"]) == 4
        for mode, (s, o, sc) in rank["reducer"].items():
            assert s.dtype == np.uint32 and np.array_equal(s, want_sum), mode
            assert np.array_equal(o, want_or) and np.array_equal(sc, want_scale), mode


@pytest.mark.slow
def test_dense_hook_matches_plain_ddp_within_the_quantization_bound(ranks: list[dict]) -> None:
    """float64 training, so float rounding is far below the fixed-point error being bounded.

    Per step the hook's average is within max_b 0.5/s_b of the exact average (scales from the
    hook's log); SGD moves each parameter by lr times that, so after T steps the parameters
    differ by at most lr * sum_t max_b 0.5/s_{t,b} (to first order), plus float64 rounding:
    plain DDP's sum (N additions of |g| < 2**L / s) and one update rounding per step per run."""
    plain, dhc = ranks[0]["plain"], ranks[0]["dhc"]
    for r in ranks[1:]:   # every rank decoded the same sums, so the replicas stay identical
        for name, p in dhc["params"].items():
            assert np.array_equal(r["dhc"]["params"][name], p)
    per_step: dict[int, int] = {}
    for rec in dhc["scales"]:
        per_step[rec["step"]] = min(per_step.get(rec["step"], 1 << 30), rec["scale_exponent"])
    assert sorted(per_step) == list(range(tw.STEPS))
    assert dhc["buckets"] >= 2
    eps = 2.0 ** -52
    L = qz.precision_bits(tw.WORLD)
    theta = max(float(np.max(np.abs(p))) for p in plain["params"].values())
    quant = sum(tw.LR * 0.5 * 2.0 ** -t for t in per_step.values())
    rounding = sum(tw.LR * tw.WORLD * eps * 2.0 ** (L - t) + 2 * eps * theta
                   for t in per_step.values())
    diff = max(float(np.max(np.abs(dhc["params"][n] - plain["params"][n]))) for n in plain["params"])
    assert diff <= quant + rounding, (diff, quant, rounding)
    assert diff > 0           # the run did go through the quantizing hook
    print(f"\ndense hook vs plain DDP: max |dtheta| = {diff:.3e}, bound = {quant + rounding:.3e} "
          f"(quantization {quant:.3e}), steps = {tw.STEPS}, buckets = {dhc['buckets']}, "
          f"seconds plain/hook = {plain['seconds']:.2f}/{dhc['seconds']:.2f}")


def _records_by_step(ranks: list[dict]) -> dict[tuple[int, int], list[dict]]:
    grouped: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for rank in ranks:
        for rec in rank["topk"]["records"]:
            grouped[(rec["step"], rec["bucket"])].append(rec)
    return grouped


@pytest.mark.slow
def test_topk_aggregate_is_the_exact_sum_of_sparsified_quantized_gradients(
        ranks: list[dict]) -> None:
    grouped = _records_by_step(ranks)
    assert {s for s, _ in grouped} == set(range(tw.STEPS))
    L = qz.precision_bits(tw.WORLD)
    residual: list[dict[str, np.ndarray]] = [{} for _ in ranks]
    averages: dict[int, dict[str, np.ndarray]] = defaultdict(dict)
    for (step, _bucket), recs in sorted(grouped.items()):
        assert len(recs) == tw.WORLD
        names, sizes = recs[0]["param_names"], recs[0]["param_sizes"]
        d = sum(sizes)
        k = int(np.ceil(tw.TOPK_RATIO * d))
        for w, rec in enumerate(recs):
            assert rec["param_names"] == names and rec["raw"].dtype == np.float32
            # error feedback: compensated = raw + what earlier steps did not deliver
            prev = np.concatenate([residual[w].get(n, np.zeros(sz))
                                   for n, sz in zip(names, sizes, strict=True)])
            assert np.array_equal(rec["compensated"], rec["raw"].astype(np.float64) + prev)
            # top-k: k entries kept unchanged, none dropped larger than any kept
            kept = np.flatnonzero(rec["sent"])
            assert kept.size <= k
            assert np.array_equal(rec["sent"][kept], rec["compensated"][kept])
            dropped = np.setdiff1d(np.arange(d), kept)
            if kept.size and dropped.size:
                assert np.abs(rec["compensated"][dropped]).max() <= np.abs(rec["sent"][kept]).min()
        # scale: 2**(L - E) with 2**E above the largest sent magnitude of any worker
        top = max(float(np.max(np.abs(rec["sent"]))) for rec in recs)
        t = L - int(np.frexp(top)[1])
        expected = sum(q_of(rec["sent"], t) for rec in recs)
        for w, rec in enumerate(recs):
            assert rec["scale_exponent"] == t
            assert np.array_equal(rec["sum_int"], expected)                      # bit for bit
            avg = (expected * 2.0 ** -t / tw.WORLD).astype(np.float32)
            assert np.array_equal(rec["average"], avg)
            delivered = rec["compensated"] - q_of(rec["sent"], t) * 2.0 ** -t
            off = 0
            for n, sz in zip(names, sizes, strict=True):
                residual[w][n] = delivered[off:off + sz]
                averages[step][n] = avg[off:off + sz]
                off += sz
    # the averages reached the optimizer: replaying SGD with them gives the trained parameters
    model = tw.make_model(torch.float32)
    with torch.no_grad():
        for step in range(tw.STEPS):
            for name, p in model.named_parameters():
                g = torch.from_numpy(averages[step][name]).view(p.shape)
                p.add_(g, alpha=-tw.LR)
    for name, p in model.named_parameters():
        for rank in ranks:
            assert np.array_equal(rank["topk"]["params"][name], p.detach().numpy()), name
    losses = np.array([r["topk"]["losses"] for r in ranks]).mean(axis=0)
    plain = np.array([r["plain32"]["losses"] for r in ranks]).mean(axis=0)
    print(f"\ntop-k {tw.TOPK_RATIO}: mean loss first/last 10 steps {losses[:10].mean():.4f}/"
          f"{losses[-10:].mean():.4f} (plain DDP {plain[:10].mean():.4f}/{plain[-10:].mean():.4f}); "
          f"lane bytes per rank {ranks[0]['topk']['lane_bytes']} vs dense float32 "
          f"{ranks[0]['topk']['dense_float32_bytes']}; HG without sparsification "
          f"{ranks[0]['dhc']['lane_bytes']}; seconds {ranks[0]['topk']['seconds']:.2f}")

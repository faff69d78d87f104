"""The DDP hook over the in-network transport: 2 gloo ranks on 2 Mininet hosts, one P4 switch.

Each host runs ``tests/e2e/ddp_worker.py``: gloo over TCP through the switch, a small MLP in DDP,
the DHC hook with the job's endpoint from the deployment manifest, 5 steps per configuration
(HG-Sketch of top-k 10 % buckets, then HG-Sketch of the dense buckets) on the same job.
Checked here, independently of the hook: identical replicas, every aggregate equal bit for bit
to the sum of both ranks' quantized sent values (recomputed from their records), the averages
reproducing the trained parameters, the transports' counters and the switch's job counters.
Marked root (Mininet) and slow.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from tests.e2e.conftest import ROOT, Deployed, _needs_root

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.timeout(150)]
torch = pytest.importorskip("torch")

STEPS = 5
WORLD = 2
GLOO_PORT = 29500
DEADLINE_S = 80.0
#: Names unlike the shared topologies' (s1, h1...): Mininet interface names are global.
TOPOLOGY = {
    "name": "ddp2",
    "switches": [{"name": "ddps1", "ip": "10.0.7.254", "mac": "02:00:00:00:07:fe"}],
    "hosts": [{"name": "ddph1", "ip": "10.0.7.1", "mac": "02:00:00:00:07:01"},
              {"name": "ddph2", "ip": "10.0.7.2", "mac": "02:00:00:00:07:02"}],
    "links": [{"a": "ddph1", "a_port": 0, "b": "ddps1", "b_port": 1},
              {"a": "ddph2", "a_port": 0, "b": "ddps1", "b_port": 2}],
    "jobs": [{"id": 7, "workers": ["ddph1", "ddph2"], "bytes_per_iteration": 7000, "window": 16,
              "lanes": 32}],
}


def precision_bits(n_workers: int) -> int:
    """L = floor(log2(floor((2**31 - 1) / N))): N values below 2**L in magnitude sum in int32."""
    return ((2 ** 31 - 1) // n_workers).bit_length() - 1


def q_of(values: np.ndarray, t: int) -> np.ndarray:
    """Reference quantization, written out: rint(v * 2**t)."""
    return np.rint(np.asarray(values, np.float64) * 2.0 ** t).astype(np.int64)


def launch(net: Deployed, workdir: Path) -> list[subprocess.Popen]:
    """One ddp_worker per job worker, in its host's namespace; rank 0's address is the master."""
    job = net.topo.jobs[0]
    master = net.topo.hosts[job.workers[0]].ip
    procs = []
    for rank, host in enumerate(job.workers):
        node = net.handle.host(host)
        # c10d looks up the peers' hostnames (for log messages); the machine's nameserver is not
        # reachable from a Mininet host, so without RES_OPTIONS each lookup waits the resolver's
        # default 5 s timeout
        env = dict(os.environ, GLOO_SOCKET_IFNAME=node.defaultIntf().name,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
                   OMP_NUM_THREADS="1", RES_OPTIONS="timeout:1 attempts:1")
        cmd = [sys.executable, "-m", "tests.e2e.ddp_worker", "--manifest", str(net.manifest),
               "--host", host, "--rank", str(rank), "--world", str(len(job.workers)),
               "--master", f"{master}:{GLOO_PORT}", "--steps", str(STEPS),
               "--out", str(workdir / f"rank{rank}.pkl")]
        procs.append(node.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=str(ROOT), env=env))
    return procs


def wait_all(procs: list[subprocess.Popen], deadline_s: float) -> list[tuple[int, str]]:
    """(return code, stderr tail) per worker; stragglers are killed at the deadline."""
    end = time.monotonic() + deadline_s
    out = []
    for proc in procs:
        try:
            _, err = proc.communicate(timeout=max(1.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            err = (err or b"") + f"\n[killed after {deadline_s:.0f} s]".encode()
        out.append((proc.returncode, (err or b"").decode(errors="replace")[-3000:]))
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    """Deploy the 2-host network, train on both hosts, read the switch's counters."""
    _needs_root()
    from controller.placement import place
    from controller.topology_file import from_dict
    from topologies.story import deployed_net

    topo = from_dict(TOPOLOGY, source="test_ddp_mininet.TOPOLOGY")
    placement = place(topo)
    workdir = tmp_path_factory.mktemp("ddp_mininet")
    t0 = time.perf_counter()
    with deployed_net(topo, placement, workdir) as (handle, manifest, deploy_s):
        net = Deployed(handle, manifest, topo, placement, workdir)
        t1 = time.perf_counter()
        outcomes = wait_all(launch(net, workdir), DEADLINE_S)
        run_s = time.perf_counter() - t1
        bad = [(i, rc, err) for i, (rc, err) in enumerate(outcomes) if rc != 0]
        assert not bad, f"ddp workers failed: {bad}"
        status = net.status()
    ranks = []
    for r in range(WORLD):
        with open(workdir / f"rank{r}.pkl", "rb") as f:
            ranks.append(pickle.load(f))
    return {"ranks": ranks, "status": status, "topo": topo, "deploy_s": deploy_s,
            "run_s": run_s, "total_s": time.perf_counter() - t0}


CONFIGS = ("topk", "hg")


@pytest.mark.parametrize("config", CONFIGS)
def test_replicas_end_identical(run: dict, config: str) -> None:
    first, second = (r[config] for r in run["ranks"])
    assert first["params"].keys() == second["params"].keys()
    for name, p in first["params"].items():
        assert np.array_equal(p, second["params"][name]), name
    assert all(np.isfinite(loss) for r in run["ranks"] for loss in r[config]["losses"])


@pytest.mark.parametrize("config", CONFIGS)
def test_switch_aggregate_is_the_exact_sum_of_quantized_sent_values(run: dict, config: str) -> None:
    """Recomputed from what each rank recorded: the error-feedback input, the top-k selection,
    the scale 2**(L - E) from both ranks' sent values, and sum_w rint(sent_w * 2**t) bit for bit;
    then SGD replayed with the recorded averages gives the trained parameters."""
    from tests.e2e import ddp_worker as dw
    ranks = [r[config] for r in run["ranks"]]
    grouped: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for rank in ranks:
        for rec in rank["records"]:
            grouped[(rec["step"], rec["bucket"])].append(rec)
    assert {s for s, _ in grouped} == set(range(STEPS))
    assert len({b for _, b in grouped}) >= 2, "the model should span several DDP buckets"
    L = precision_bits(WORLD)
    cfg = dw.CONFIGS[config]
    residual: list[dict[str, np.ndarray]] = [{} for _ in ranks]
    averages: dict[int, dict[str, np.ndarray]] = defaultdict(dict)
    for (step, bucket), recs in sorted(grouped.items()):
        assert len(recs) == WORLD, (step, bucket)
        names, sizes = recs[0]["param_names"], recs[0]["param_sizes"]
        d = sum(sizes)
        for w, rec in enumerate(recs):
            assert rec["param_names"] == names and rec["raw"].dtype == np.float32
            prev = np.concatenate([residual[w].get(n, np.zeros(sz))
                                   for n, sz in zip(names, sizes, strict=True)])
            assert np.array_equal(rec["compensated"], rec["raw"].astype(np.float64) + prev)
            kept = np.flatnonzero(rec["sent"])
            assert np.array_equal(rec["sent"][kept], rec["compensated"][kept])
            if cfg.mode == "topk":
                assert 0 < kept.size <= int(np.ceil(cfg.ratio * d))
                dropped = np.setdiff1d(np.arange(d), kept)
                assert np.abs(rec["compensated"][dropped]).max() <= np.abs(rec["sent"][kept]).min()
            else:
                assert np.array_equal(rec["sent"], rec["compensated"])
        top = max(float(np.max(np.abs(rec["sent"]))) for rec in recs)
        t = L - int(np.frexp(top)[1])
        expected = sum(q_of(rec["sent"], t) for rec in recs)
        assert np.any(expected != 0)
        avg = (expected * 2.0 ** -t / WORLD).astype(np.float32)
        for w, rec in enumerate(recs):
            assert rec["scale_exponent"] == t, (step, bucket, w)
            assert rec["sum_int"].dtype == np.int64
            assert np.array_equal(rec["sum_int"], expected), (step, bucket, w)   # bit for bit
            assert np.array_equal(rec["average"], avg), (step, bucket, w)
            delivered = rec["compensated"] - q_of(rec["sent"], t) * 2.0 ** -t
            off = 0
            for n, sz in zip(names, sizes, strict=True):
                residual[w][n] = delivered[off:off + sz]
                averages[step][n] = avg[off:off + sz]
                off += sz
    model = dw.make_model()
    with torch.no_grad():
        for step in range(STEPS):
            for name, p in model.named_parameters():
                p.add_(torch.from_numpy(averages[step][name]).view(p.shape), alpha=-dw.LR)
    for name, p in model.named_parameters():
        for rank in ranks:
            assert np.array_equal(rank["params"][name], p.detach().numpy()), name


def test_traffic_went_through_the_switch(run: dict) -> None:
    """Every chunk of both runs (padding included) completed once at the switch, with one new
    contribution from each rank; the transports saw their RESULTs."""
    job = run["topo"].jobs[0]
    switch_ip = run["topo"].switches["ddps1"].ip
    chunks_per_rank = []
    for rank in run["ranks"]:
        total = 0
        for config in CONFIGS:
            r = rank[config]
            ep, stats, closed = r["endpoint"], r["transport"], r["transport_closed"]
            assert ep["job_id"] == job.id and ep["switch_ip"] == switch_ip and r["n_workers"] == WORLD
            assert stats["packets_sent"] > 0 and stats["chunks"] > 0
            assert stats["packets_received"] >= stats["chunks"]
            assert stats["malformed_ignored"] == 0
            # close() padded the stream to a 2W boundary, so the next run started at chunk 0
            assert closed["chunks"] % (2 * job.window) == 0
            assert closed["chunks"] - stats["chunks"] == closed["padding_chunks"]
            total += closed["chunks"]
        chunks_per_rank.append(total)
    assert len(set(chunks_per_rank)) == 1, chunks_per_rank
    status = run["status"]["ddps1"]
    assert status.error is None, status.error
    (js,) = [j for j in status.jobs if j.job_id == job.id]
    assert js.role == "root" and js.fan_in == WORLD
    assert js.completions == chunks_per_rank[0]
    assert js.contributions == WORLD * chunks_per_rank[0]
    # "arp" (DROP_ARP): requests for addresses the switch does not know, here the machine's
    # nameserver (on-link in 10/8 from a host) during c10d's hostname lookups.  "dup_pending": a
    # retransmitted DATA for a slot still waiting for the other rank (a timer that fired while
    # that rank waited for a CPU), dropped by design; never more than the ranks retransmitted
    retransmitted = sum(rank[c]["transport_closed"]["retransmissions"] for rank in run["ranks"]
                        for c in CONFIGS)
    assert status.drops.get("dup_pending", 0) <= retransmitted, (status.drops, retransmitted)
    assert not {k: v for k, v in status.drops.items() if k not in ("arp", "dup_pending")}, status.drops


def test_report_figures(run: dict) -> None:
    """Prints the figures docs/ddp.md quotes (pytest -s); checks the run stayed in budget."""
    lines = [f"deploy {run['deploy_s']:.1f} s, workers {run['run_s']:.1f} s, "
             f"fixture total {run['total_s']:.1f} s; per rank init_process_group / both trainings "
             + ", ".join(f"{r['timing']['init_process_group']:.1f} / {r['timing']['training']:.1f} s"
                         for r in run["ranks"])]
    for config in CONFIGS:
        r0 = run["ranks"][0][config]
        st = r0["transport"]
        n_params = sum(p.size for p in r0["params"].values())
        lines.append(
            f"{config}: {STEPS} steps {r0['seconds']:.2f} s; chunks {st['chunks']} "
            f"(+{r0['transport_closed']['padding_chunks']} padding), packets sent "
            f"{st['packets_sent']}, retransmissions {st['retransmissions']}, bytes sent "
            f"{st['bytes_sent']} vs dense float32 {STEPS * n_params * 4}; loss "
            f"{r0['losses'][0]:.6f} -> {r0['losses'][-1]:.6f}")
    js = next(j for j in run["status"]["ddps1"].jobs if j.job_id == run["topo"].jobs[0].id)
    lines.append(f"switch job counters: contributions {js.contributions}, completions "
                 f"{js.completions}, duplicates {js.duplicates}, results {js.results}; drops "
                 f"{run['status']['ddps1'].drops}")
    print("\n" + "\n".join(lines))
    assert run["total_s"] < 90, run["total_s"]

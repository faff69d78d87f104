"""The job service in Mininet: ``dhc-ctl serve`` on single.yaml, workers that know nothing but its
address, and recovery with no operator action.

One network and one service for the module (real softswitch process, real agents in the hosts'
namespaces; the service listens on a unix socket, which every namespace reaches through the file
system).  No manifest is written.  Each fault is followed by a session whose AllReduce is exact:
the service gives every session a fresh epoch and moves a failed or abandoned one's at once.
The torchrun tests train the project's small CNN on four hosts (rendezvous over the Mininet
network) and compare the parameters with a run without faults.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from dhcwire.header import DHC_UDP_PORT, worker_port
from dhcwire.jobservice import open_channel, pb, rpc
from tests.e2e.helpers import data_payload, send_from
from topologies.workload import Workload, collect, expected_sum

pytestmark = [pytest.mark.root, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
SECRET = "mininet-secret"
GOOD = Workload(dim=20_000, density=0.01, seed=31)
FAILING = Workload(dim=200_000, density=0.02, seed=32, timeout=0.05, retries=5)


#: a link from the root namespace (where the service runs) to h4: the service's TCP address
SVC_LINK = ("dhcsvc-root", "dhcsvc-h4", "192.168.250.1", "192.168.250.2")


@dataclass
class ServiceNet:
    handle: object
    topo: object
    workdir: Path
    sock: str
    serve_cmd: list[str]
    serve: subprocess.Popen
    tcp: str = ""       # the service's address over the Mininet network (from h4)

    @property
    def hosts(self) -> list[str]:
        return sorted(self.topo.hosts)

    def status(self) -> pb.StatusReply:
        with open_channel(self.sock) as ch:
            return rpc.JobServiceStub(ch).Status(pb.StatusRequest(), timeout=10)

    def job(self, name: str) -> pb.JobInfo:
        return next(j for j in self.status().jobs if j.name == name)

    def start_service(self) -> None:
        log = open(self.workdir / "serve.log", "ab")  # noqa: SIM115 - the process owns it
        self.serve = subprocess.Popen(self.serve_cmd, stdout=subprocess.PIPE, stderr=log, cwd=str(ROOT))
        line = self.serve.stdout.readline()
        assert line.startswith(b"{"), (line, (self.workdir / "serve.log").read_text()[-2000:])
        self.tcp = f"{SVC_LINK[2]}:{json.loads(line)['ports'][1]}"

    def stop_service(self, kill: bool = False) -> None:
        if self.serve.poll() is None:
            self.serve.kill() if kill else self.serve.terminate()
            self.serve.wait(30)


def _needs() -> None:
    import shutil
    if os.geteuid() != 0 or shutil.which("mnexec") is None:
        pytest.skip("needs root and Debian's mininet")


@pytest.fixture(scope="module")
def svc_net(tmp_path_factory):
    _needs()
    from controller.topology_file import load
    from topologies.net import running_net

    topo_file = ROOT / "topologies" / "single.yaml"
    topo = load(topo_file)
    workdir = tmp_path_factory.mktemp("svc")
    (workdir / "secret").write_text(SECRET)
    with running_net(topo, "softswitch", log_dir=str(workdir / "logs")) as handle, \
            service_link(handle.host("h4")):
        amap = ",".join(f"{n}={a}@{handle.device_ids[n]}" for n, a in handle.grpc_addresses.items())
        sock = f"unix:{workdir}/svc.sock"
        cmd = [sys.executable, "-m", "controller.cli", "serve", "--topo", str(topo_file),
               "--switch-addr-map", amap, "--listen", f"{sock},{SVC_LINK[2]}:0",
               "--state", str(workdir / "state.db"), "--secret-file", str(workdir / "secret"),
               "--heartbeat-timeout", "4", "--timeout", "60", "--watch-interval", "0.2"]
        net = ServiceNet(handle, topo, workdir, sock, cmd, None)
        net.start_service()
        try:
            yield net
        finally:
            net.stop_service()


@contextmanager
def service_link(host):
    """A veth from the root namespace to ``host``'s (Mininet's root-namespace link, as in its
    sshd example): the host reaches the service over the network, not through the file system."""
    root_if, host_if, root_ip, host_ip = SVC_LINK
    subprocess.run(["ip", "link", "add", root_if, "type", "veth", "peer", "name", host_if], check=True)
    try:
        subprocess.run(["ip", "link", "set", host_if, "netns", str(host.pid)], check=True)
        subprocess.run(["ip", "addr", "add", f"{root_ip}/30", "dev", root_if], check=True)
        subprocess.run(["ip", "link", "set", root_if, "up"], check=True)
        host.cmd(f"ip addr add {host_ip}/30 dev {host_if} && ip link set {host_if} up")
        yield
    finally:
        subprocess.run(["ip", "link", "del", root_if], check=False, capture_output=True)


def agent_cmd(net: ServiceNet, job: str, rank: int, w: Workload, expect: Path, dim: int | None = None,
              key: str = "") -> list[str]:
    return [sys.executable, "-m", "hostagent.cli", "--controller", net.sock, "--job-name", job,
            "--token", SECRET, "--workers", "4", "--rank", str(rank), "--host-ip", f"10.0.0.{rank + 1}",
            "--session-key", key, "--dim", str(dim or w.dim), "--density", str(w.density),
            "--seed", str(w.seed),
            "--codec", w.codec, "--repeat", str(w.repeat), "--timeout", str(w.timeout),
            "--retries", str(w.retries), "--expect", str(expect), "--json"]


def start_agents(net: ServiceNet, job: str, w: Workload, dims: dict[int, int] | None = None) -> dict:
    expect = net.workdir / f"expected-{w.seed}-{w.dim}.npy"
    expected_sum(w, 4, expect)
    return {f"h{r + 1}": net.handle.host(f"h{r + 1}").popen(
                agent_cmd(net, job, r, w, expect, (dims or {}).get(r)), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=str(ROOT))
            for r in range(4)}


def run_exact(net: ServiceNet, job: str, w: Workload = GOOD) -> int:
    """Four agents join ``job`` with the address only; every one holds the exact sum.  Returns the
    session's epoch."""
    outcomes = collect(start_agents(net, job, w), 0, deadline_s=120)
    bad = [(o.host, o.returncode, o.summary.get("error"), o.stderr[-800:]) for o in outcomes if not o.exact]
    assert not bad, bad
    epochs = {o.summary["epoch"] for o in outcomes}
    assert len(epochs) == 1, epochs
    return epochs.pop()


def test_first_session_exact_with_a_fresh_epoch(svc_net):
    epoch = run_exact(svc_net, "agents")
    assert epoch != 0
    assert not list((svc_net.workdir).glob("*manifest*"))


def _snapshot(net: ServiceNet) -> tuple[list, dict, dict]:
    """(jobs without heartbeat ages, refusal counters, s1's entries read over P4Runtime)."""
    from controller.deploy.apply import read_state
    from controller.p4rt_client import SwitchAddress, SwitchConnection

    reply = net.status()
    jobs = [pb.JobInfo.FromString(j.SerializeToString()) for j in reply.jobs]
    for j in jobs:
        for m in j.members:
            m.seconds_since_heartbeat = 0
    conn = SwitchConnection(SwitchAddress("s1", net.handle.grpc_addresses["s1"]), timeout=30)
    try:
        conn.open_channel()    # a read needs no arbitration: the service stays the primary
        entries = dict(read_state(conn).entries)
    finally:
        conn.close()
    return jobs, {c.name: c.count for c in reply.refused}, entries


def test_refusals_over_the_mininet_network_are_counted_and_change_nothing(svc_net):
    """From h4, over the network: with two jobs filling s1's registers and running, a wrong
    token, an unknown job, a duplicate rank, an oversized request and a third job that does not
    fit are refused with clear errors, each counted once, and the job table, the regions and
    s1's entries are as before."""
    client = svc_net.handle.host("h4").popen(
        [sys.executable, "-m", "tests.service.join_client", svc_net.tcp, SECRET],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT), text=True)
    try:
        ready = json.loads(client.stdout.readline() or "{}")
        assert ready.get("ready"), (ready, client.stderr.read() if client.poll() is not None else "")
        jobs0, counts0, entries0 = _snapshot(svc_net)
        client.stdin.write("go\n")
        client.stdin.flush()
        answers = json.loads(client.stdout.readline())["refused"]
        refused = {case: (code, details) for case, code, details in answers}
        jobs1, counts1, entries1 = _snapshot(svc_net)
        client.stdin.write("leave\n")
        client.stdin.flush()
        assert client.wait(60) == 0, client.stderr.read()
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    expect = {"token": ("UNAUTHENTICATED", "job 'big1': wrong token"),
              "unknown_job": ("NOT_FOUND", "unknown job 'ghost'"),
              "duplicate_rank": ("ALREADY_EXISTS", "rank 0 has joined session"),
              "too_large": ("RESOURCE_EXHAUSTED", "(limit 4096)")}
    for case, (code, text) in expect.items():
        assert refused[case][0] == code and text in refused[case][1], (case, refused[case])
    code, third = refused["third_job"]
    assert code == "refused" and "RESOURCE_EXHAUSTED" in third and "s1" in third, third
    grown = {k: counts1.get(k, 0) - counts0.get(k, 0) for k in set(counts0) | set(counts1)}
    assert grown == {"token": 1, "unknown_job": 1, "duplicate_rank": 1, "too_large": 1, "placement": 1}, grown
    assert {j.name for j in jobs0} >= {"big1", "big2"} and jobs1 == jobs0     # no big3, same regions
    assert entries1 == entries0


def test_mismatched_tensors_then_exact(svc_net):
    before = svc_net.job("agents").epoch
    outcomes = collect(start_agents(svc_net, "agents", FAILING, {0: FAILING.dim + 7}), 0, deadline_s=120)
    assert all(o.returncode != 0 for o in outcomes), [(o.host, o.returncode) for o in outcomes]
    # under the service the error says recovery is automatic (no `dhc-ctl jobs reset`) and what
    # the service answered to the failure report
    errors = [o.summary["error"] for o in outcomes if "error" in o.summary]
    assert errors and all("No operator action is needed" in e and "jobs reset" not in e
                          for e in errors), errors
    acks = [o.summary.get("service", "") for o in outcomes]
    assert any("moved to epoch" in a for a in acks), acks
    assert run_exact(svc_net, "agents") not in (before,)
    assert svc_net.status().epochs_moved >= 3


def test_stray_data_frame_then_exact(svc_net):
    job = svc_net.job("agents")
    send_from(svc_net, "h1", "10.0.0.254", DHC_UDP_PORT,
              [data_payload(job.job_id, 0, 0, lanes=256, epoch=job.epoch)], sport=worker_port(job.job_id))
    assert run_exact(svc_net, "agents") != job.epoch


def _wait_running(net: ServiceNet, job: str, session: int) -> None:
    deadline = time.monotonic() + 60
    while (net.job(job).state, net.job(job).session) != ("running", session):
        assert time.monotonic() < deadline, net.job(job)
        time.sleep(0.1)


def test_controller_killed_and_restarted_mid_session(svc_net):
    w = Workload(dim=20_000, density=0.01, seed=33, repeat=1500)
    session = svc_net.job("agents").session
    procs = start_agents(svc_net, "agents", w)
    _wait_running(svc_net, "agents", session + 1)
    before = svc_net.job("agents")
    svc_net.stop_service(kill=True)
    assert any(p.poll() is None for p in procs.values()), "the session ended before the kill"
    time.sleep(1)
    svc_net.start_service()
    after = svc_net.job("agents")
    assert (after.job_id, after.epoch, after.session, list(after.regions)) == \
        (before.job_id, before.epoch, before.session, list(before.regions))
    outcomes = collect(procs, 0, deadline_s=120)
    bad = [(o.host, o.returncode, o.summary.get("error"), o.stderr[-800:]) for o in outcomes if not o.exact]
    assert not bad, bad
    assert run_exact(svc_net, "agents") != after.epoch


def test_switch_killed_and_restarted_is_redeployed(svc_net):
    s1 = svc_net.handle.net.get("s1")
    session = svc_net.job("agents").session
    procs = start_agents(svc_net, "agents", replace(FAILING, repeat=50))   # a session that lasts
    _wait_running(svc_net, "agents", session + 1)
    s1.proc.kill()                                    # mid-session
    s1.proc.wait()
    outcomes = collect(procs, 0, deadline_s=120)
    assert all(o.returncode != 0 for o in outcomes)
    s1.start([])   # restart only the switch: the service notices and redeploys it
    assert run_exact(svc_net, "agents") != 0


STEPS = 2


def torchrun(net: ServiceNet, name: str, out: Path, kill: tuple[int, int] | None = None) -> None:
    """``torchrun --nnodes 4`` on h1..h4 (c10d rendezvous at h1), DHC_CONTROLLER set, nothing else
    of DHC.  The hosts of a Mininet network share one host name, so torchrun cannot tell which
    one hosts the rendezvous store: ``is_host`` says so.  ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1``
    gives each attempt a fresh store (with the shared one, a restarted group's gloo reads the
    dead attempt's addresses: hostagent/torch_session.py)."""
    procs = {}
    for r in range(4):
        host, ip = f"h{r + 1}", f"10.0.0.{r + 1}"
        env = dict(os.environ, DHC_CONTROLLER=net.sock, DHC_TOKEN=SECRET, DHC_HOST_IP=ip,
                   GLOO_SOCKET_IFNAME=f"{host}-eth0", PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1",
                   TORCH_DISABLE_SHARE_RDZV_TCP_STORE="1")
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "4", "--nproc-per-node", "1",
               "--rdzv-backend", "c10d", "--rdzv-endpoint", "10.0.0.1:29400", "--rdzv-id", name,
               "--local-addr", ip, "--rdzv-conf", f"is_host={'true' if r == 0 else 'false'}",
               "--max-restarts", "2", "--monitor-interval", "0.5",
               str(ROOT / "tests" / "service" / "torch_worker.py"), "--steps", str(STEPS), "--out", str(out)]
        if kill:
            cmd += ["--kill-rank", str(kill[0]), "--kill-step", str(kill[1])]
        with open(net.workdir / f"{name}-{host}.log", "wb") as log:
            procs[host] = net.handle.host(host).popen(cmd, env=env, stdout=log,
                                                      stderr=subprocess.STDOUT, cwd=str(ROOT))
    for p in procs.values():
        try:
            p.wait(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    logs = {h: (net.workdir / f"{name}-{h}.log").read_text(errors="replace") for h in procs}
    assert all(p.returncode == 0 for p in procs.values()), {h: logs[h][-3000:] for h in logs}


MODES = {"backend": "", "hook": "-hook"}     # mode -> suffix of its job's name


def _params(out: Path, mode: str) -> dict:
    import torch
    return torch.load(out / f"final-{mode}.pt")


def _equal(a: dict, b: dict) -> bool:
    import torch
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_torchrun_trains_the_cnn_and_survives_a_killed_worker(svc_net):
    """Four torchrun nodes train the small CNN through the switch with nothing but the service's
    address, twice over in one launch: ``init_process_group("dhc")`` (DDP's buckets all-reduced
    in the network, no hook) and a gloo group with the DHC hook and top-k -- two process groups,
    two in-network jobs.  First a run without faults: every rank ends with the same parameters
    (the network's sum is the same on every rank) and training moved them.  Then the same run
    again, with rank 2 SIGKILLed mid-AllReduce of step 1: torchrun --max-restarts restarts every
    rank, they resume from step 1's checkpoints and join new sessions (a fresh epoch each) with
    no operator action, and after the last step both models equal those of the clean run."""
    import torch

    from bench.train.train_data import make_model

    out = svc_net.workdir / "cnn"
    torchrun(svc_net, "cnn", out, kill=(2, 1))
    clean, faulty = out / "clean", out / "faulty"
    initial = make_model("small").state_dict()
    ranks = [torch.load(clean / f"r{r}-s{STEPS}.pt", weights_only=False) for r in range(4)]
    assert len(list(out.glob("attempt-r2-*"))) >= 2, "rank 2 was not restarted"
    for mode, suffix in MODES.items():
        assert all(_equal(ranks[0][mode], other[mode]) for other in ranks[1:]), mode
        assert not _equal(initial, _params(clean, mode)), mode
        job = svc_net.job(f"cnn{suffix}")
        assert job.session >= 2 and job.state == "idle", (mode, job)   # the killed session, the next
        a, b = _params(clean, mode), _params(faulty, mode)
        assert _equal(a, b), (mode, {k: float((a[k] - b[k]).abs().max()) for k in a})

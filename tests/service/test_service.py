"""The job service (``dhc-ctl serve``) over gRPC against a real P4Runtime server running
p4src/dhc.p4 (no Mininet): sessions, epochs on the switch, refusals, restart, capacity."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest

from controller.deploy.apply import read_state
from controller.entries import installed_epoch
from controller.p4rt_client import SwitchAddress
from controller.service.server import Service, ServiceConfig
from controller.service.sessions import Limits
from controller.topology_file import load
from dhcwire.jobservice import open_channel, pb, rpc
from hostagent.service_client import JobSession, JoinConfig, ServiceError

ROOT = Path(__file__).resolve().parents[2]
SECRET, ADMIN = "shared-secret", "admin-token"
HOSTS = [f"10.0.0.{i}" for i in range(1, 5)]


@contextmanager
def service(switch, state: Path, **limits) -> Iterator[tuple[Service, str]]:
    cfg = ServiceConfig(load(ROOT / "topologies" / "single.yaml"), {"s1": SwitchAddress("s1", switch.addr)},
                        "127.0.0.1:0", state, 256, None, Limits(**{"window": 8, **limits}),
                        secret=SECRET, admin_token=ADMIN, watch_interval_s=0.2)
    svc = Service(cfg)
    port = svc.start()
    try:
        yield svc, f"127.0.0.1:{port}"
    finally:
        svc.stop(0.2)


def join_all(addr: str, job: str, hosts: list[str], token: str = SECRET, key: str = "",
             **kw) -> list[JobSession | Exception]:
    out: list = [None] * len(hosts)

    def one(rank: int) -> None:
        try:
            out[rank] = JobSession.join(JoinConfig(addr, job, rank, len(hosts), hosts[rank], token=token,
                                                   session_key=key, wait_s=kw.get("wait_s", 20.0),
                                                   window=kw.get("window", 0), tls_ca=kw.get("tls_ca")))
        except ServiceError as err:
            out[rank] = err
    threads = [threading.Thread(target=one, args=(r,)) for r in range(len(hosts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def switch_epoch(switch, job_id: int) -> int | None:
    switch.conn.connect()
    try:
        return installed_epoch(read_state(switch.conn), job_id)
    finally:
        switch.conn.close()


def status(addr: str) -> pb.StatusReply:
    with open_channel(addr) as ch:
        return rpc.JobServiceStub(ch).Status(pb.StatusRequest(), timeout=10)


def view(reply: pb.StatusReply) -> list[pb.JobInfo]:
    """The jobs without their heartbeat ages."""
    jobs = [pb.JobInfo.FromString(j.SerializeToString()) for j in reply.jobs]
    for j in jobs:
        for m in j.members:
            m.seconds_since_heartbeat = 0
    return jobs


def call(addr: str, method: str, request):
    with open_channel(addr) as ch:
        return getattr(rpc.JobServiceStub(ch), method)(request, timeout=10)


def test_session_gets_fresh_epoch_failure_moves_it_and_leave_frees_the_region(switch, tmp_path):
    with service(switch, tmp_path / "state.db") as (svc, addr):
        first = join_all(addr, "a", HOSTS)
        assert all(isinstance(s, JobSession) for s in first), first
        eps = [s.endpoint for s in first]
        assert sorted(e.child_id for e in eps) == [0, 1, 2, 3] and len({e.epoch for e in eps}) == 1
        job_id, epoch = eps[0].job_id, eps[0].epoch
        assert switch_epoch(switch, job_id) == epoch != 0     # a fresh epoch, installed before the reply
        ack = first[2].report_failure("mismatched tensors")
        assert "moved to epoch" in ack
        moved = switch_epoch(switch, job_id)
        assert moved not in (None, epoch)
        second = join_all(addr, "a", HOSTS)                    # the next session: another fresh epoch
        assert all(isinstance(s, JobSession) for s in second), second
        assert second[0].endpoint.epoch == switch_epoch(switch, job_id) not in (epoch, moved)
        for s in first:
            s.close()
        for s in second:
            s.leave()
        (job,) = status(addr).jobs
        assert job.state == "idle" and job.job_id == 0 and not job.regions
        assert switch_epoch(switch, job_id) is None           # entries removed


def test_refusals_are_clear_counted_and_change_nothing(switch, tmp_path):
    with service(switch, tmp_path / "state.db") as (svc, addr):
        sessions = join_all(addr, "r", HOSTS)
        assert all(isinstance(s, JobSession) for s in sessions), sessions
        before = status(addr)

        def refused(code: grpc.StatusCode, text: str, **fields) -> None:
            req = pb.JoinRequest(**{"job": "r", "token": SECRET, "rank": 0, "world_size": 4,
                                    "host_ip": HOSTS[1], "wait_s": 2.0, **fields})
            with pytest.raises(grpc.RpcError) as info:
                call(addr, "JoinJob", req)
            assert info.value.code() == code and text in info.value.details(), info.value.details()

        refused(grpc.StatusCode.UNAUTHENTICATED, "wrong token", token="nope")
        refused(grpc.StatusCode.NOT_FOUND, "unknown job 'ghost'", job="ghost", token="nope")
        refused(grpc.StatusCode.INVALID_ARGUMENT, "rank 9 is out of range 0..3", rank=9)
        refused(grpc.StatusCode.FAILED_PRECONDITION, "world size cannot change", world_size=5)
        refused(grpc.StatusCode.ALREADY_EXISTS, "rank 0 has joined session", rank=0)
        refused(grpc.StatusCode.RESOURCE_EXHAUSTED, "limit 4096", job="x" * 5000)
        refused(grpc.StatusCode.INVALID_ARGUMENT, "not the address of a host", host_ip="192.0.2.1")
        after = status(addr)
        counts = {c.name: c.count for c in after.refused}
        for reason in ("token", "unknown_job", "rank", "world_size", "duplicate_rank", "too_large", "host"):
            assert counts.get(reason) == 1, counts
        assert view(after) == view(before)                     # same session, epoch, members, regions
        assert [s.ok for s in sessions] == [True] * 4
        for s in sessions:
            s.leave()


def test_state_survives_a_restart_of_the_service(switch, tmp_path):
    state = tmp_path / "state.db"
    with service(switch, state) as (_, addr):
        sessions = join_all(addr, "p", HOSTS)
        (before,) = status(addr).jobs
    for s in sessions:
        s._stop.set()                                          # the service is gone: stop beating
    with service(switch, state) as (_, addr):
        (after,) = status(addr).jobs
        assert (after.job_id, after.epoch, after.session, after.state, list(after.regions)) == \
            (before.job_id, before.epoch, before.session, "running", list(before.regions))
        assert switch_epoch(switch, after.job_id) == after.epoch
        again = join_all(addr, "p", HOSTS, key="restart-1")    # a new session after the restart
        assert all(isinstance(s, JobSession) for s in again), again
        assert again[0].endpoint.epoch not in (before.epoch,)
        for s in again:
            s.leave()
    for s in sessions:
        s.close()


def test_missed_heartbeats_abandon_the_session_and_move_the_epoch(switch, tmp_path):
    fast = {"heartbeat_interval_s": 0.2, "heartbeat_timeout_s": 1.0}
    with service(switch, tmp_path / "state.db", **fast) as (_, addr):
        sessions = join_all(addr, "h", HOSTS)
        epoch, job_id = sessions[0].endpoint.epoch, sessions[0].endpoint.job_id
        sessions[3]._stop.set()                                # rank 3 "killed": no more heartbeats
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and status(addr).jobs[0].state == "running":
            time.sleep(0.2)
        (job,) = status(addr).jobs
        assert job.state == "failed" and "[3] missed heartbeats" in job.last_failure
        assert switch_epoch(switch, job_id) not in (None, epoch)
        time.sleep(0.5)
        assert not sessions[0].ok and "missed heartbeats" in sessions[0].reason
        for s in sessions:
            s.close()
        call(addr, "DeleteJob", pb.DeleteJobRequest(admin_token=ADMIN, job="h"))
        assert switch_epoch(switch, job_id) is None


def test_two_jobs_at_once_get_disjoint_regions_and_a_third_is_refused_naming_the_resource(switch, tmp_path):
    with service(switch, tmp_path / "state.db") as (_, addr):
        create = pb.CreateJobRequest(admin_token=ADMIN, job="big1", world_size=2)
        token = call(addr, "CreateJob", create).token
        results: dict[str, list] = {}
        threads = [threading.Thread(target=lambda n=n, hs=hs, t=t: results.__setitem__(
                       n, join_all(addr, n, hs, token=t, window=1024)))
                   for n, hs, t in (("big1", HOSTS[:2], token), ("big2", HOSTS[2:], SECRET))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(isinstance(s, JobSession) for ss in results.values() for s in ss), results
        jobs = {j.name: j for j in status(addr).jobs}
        spans = sorted((r.base, r.base + r.slots) for n in ("big1", "big2") for r in jobs[n].regions)
        assert len(spans) == 2 and spans[0][1] <= spans[1][0], spans
        third = join_all(addr, "big3", HOSTS[:2], window=1024, wait_s=5)
        assert all(isinstance(e, ServiceError) for e in third), third
        assert "RESOURCE_EXHAUSTED" in str(third[0]) and "s1" in str(third[0]), str(third[0])
        assert "big3" not in {j.name for j in status(addr).jobs}   # made by the refused joins: gone
        with pytest.raises(grpc.RpcError) as info:
            call(addr, "CreateJob", pb.CreateJobRequest(admin_token="wrong", job="z", world_size=2))
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        for ss in results.values():
            for s in ss:
                s.leave()


def test_tls_join_with_the_ca_and_refused_without(switch, tmp_path):
    """The service's port over TLS (grpc's ssl credentials): a client that checks the service
    against the CA joins; a plaintext client gets nowhere."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("needs openssl to make a test certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    cfg = ServiceConfig(load(ROOT / "topologies" / "single.yaml"), {"s1": SwitchAddress("s1", switch.addr)},
                        "127.0.0.1:0", tmp_path / "state.db", 256, None, Limits(window=8), secret=SECRET,
                        tls_cert=cert, tls_key=key)
    svc = Service(cfg)
    port = svc.start()
    try:
        addr = f"127.0.0.1:{port}"
        with open_channel(addr, ca_file=cert) as ch:
            assert rpc.JobServiceStub(ch).Status(pb.StatusRequest(), timeout=10).fabric == "single"
        with pytest.raises(grpc.RpcError) as info, open_channel(addr) as ch:
            rpc.JobServiceStub(ch).Status(pb.StatusRequest(), timeout=3)
        assert info.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
        joined = join_all(addr, "tls", HOSTS[:2], wait_s=10, tls_ca=str(cert))
        assert all(isinstance(s, JobSession) for s in joined), joined
        for s in joined:
            s.leave()
    finally:
        svc.stop(0.2)


def test_agent_errors_under_the_service_say_recovery_is_automatic(switch, tmp_path):
    """A failed AllReduce's error names what to do: under the service nothing (it moves the
    epoch itself; the agent keeps the service's answer), with a manifest `dhc-ctl jobs reset`."""
    from dataclasses import replace

    from hostagent.agent import Agent
    from hostagent.transport import JobEndpoint

    with service(switch, tmp_path / "state.db") as (_, addr):
        sessions = join_all(addr, "m", HOSTS)
        assert all(isinstance(s, JobSession) for s in sessions), sessions
        agent = Agent(replace(sessions[0].endpoint, bind_ip="127.0.0.1"), 4, session=sessions[0])
        try:
            hint = agent.recovery_hint
            assert "No operator action is needed" in hint and addr in hint and "jobs reset" not in hint, hint
            agent.fail("test failure")
            assert "moved to epoch" in agent.service_ack, agent.service_ack
        finally:
            agent.close(finish=False)
        for s in sessions[1:]:
            s.close()
    manual = Agent(JobEndpoint(job_id=1, child_id=0, switch_ip="127.0.0.1", window=8, bind_ip="127.0.0.1"), 4)
    try:
        assert "dhc-ctl jobs reset --job 1" in manual.recovery_hint and not manual.service_ack
    finally:
        manual.close(finish=False)


def test_listens_on_several_addresses(switch, tmp_path):
    cfg = ServiceConfig(load(ROOT / "topologies" / "single.yaml"), {"s1": SwitchAddress("s1", switch.addr)},
                        f"127.0.0.1:0,unix:{tmp_path}/svc.sock", tmp_path / "state.db", 256, None,
                        Limits(window=8), secret=SECRET)
    svc = Service(cfg)
    try:
        assert svc.start() != 0 and len(svc.ports) == 2 and all(svc.ports), svc.ports
        for addr in (f"127.0.0.1:{svc.ports[0]}", f"unix:{tmp_path}/svc.sock"):
            assert status(addr).fabric == "single"
    finally:
        svc.stop(0.2)


def test_a_slow_restart_keeps_running_sessions(switch, tmp_path):
    """The restarted service's start-up (building the program, restoring switches) may outlast
    the heartbeat timeout: members are heard from again once it listens, not abandoned."""
    fast = {"heartbeat_interval_s": 0.2, "heartbeat_timeout_s": 1.0}
    listen = f"unix:{tmp_path}/svc.sock"

    def make() -> Service:
        return Service(ServiceConfig(load(ROOT / "topologies" / "single.yaml"),
                                     {"s1": SwitchAddress("s1", switch.addr)}, listen, tmp_path / "state.db",
                                     256, None, Limits(window=8, **fast), secret=SECRET,
                                     watch_interval_s=0.2))
    first = make()
    first.start()
    sessions = join_all(listen, "slow", HOSTS)
    assert all(isinstance(s, JobSession) for s in sessions), sessions
    first.stop(0.2)
    second = make()
    time.sleep(2.5)                      # a start-up longer than twice the heartbeat timeout
    second.start()
    try:
        time.sleep(2.0)                  # the watcher has looked at the heartbeats many times
        (job,) = status(listen).jobs
        assert job.state == "running" and all(s.ok for s in sessions), (job, [s.reason for s in sessions])
        for s in sessions:
            s.leave()
    finally:
        second.stop(0.2)


def test_a_switch_that_does_not_answer_fails_a_session_at_once(tmp_path):
    """Joins of a job whose switch is down are refused within seconds (a 3 s probe), not after
    the service's P4Runtime timeout (60 s here) with the fabric locked."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"     # nothing listens there once closed
    cfg = ServiceConfig(load(ROOT / "topologies" / "single.yaml"), {"s1": SwitchAddress("s1", dead)},
                        "127.0.0.1:0", tmp_path / "state.db", 256, None, Limits(window=8), secret=SECRET,
                        timeout=60.0)
    svc = Service(cfg)
    port = svc.start()
    try:
        t0 = time.monotonic()
        joined = join_all(f"127.0.0.1:{port}", "down", HOSTS[:2], wait_s=30)
        took = time.monotonic() - t0
        assert all(isinstance(e, ServiceError) for e in joined), joined
        assert "does not answer within 3 s" in str(joined[0]) and took < 20, (took, str(joined[0]))
    finally:
        svc.stop(0.2)

"""Join a job through the job service (``dhc-ctl serve``): the agent needs only its address.

``JobSession.join(JoinConfig(...))`` asks the service for this rank's endpoint (it waits until
every rank of the session has joined and the session's fresh epoch is on the switches), then
sends a heartbeat every ``heartbeat_interval_s`` from a daemon thread.  ``report_failure`` ends
the session for every rank (the service moves the job to a new epoch at once); ``leave`` ends
it normally.  :func:`config_from_env` reads what ``torchrun`` sets (``RANK``, ``WORLD_SIZE``,
``TORCHELASTIC_RUN_ID``, ``MASTER_ADDR``) plus ``DHC_CONTROLLER``, ``DHC_TOKEN``, ``DHC_JOB``,
``DHC_HOST_IP``, ``DHC_TLS_CA`` and ``DHC_SESSION_KEY`` (under torch the backend and the hook
pass a key their ranks agreed on instead: ``hostagent/torch_session.py``).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass

import grpc

from dhcwire.jobservice import open_channel, pb, rpc
from hostagent.transport import JobEndpoint

#: How long a join retries a service that does not answer (e.g. restarting), by default.
DEFAULT_JOIN_WAIT_S = 120.0


class ServiceError(RuntimeError):
    """The job service refused a request (its message says why) or cannot be reached."""


@dataclass(frozen=True)
class JoinConfig:
    controller: str
    job: str
    rank: int
    world_size: int
    host_ip: str
    token: str = ""
    session_key: str = ""
    lanes: int = 0
    window: int = 0
    bytes_per_iteration: int = 0
    wait_s: float = DEFAULT_JOIN_WAIT_S
    tls_ca: str | None = None
    bind_ip: str = "0.0.0.0"


def host_ip_toward(addr: str) -> str:
    """This machine's source address toward ``addr`` (a host name or IP; no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect((socket.gethostbyname(addr), 9))
        except OSError as err:
            raise ServiceError(f"cannot find this host's address toward {addr}: {err}") from None
        return s.getsockname()[0]


def _host_ip(controller: str) -> str:
    if os.environ.get("DHC_HOST_IP"):
        return os.environ["DHC_HOST_IP"]
    if os.environ.get("MASTER_ADDR"):
        return host_ip_toward(os.environ["MASTER_ADDR"])
    if not controller.startswith("unix:"):
        return host_ip_toward(controller.rsplit(":", 1)[0].strip("[]"))
    raise ServiceError("cannot tell this host's data-network address: set DHC_HOST_IP (or MASTER_ADDR)")


def _env_int(name: str, default: int | None = None) -> int:
    value = os.environ.get(name)
    if value is None:
        if default is None:
            raise ServiceError(f"{name} is not set (torchrun sets it; or pass it explicitly)")
        return default
    try:
        return int(value)
    except ValueError:
        raise ServiceError(f"{name}={value!r} is not an integer") from None


def config_from_env(controller: str | None = None, **overrides: object) -> JoinConfig:
    """A JoinConfig from the environment (torchrun's variables and ``DHC_*``); ``overrides`` win."""
    controller = controller or os.environ.get("DHC_CONTROLLER")
    if not controller:
        raise ServiceError("no job service: pass controller= or set DHC_CONTROLLER")
    job = os.environ.get("DHC_JOB") or os.environ.get("TORCHELASTIC_RUN_ID")
    fields = {"controller": controller, "job": job,
              "rank": overrides.get("rank", None), "world_size": overrides.get("world_size", None),
              "token": os.environ.get("DHC_TOKEN", ""),
              # not TORCHELASTIC_RESTART_COUNT: it differs between nodes (torch_session.py)
              "session_key": os.environ.get("DHC_SESSION_KEY", ""),
              "tls_ca": os.environ.get("DHC_TLS_CA") or None}
    fields.update({k: v for k, v in overrides.items() if v is not None})
    if fields["rank"] is None:
        fields["rank"] = _env_int("RANK")
    if fields["world_size"] is None:
        fields["world_size"] = _env_int("WORLD_SIZE")
    if not fields["job"]:
        raise ServiceError("no job name: set DHC_JOB (torchrun sets TORCHELASTIC_RUN_ID from --rdzv-id)")
    if "host_ip" not in fields:
        fields["host_ip"] = _host_ip(controller)
    return JoinConfig(**fields)


class JobSession:
    """One rank's session of one job, as the service granted it."""

    def __init__(self, cfg: JoinConfig, reply: pb.Endpoint, channel, stub):
        self.cfg, self.reply = cfg, reply
        self._channel, self._stub = channel, stub
        self.endpoint = JobEndpoint(
            job_id=reply.job_id, child_id=reply.child_id, switch_ip=reply.switch_ip, window=reply.window,
            lanes=reply.lanes, bind_ip=cfg.bind_ip, switch_port=reply.switch_port, epoch=reply.epoch,
            peers=tuple((f"rank{p.rank}", p.host_ip) for p in reply.peers))
        self.n_workers = reply.world_size
        self.ok, self.reason = True, ""
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeats, name="dhc-heartbeat", daemon=True)
        self._beat.start()

    @classmethod
    def join(cls, cfg: JoinConfig) -> JobSession:
        """Join (retrying while the service does not answer, up to ``cfg.wait_s``); ServiceError
        with the service's message if it refuses."""
        channel = open_channel(cfg.controller, cfg.tls_ca)
        stub = rpc.JobServiceStub(channel)
        req = pb.JoinRequest(job=cfg.job, token=cfg.token, rank=cfg.rank, world_size=cfg.world_size,
                             host_ip=cfg.host_ip, session_key=cfg.session_key, lanes=cfg.lanes,
                             window=cfg.window, bytes_per_iteration=cfg.bytes_per_iteration,
                             wait_s=cfg.wait_s)
        deadline = time.monotonic() + cfg.wait_s
        while True:
            try:
                reply = stub.JoinJob(req, timeout=max(1.0, deadline - time.monotonic()) + 5.0)
                return cls(cfg, reply, channel, stub)
            except grpc.RpcError as err:
                if err.code() == grpc.StatusCode.UNAVAILABLE and time.monotonic() < deadline:
                    time.sleep(0.5)
                    continue
                channel.close()
                raise ServiceError(f"job service {cfg.controller}: join of job {cfg.job!r} rank {cfg.rank} "
                                   f"refused: {err.code().name}: {err.details()}") from None

    def recovery_hint(self) -> str:
        """What a failed AllReduce's error says under the service: recovery is automatic."""
        return (f"No operator action is needed: this agent reports the failure to the job service "
                f"({self.cfg.controller}), which moves job {self.cfg.job!r} to a fresh epoch at once, and "
                f"the next session (every rank joining again, e.g. restarted by torchrun --max-restarts) "
                "gets another")

    def _ref(self) -> pb.SessionRef:
        return pb.SessionRef(job=self.cfg.job, token=self.cfg.token, rank=self.cfg.rank,
                             session=self.reply.session)

    def _heartbeats(self) -> None:
        interval = self.reply.heartbeat_interval_s or 1.0
        while not self._stop.wait(interval):
            try:
                r = self._stub.Heartbeat(self._ref(), timeout=max(interval, 2.0))
            except grpc.RpcError:
                continue   # the service restarting: it gives every member a fresh grace period
            if not r.session_ok:
                self.ok, self.reason = False, r.reason
                return

    def _call(self, method: str, request) -> str:
        try:
            # wait_for_ready: a service that is restarting (or a channel between reconnects) gets
            # the leave or the failure report within the deadline instead of losing it at once,
            # which would hold the session until its heartbeats time out
            return getattr(self._stub, method)(request, timeout=10.0, wait_for_ready=True).message
        except grpc.RpcError as err:
            return f"{method} not delivered: {err.code().name}: {err.details()}"

    def report_failure(self, reason: str) -> str:
        """Tell the service this session failed (it moves the job to a new epoch); then close."""
        try:
            return self._call("ReportFailure", pb.FailureReport(ref=self._ref(), reason=reason[:1000]))
        finally:
            self.close()

    def leave(self) -> str:
        try:
            return self._call("LeaveJob", self._ref())
        finally:
            self.close()

    def close(self) -> None:
        self._stop.set()
        self._channel.close()

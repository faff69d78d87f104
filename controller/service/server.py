"""``dhc-ctl serve``: the job service for one fabric, until SIGTERM/SIGINT.

Start-up: open the state database; take back the jobs and placement a previous run left (the
switches keep their entries and epochs; a switch that restarted meanwhile gets them back); push
the program where it is not running; listen.  A watcher thread ends sessions whose ranks stopped
sending heartbeats and redeploys a switch that restarted (it answers but runs no program), each
followed by a fresh epoch for the jobs concerned -- no operator action.
"""

from __future__ import annotations

import logging
import threading
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from controller.errors import ControllerError
from controller.p4rt_client import SwitchAddress
from controller.pipeline import PipelineSource
from controller.placement import Placement
from controller.service.fabric import Fabric, PlacedJob
from controller.service.servicer import MAX_MESSAGE_BYTES, JobService
from controller.service.sessions import JobBook, Limits
from controller.service.store import Store
from controller.topology import Topology
from dhcwire.jobservice import rpc

log = logging.getLogger("dhc.service")


@dataclass
class ServiceConfig:
    topo: Topology
    addrs: dict[str, SwitchAddress]
    listen: str
    state: Path
    lanes: int
    source: PipelineSource | None
    limits: Limits = field(default_factory=Limits)
    secret: str | None = None
    admin_token: str | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    timeout: float = 10.0
    time_limit: float = 20.0
    watch_interval_s: float = 1.0
    max_workers: int = 64


def listen_addresses(listen: str) -> list[str]:
    """``--listen``: one address or several, comma-separated (HOST:PORT or unix:/path each)."""
    return [a.strip() for a in listen.split(",") if a.strip()]


class Service:
    """A running job service: its book, gRPC server and watcher thread."""

    def __init__(self, cfg: ServiceConfig):
        self.cfg = cfg
        self.store = Store(cfg.state)
        saved = self.store.placement()
        placement = Placement.from_json(saved) if saved else None
        self.fabric = Fabric(cfg.topo, cfg.addrs, cfg.lanes, source=cfg.source, timeout=cfg.timeout,
                             time_limit=cfg.time_limit, placement=placement)
        self.book = JobBook(self.store, self.fabric, cfg.limits, cfg.secret)
        self.fabric.restore({
            j.job_id: PlacedJob(j.job_id, tuple(self.fabric.ip_to_host[ip] for ip in j.workers),
                                j.bytes_per_iteration, j.window, j.lanes)
            for j in self.book.jobs.values() if j.job_id is not None and j.workers})
        self.server: grpc.Server | None = None
        self.port = 0
        self.ports: list[int] = []      # one per listen address (0: could not bind it)
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def _restore_switches(self) -> list[str]:
        """Program and every placed job (with its stored epoch) on every switch that lacks them."""
        try:
            self.fabric.push_pipeline()
            epochs = {j.job_id: j.epoch for j in self.book.jobs.values() if j.job_id in self.fabric.jobs}
            self.fabric.deploy(set(epochs), epochs)   # with the forwarding: hosts reach each other
        except ControllerError as err:
            log.warning("switches not (all) restored yet: %s", err)
            return []
        return sorted(self.fabric.addrs)

    def start(self) -> int:
        self._restore_switches()
        opts = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", 4 * MAX_MESSAGE_BYTES),
                ("grpc.so_reuseport", 0)]   # one service per address: a second one fails to bind
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=self.cfg.max_workers), options=opts,
                                  maximum_concurrent_rpcs=4 * self.cfg.max_workers)
        rpc.add_JobServiceServicer_to_server(JobService(self.book, self.cfg.admin_token), self.server)
        creds = None
        if self.cfg.tls_cert:
            pair = (self.cfg.tls_key.read_bytes(), self.cfg.tls_cert.read_bytes())
            creds = grpc.ssl_server_credentials([pair])
        self.ports = [self.server.add_secure_port(a, creds) if creds else self.server.add_insecure_port(a)
                      for a in listen_addresses(self.cfg.listen)]
        self.port = 0 if 0 in self.ports else self.ports[0]
        if self.port == 0:
            return 0
        self.server.start()
        self.book.grant_grace()     # the start-up took a while: heartbeats can arrive only now
        self._watcher = threading.Thread(target=self._watch, name="dhc-service-watch", daemon=True)
        self._watcher.start()
        return self.port

    def _watch(self) -> None:
        while not self._stop.wait(self.cfg.watch_interval_s):
            try:
                for name in self.book.check_heartbeats():
                    log.warning("job %s: session abandoned (missed heartbeats); epoch moved", name)
                restarted = self.fabric.restarted_switches()
                if restarted:
                    log.warning("switch(es) %s restarted: redeploying", ", ".join(restarted))
                    self._redeploy(restarted)
            except Exception:  # noqa: BLE001 - the watcher must outlive one bad round
                log.exception("watcher round failed")

    def _redeploy(self, switches: list[str]) -> None:
        """Under the fabric's lock, so a session activated meanwhile (which deploys the switch
        itself) is seen: only switches still without the program are restored, and only sessions
        that were running on them end (a forming one gets its own fresh epoch)."""
        with self.fabric.lock:
            switches = [s for s in self.fabric.restarted_switches() if s in switches]
            if not switches or not self._restore_switches():
                return
            on = {jp.job_id for jp in self.fabric.placement.jobs for a in jp.aggregators
                  if a.switch in switches}
            for job in list(self.book.jobs.values()):
                if job.job_id in on:
                    with self.book.cond:
                        if job.state == "running":
                            why = f"switch(es) {', '.join(switches)} restarted"
                            self.book.end_session(job, why, "failed")
                    self.book.move_epoch(job.name)

    def stop(self, grace: float = 1.0) -> None:
        self._stop.set()
        if self.server is not None:
            self.server.stop(grace).wait(grace + 1)
        if self._watcher is not None:
            self._watcher.join(timeout=5)
        self.store.close()

    def wait(self) -> None:
        """Until stop is asked for.  In slices: the kernel may deliver SIGTERM to any thread (gRPC's
        among them), and a main thread blocked in one untimed wait would never run the Python
        handler that sets the event; waking every quarter second lets it run."""
        while not self._stop.wait(0.25):
            pass

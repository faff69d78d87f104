"""Jobs and their sessions: who may join, when a session starts, fails or ends, and its epoch.

A *session* of a job is one run of its ``world_size`` agents: each joins (``join`` waits until
every rank has), AllReduces many times and leaves.  When the last rank joins, the job is placed
(first session, or other hosts than before) and deployed, and gets a **fresh epoch** on every
switch of the job before any rank hears back, so no frame of an earlier session can touch its
registers.  A session that fails (``fail``: a rank reported an error) or is abandoned (a rank
missed its heartbeats, or the ranks rejoin under a new ``session_key``, e.g. torchrun's restart
count) moves the job to a new epoch at once.  When every rank has left, the job's entries are
removed and its register region freed.  A refused request changes nothing and is counted.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from controller.errors import ControllerError
from controller.service.fabric import Fabric, PlacedJob
from controller.service.store import JobRecord, Store

log = logging.getLogger("dhc.service")

NAME_LIMIT = 128
MAX_WORLD_SIZE = 1024


class Refused(Exception):
    """A request the service refuses; ``reason`` is the counter it is counted under."""

    def __init__(self, reason: str, message: str):
        self.reason = reason
        super().__init__(message)


@dataclass(frozen=True)
class JoinArgs:
    job: str
    token: str
    rank: int
    world_size: int
    host_ip: str
    session_key: str = ""
    lanes: int = 0
    window: int = 0
    bytes_per_iteration: int = 0
    wait_s: float = 0.0


@dataclass(frozen=True)
class Joined:
    """Everything an agent needs (the endpoint) for one session."""

    job_id: int
    child_id: int
    switch_ip: str
    window: int
    lanes: int
    epoch: int
    world_size: int
    session: int
    peers: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Limits:
    heartbeat_interval_s: float = 1.0
    heartbeat_timeout_s: float = 6.0
    join_timeout_s: float = 120.0
    window: int = 64
    bytes_per_iteration: int = 4 << 20


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class JobBook:
    """Every job of the service, its sessions and their members (under one condition variable)."""

    def __init__(self, store: Store, fabric: Fabric, limits: Limits = Limits(), secret: str | None = None):
        self.store, self.fabric, self.limits = store, fabric, limits
        self.secret_hash = token_hash(secret) if secret else None
        self.cond = threading.Condition()
        self.jobs = store.jobs()
        self.seen: dict[tuple[str, int], float] = {}
        for job in self.jobs.values():
            if job.state == "forming":   # its waiters died with the old service: they rejoin
                job.members, job.state = {}, "failed" if job.job_id else "created"
                store.put_jobs(job)
        self.grant_grace()

    def grant_grace(self) -> None:
        """Every member of a stored session counts as heard from now plus one timeout (twice the
        timeout to reconnect).  Called when the book is built and again once the restarted
        service listens: its start-up (building and checking the program, restoring switches)
        may take longer than the timeout on a loaded machine, and no heartbeat can arrive before."""
        now = time.monotonic() + self.limits.heartbeat_timeout_s
        with self.cond:
            for job in self.jobs.values():
                self.seen.update(((job.name, r), now) for r in job.members)

    # ------------------------------------------------------------ admission
    def refuse(self, reason: str, message: str) -> Refused:
        self.store.count(reason)
        return Refused(reason, message)

    def _authorised(self, name: str, token: str, world_size: int | None = None) -> JobRecord:
        job = self.jobs.get(name)
        secret_ok = self.secret_hash is not None and hmac.compare_digest(token_hash(token), self.secret_hash)
        if job is None:
            if world_size is None or not secret_ok:   # only the shared secret creates jobs on join
                raise self.refuse("unknown_job", f"unknown job {name!r} (create it with `dhc-ctl jobs "
                                                 "create`, or join with the service's shared secret)")
            return self._new_job(name, world_size)
        if not (secret_ok or hmac.compare_digest(token_hash(token), job.token_hash)):
            raise self.refuse("token", f"job {name!r}: wrong token")
        return job

    def _new_job(self, name: str, world_size: int, token: str | None = None) -> JobRecord:
        if not name or len(name) > NAME_LIMIT:
            raise self.refuse("bad_request", f"job name must have 1..{NAME_LIMIT} characters")
        if not 1 <= world_size <= MAX_WORLD_SIZE:
            raise self.refuse("world_size", f"world size {world_size} is not in 1..{MAX_WORLD_SIZE}")
        job = JobRecord(name, token_hash(token) if token else (self.secret_hash or ""), world_size,
                        self.fabric.lanes, self.limits.window, self.limits.bytes_per_iteration)
        self.jobs[name] = job
        self.store.put_jobs(job)
        return job

    def create(self, name: str, world_size: int) -> str:
        """A new job and its token (printed once; only its hash is kept)."""
        with self.cond:
            if name in self.jobs:
                raise self.refuse("exists", f"job {name!r} exists already")
            token = secrets.token_urlsafe(24)
            self._new_job(name, world_size, token)
            return token

    def _check(self, job: JobRecord, a: JoinArgs) -> None:
        if a.world_size != job.world_size:
            raise self.refuse("world_size", f"job {job.name!r} has world size {job.world_size}; rank "
                                            f"{a.rank} asked for {a.world_size} (the world size cannot "
                                            "change mid-job)")
        if not 0 <= a.rank < job.world_size:
            raise self.refuse("rank", f"job {job.name!r}: rank {a.rank} is out of range "
                                      f"0..{job.world_size - 1}")
        if a.lanes and a.lanes != self.fabric.lanes:
            raise self.refuse("parameters", f"job {job.name!r}: {a.lanes} lanes asked; this fabric's program "
                                            f"is built for {self.fabric.lanes}")
        if a.window and a.window != job.window:
            if job.job_id is not None:
                raise self.refuse("parameters", f"job {job.name!r} is placed with window {job.window}; "
                                                f"rank {a.rank} asked for {a.window}")
            job.window = a.window
        if a.bytes_per_iteration and job.job_id is None:
            job.bytes_per_iteration = a.bytes_per_iteration

    def join(self, a: JoinArgs, alive: Callable[[], bool] = lambda: True) -> Joined:
        """Join rank ``a.rank`` to the job's forming session and wait until every rank has and the
        session's epoch is installed (or refuse, naming what is wrong or which ranks are missing)."""
        host = self.fabric.ip_to_host.get(a.host_ip)
        with self.cond:
            if host is None:
                raise self.refuse("host", f"{a.host_ip!r} is not the address of a host of fabric "
                                          f"{self.fabric.topo.name}")
            job = self._authorised(a.job, a.token, a.world_size)
            self._check(job, a)
            self._open_session(job, a)
            if a.rank in job.members:
                raise self.refuse("duplicate_rank", f"job {job.name!r}: rank {a.rank} has joined session "
                                                    f"{job.session} already (from {job.members[a.rank]})")
            job.members[a.rank] = a.host_ip
            self.seen[(job.name, a.rank)] = time.monotonic()
            self.store.put_jobs(job)
            session, complete = job.session, len(job.members) == job.world_size
        if complete:
            self._activate(job.name, session)
        return self._wait(job, a, session, alive)

    def _open_session(self, job: JobRecord, a: JoinArgs) -> None:
        """Make the job's current session one ``a`` may join: a running session that a rank joins
        again under a new key, after leaving, or after going silent is over; so is a forming one
        of another key."""
        if job.state == "running":
            silent = time.monotonic() - self.seen.get((job.name, a.rank), 0.0)
            stale = silent > self.limits.heartbeat_timeout_s
            if a.session_key != job.session_key or a.rank not in job.members or stale:
                self.end_session(job, f"rank {a.rank} joined again (session key {a.session_key!r})", "failed")
            else:
                return
        elif job.state == "forming" and a.session_key != job.session_key:
            self.end_session(job, f"superseded by session key {a.session_key!r}", "failed")
        if job.state != "forming":
            job.session += 1
            job.session_key, job.state, job.members = a.session_key, "forming", {}

    def end_session(self, job: JobRecord, why: str, state: str) -> None:
        """Under the lock: the session is over; waiters wake; the epoch is moved by the caller."""
        job.state, job.last_failure = state, why if state == "failed" else job.last_failure
        if state == "failed":
            log.info("job %s: session %d over: %s", job.name, job.session, why)
        self.store.put_jobs(job)
        self.cond.notify_all()

    def _wait(self, job: JobRecord, a: JoinArgs, session: int, alive: Callable[[], bool]) -> Joined:
        name = job.name
        wait = a.wait_s if a.wait_s > 0 else self.limits.join_timeout_s
        deadline = time.monotonic() + min(wait, self.limits.join_timeout_s)
        with self.cond:
            while job.session == session and job.state == "forming":
                left = deadline - time.monotonic()
                if left <= 0 or not alive():
                    missing = sorted(set(range(job.world_size)) - set(job.members))
                    job.members.pop(a.rank, None)
                    self.store.put_jobs(job)
                    raise self.refuse("join_timeout", f"job {name!r}: rank(s) {missing} did not join within "
                                                      f"{wait:g} s (session {session})")
                self.cond.wait(min(left, 0.5))
            if job.session != session or job.state != "running":
                why = job.last_failure or "superseded"
                raise Refused("placement" if why.startswith("cannot place") else "session",
                              f"job {name!r}: session {session} did not start: {why}")
            job_id, epoch, world, members = job.job_id, job.epoch, job.world_size, dict(job.members)
        # outside the condition: the fabric's lock is always taken first (see _activate)
        ep = self.fabric.endpoint(job_id, self.fabric.ip_to_host[members[a.rank]], epoch)
        peers = tuple((r, ip) for r, ip in sorted(members.items()) if r != a.rank)
        return Joined(job_id, ep["child_id"], ep["switch_ip"], ep["window"], ep["lanes"], epoch, world,
                      session, peers)

    # ------------------------------------------------------------ activation (fabric)
    def _free_job_id(self) -> int:
        used = {j.job_id for j in self.jobs.values() if j.job_id is not None}
        return next(i for i in range(1, len(used) + 2) if i not in used)

    def _activate(self, name: str, session: int) -> None:
        """Every rank has joined: place/deploy the job and install a fresh epoch (fabric lock)."""
        with self.fabric.lock:
            with self.cond:
                job = self.jobs[name]
                if job.session != session or job.state != "forming" or len(job.members) != job.world_size:
                    return   # superseded, or a waiter gave up meanwhile: the next join completes it
                job_id = job.job_id or self._free_job_id()
                # as they are now: a waiter that gives up during the deployment leaves members
                workers = [job.members[r] for r in range(job.world_size)]
                hosts = tuple(self.fabric.ip_to_host[ip] for ip in workers)
                placed = PlacedJob(job_id, hosts, job.bytes_per_iteration, job.window, job.lanes)
                old_epoch = job.epoch
            try:
                moved: tuple[int, ...] = ()
                if self.fabric.jobs.get(job_id) != placed:
                    moved = self.fabric.admit(placed, {job_id: old_epoch}).moved
                else:
                    self.fabric.deploy({job_id}, {job_id: old_epoch})  # restores a restarted switch
                epoch = self.fabric.new_epoch(job_id, {old_epoch})
            except ControllerError as err:
                with self.cond:
                    self.store.count("placement" if "placement" in str(err) else "deploy")
                    job.members, job.state = {}, "failed" if job.job_id else "created"
                    self.end_session(job, f"cannot place/deploy job {name!r}: {err}", "failed")
                    implicit = self.secret_hash is not None and job.token_hash == self.secret_hash
                    if job.job_id is None and implicit:
                        # made by these joins (shared secret) and never placed: refused without a trace
                        del self.jobs[name]
                        self.store.delete_job(name, placement=self.fabric.placement.to_json())
                return
            for other in moved:
                self._moved(other, name)
            with self.cond:
                job.job_id, job.epoch = job_id, epoch
                job.workers = workers
                self.store.count("epoch_moved")
                if job.session == session and job.state == "forming":
                    job.state = "running"
                    log.info("job %s: session %d running at epoch %d", name, session, epoch)
                    now = time.monotonic()
                    self.seen.update(((name, r), now) for r in job.members)
                self.store.put_jobs(job, placement=self.fabric.placement.to_json())
                self.cond.notify_all()

    def _moved(self, job_id: int, by: str) -> None:
        with self.cond:
            job = next(j for j in self.jobs.values() if j.job_id == job_id)
            if job.state in ("running", "forming"):
                self.end_session(job, f"moved to make room for job {by!r}", "failed")
        self.move_epoch(job.name)

    def move_epoch(self, name: str) -> int | None:
        """A fresh epoch for the job on its switches (after a failed or abandoned session)."""
        with self.fabric.lock:
            job = self.jobs[name]
            if job.job_id is None or job.job_id not in self.fabric.jobs:
                return None
            try:
                epoch = self.fabric.new_epoch(job.job_id, {job.epoch})
            except ControllerError as err:   # a switch is down: the next session's start retries
                with self.cond:
                    job.last_failure += f"; epoch not moved yet: {err}"
                    self.store.put_jobs(job)
                return None
            with self.cond:
                job.epoch = epoch
                log.info("job %s: moved to epoch %d", name, epoch)
                self.store.count("epoch_moved")
                self.store.put_jobs(job)
            return epoch

    # ------------------------------------------------------------ running sessions
    def _member(self, name: str, token: str, rank: int, session: int) -> JobRecord:
        job = self._authorised(name, token)
        if rank not in job.members or session != job.session:
            raise self.refuse("session", f"job {name!r}: rank {rank} is not in session {session} "
                                         f"(current session {job.session})")
        return job

    def heartbeat(self, name: str, token: str, rank: int, session: int) -> tuple[bool, str]:
        """(session still good, why not): a rank's sign of life."""
        with self.cond:
            job = self._authorised(name, token)
            if session != job.session or job.state not in ("running", "forming"):
                return False, job.last_failure or f"session {session} is over"
            self.seen[(name, rank)] = time.monotonic()
            return True, ""

    def fail(self, name: str, token: str, rank: int, session: int, reason: str) -> str:
        """A rank reports that its session failed: the session ends and the job moves to a new epoch."""
        with self.cond:
            job = self._member(name, token, rank, session)
            if job.state not in ("running", "forming"):
                return f"session {session} was over already"
            self.end_session(job, f"rank {rank} reported: {reason[:500]}", "failed")
        epoch = self.move_epoch(name)
        if epoch is None:
            return (f"session {session} failed; job {name!r} gets a new epoch as soon as its switches "
                    "answer again (the next session starts with one in any case)")
        return f"session {session} failed; job {name!r} moved to epoch {epoch}"

    def leave(self, name: str, token: str, rank: int, session: int) -> str:
        """A rank ends its session; when the last one has left, the job's entries and region go."""
        with self.cond:
            job = self._member(name, token, rank, session)
            del job.members[rank]
            self.seen.pop((name, rank), None)
            done = not job.members and job.state == "running"
            if done:
                job.state = "idle"
            self.store.put_jobs(job)
        if done:
            self._release(name)
        return f"rank {rank} left session {session}"

    def _release(self, name: str) -> None:
        with self.fabric.lock:
            job = self.jobs.get(name)
            if job is None or job.job_id is None or job.members:
                return
            try:
                self.fabric.remove(job.job_id)
            except ControllerError as err:
                with self.cond:
                    job.last_failure = f"entries not removed: {err}"
                    self.store.put_jobs(job)
                return
            with self.cond:
                job.job_id, job.workers = None, []
                self.store.put_jobs(job, placement=self.fabric.placement.to_json())

    def delete(self, name: str) -> None:
        with self.cond:
            if name not in self.jobs:
                raise self.refuse("unknown_job", f"unknown job {name!r}")
            job = self.jobs[name]
            job.members = {}
            self.end_session(job, "deleted", "failed")
        self._release(name)
        with self.cond:
            del self.jobs[name]
            self.store.delete_job(name, placement=self.fabric.placement.to_json())

    def check_heartbeats(self) -> list[str]:
        """End every running session with a silent rank (and move its job's epoch); the jobs ended."""
        now, ended = time.monotonic(), []
        with self.cond:
            for job in self.jobs.values():
                if job.state != "running":
                    continue
                silent = sorted(r for r in job.members
                                if now - self.seen.get((job.name, r), now) > self.limits.heartbeat_timeout_s)
                if silent:
                    self.end_session(job, f"rank(s) {silent} missed heartbeats for "
                                           f"{self.limits.heartbeat_timeout_s:g} s", "failed")
                    ended.append(job.name)
        for name in ended:
            self.move_epoch(name)
        return ended

    def snapshot(self) -> list[tuple[JobRecord, dict[int, float]]]:
        """Every job with its members' seconds since their last heartbeat."""
        now = time.monotonic()
        with self.cond:
            return [(JobRecord(**{**job.__dict__, "members": dict(job.members)}),
                     {r: now - self.seen.get((job.name, r), now) for r in job.members})
                    for job in self.jobs.values()]

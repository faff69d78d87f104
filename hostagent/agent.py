"""The worker's AllReduce API over the in-network transport.

``Agent(endpoint, n_workers).allreduce(x)`` runs the codec's rounds for ``x`` through the
switches of the job's tree and returns the decoded sum — the codec guarantees it is the exact
sum of the quantised inputs, or raises.  One ``Agent`` per (host, job): its transport keeps the
job's chunk sequence across calls, which is what keeps the switch's slots in step.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dhc.codec import make_worker
from dhc.protocol import run_worker
from hostagent.chunk_state import ChunkPosition, position_for
from hostagent.reducer import NetworkReducer
from hostagent.service_client import JobSession, JoinConfig
from hostagent.transport import ChunkTransport, JobEndpoint, RetryPolicy


@dataclass
class AllReduceReport:
    """What one AllReduce cost this worker."""

    codec: str
    elements: int
    rounds: int
    seconds: float
    bytes_sent: int
    bytes_received: int
    dense_float32_bytes: int
    packets_sent: int
    retransmissions: int
    duplicate_results: int
    malformed_ignored: int
    scale: float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class Agent:
    """One worker of one job: its AllReduce runs the codec's rounds through the job's switches.

    One ``Agent`` per (host, job): its transport keeps the job's chunk sequence across calls,
    which is what keeps the switches' slots in step.  Close it (or use it as a context manager)
    to pad the stream to a 2W-chunk boundary so the job's next session starts cleanly.

    Parameters
    ----------
    endpoint : hostagent.transport.JobEndpoint
        Where and as whom the worker talks to the network (from the job manifest, ``dhc-agent``
        flags, or the job service: :meth:`join`).
    n_workers : int
        Workers of the job.
    codec : {"hg", "dense"}
        HG-Sketch (default) or the dense baseline.
    retry : hostagent.delivery.RetryPolicy, optional
        Timeouts, backoff and the retry budget.
    codec_params : dict, optional
        Codec parameters, the same on every worker.
    session : hostagent.service_client.JobSession, optional
        The job service's session (set by :meth:`join`).

    Raises
    ------
    ValueError
        For an endpoint the transport refuses (window, epoch).
    OSError
        If the job's worker port cannot be bound.

    Examples
    --------
    A job of one worker on the loopback interface.  Its switch is played by a thread that
    answers every DATA frame with its RESULT -- the aggregate over one worker is the frame's own
    lanes (what ``dhc.p4`` returns for a job with one child):

    >>> import socket, threading
    >>> from dhcwire import header as wire
    >>> from hostagent.transport import JobEndpoint
    >>> switch = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    >>> switch.bind(("127.0.0.1", 0)); switch.settimeout(0.05)
    >>> done = threading.Event()
    >>> def aggregate_one_worker(sock, done):
    ...     result = bytes([(wire.DHC_VERSION << 4) | wire.PacketType.RESULT])
    ...     while not done.is_set():
    ...         try:
    ...             frame, worker = sock.recvfrom(2048)
    ...         except TimeoutError:
    ...             continue
    ...         sock.sendto(result + frame[1:], worker)
    >>> t = threading.Thread(target=aggregate_one_worker, args=(switch, done))
    >>> t.start()
    >>> ep = JobEndpoint(job_id=4321, child_id=0, switch_ip="127.0.0.1", window=8, lanes=16,
    ...                  bind_ip="127.0.0.1", switch_port=switch.getsockname()[1])
    >>> with Agent(ep, n_workers=1, codec="dense") as agent:
    ...     total, report = agent.allreduce(np.array([1.5, -2.0, 0.25], np.float32))
    >>> done.set(); t.join(); switch.close()
    >>> total.tolist(), report.rounds, report.retransmissions
    ([1.5, -2.0, 0.25], 2, 0)
    """

    def __init__(self, endpoint: JobEndpoint, n_workers: int, codec: str = "hg",
                 retry: RetryPolicy | None = None, codec_params: dict | None = None,
                 session: JobSession | None = None):
        self.endpoint = endpoint
        self.n_workers = n_workers
        self.codec = codec
        self.codec_params = dict(codec_params or {})
        #: sessions that keep the job's epoch (no job service) resume its chunk sequence: the
        #: switch drops an older chunk of the same session as stale (hostagent/chunk_state.py)
        self.position: ChunkPosition | None = None if session is not None else position_for(endpoint)
        first = self.position.load() if self.position is not None else 0
        self.transport = ChunkTransport(endpoint, retry, first_chunk=first)
        self.failed = False
        #: the job service's session this agent runs in (``Agent.join``), or None (manifest/flags)
        self.session = session
        #: the job service's answer to this agent's failure report ("... moved to epoch N")
        self.service_ack = ""
        if session is not None:
            self.transport.recovery_hint = session.recovery_hint()

    @classmethod
    def join(cls, cfg: JoinConfig, codec: str = "hg", retry: RetryPolicy | None = None,
             codec_params: dict | None = None) -> Agent:
        """An agent for the endpoint the job service grants (``hostagent/service_client.py``):
        failures are reported to it, and closing leaves the session."""
        session = JobSession.join(cfg)
        try:
            return cls(session.endpoint, session.n_workers, codec, retry, codec_params, session)
        except BaseException:
            session.report_failure("agent could not start")
            raise

    @property
    def recovery_hint(self) -> str:
        """What the error of a failed AllReduce tells the user to do: nothing under the job
        service (it moves the epoch itself), ``dhc-ctl jobs reset`` with a manifest."""
        return self.transport.recovery_hint

    def fail(self, reason: str) -> None:
        """Mark the session failed and tell the job service (it moves the job to a new epoch)."""
        self.failed = True
        if self.session is not None:
            session, self.session = self.session, None
            self.service_ack = session.report_failure(reason)

    def close(self, finish: bool = True) -> None:
        """Leave the job: pad the stream to a 2W boundary (unless ``finish`` is False or the
        session failed, when no peer could complete the padding anyway), close the socket."""
        try:
            if finish and not self.failed:
                self.transport.finish()
                if self.position is not None:
                    self.position.save(self.transport.next_chunk)
        except BaseException as err:
            self.fail(f"closing padding failed: {err}")
            raise
        finally:
            self.transport.close()
            if self.session is not None:
                session, self.session = self.session, None
                if finish and not self.failed:
                    session.leave()
                else:
                    session.report_failure("session closed without finishing")

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, exc_type, *exc: object) -> None:
        self.close(finish=exc_type is None)

    def allreduce(self, x: np.ndarray, progress: Callable[[int], None] | None = None
                  ) -> tuple[np.ndarray, AllReduceReport]:
        """Sum ``x`` over the job's workers in the network.

        Parameters
        ----------
        x : numpy.ndarray
            This worker's tensor; every worker of the job passes one of the same shape.
        progress : callable, optional
            Called with the number of chunks completed, as they complete.

        Returns
        -------
        sum : numpy.ndarray
            float32, the exact sum of the quantised inputs of every worker.
        report : AllReduceReport
            What this AllReduce cost this worker (rounds, bytes, retransmissions, scale).

        Raises
        ------
        hostagent.transport.TransportTimeout
            When a chunk's retry budget is spent; it names who stopped answering.  The session
            is marked failed (and the job service told) on any error.

        Examples
        --------
        See :class:`Agent`.
        """
        stats = self.transport.stats
        before = dict(stats.as_dict())
        worker = make_worker(x, self.n_workers, self.codec, **self.codec_params)
        reducer = NetworkReducer(self.transport, progress)
        t0 = time.perf_counter()
        try:
            run_worker(worker, reducer)
            result = worker.result()
        except BaseException as err:
            self.fail(f"{type(err).__name__}: {err}")
            raise
        elapsed = time.perf_counter() - t0
        after = stats.as_dict()
        delta = {k: after[k] - before[k] for k in after if isinstance(after[k], int)}
        report = AllReduceReport(
            codec=self.codec, elements=int(np.asarray(x).size), rounds=reducer.rounds,
            seconds=elapsed, bytes_sent=delta["bytes_sent"],
            bytes_received=delta["bytes_received"],
            dense_float32_bytes=int(np.asarray(x).size) * 4, packets_sent=delta["packets_sent"],
            retransmissions=delta["retransmissions"],
            duplicate_results=delta["duplicate_results"],
            malformed_ignored=delta["malformed_ignored"], scale=float(worker.scale))
        return result, report

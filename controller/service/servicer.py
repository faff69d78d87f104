"""The gRPC face of the job service: request checks, refusals as gRPC errors, messages.

Every handler checks the request's size first (``MAX_REQUEST_BYTES``; gRPC itself drops
messages over ``MAX_MESSAGE_BYTES``), then hands it to the :class:`JobBook`.  A refusal is a
gRPC error with a status code that says what kind of problem it is and a message that says
what exactly; it changes nothing and is counted by reason (``Status``).
"""

from __future__ import annotations

import hmac
import logging

import grpc

from controller.errors import ControllerError
from controller.service.sessions import JobBook, JoinArgs, Refused, token_hash
from dhcwire import header as wire
from dhcwire.jobservice import pb, rpc

log = logging.getLogger("dhc.service")

#: Largest request the service reads (a join is ~200 bytes); larger ones are refused and counted.
MAX_REQUEST_BYTES = 4096
#: gRPC's own limit on a received message (refused by gRPC before any handler runs).
MAX_MESSAGE_BYTES = 64 * 1024

CODES = {
    "token": grpc.StatusCode.UNAUTHENTICATED,
    "admin": grpc.StatusCode.PERMISSION_DENIED,
    "unknown_job": grpc.StatusCode.NOT_FOUND,
    "exists": grpc.StatusCode.ALREADY_EXISTS,
    "duplicate_rank": grpc.StatusCode.ALREADY_EXISTS,
    "world_size": grpc.StatusCode.FAILED_PRECONDITION,
    "session": grpc.StatusCode.FAILED_PRECONDITION,
    "placement": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "deploy": grpc.StatusCode.UNAVAILABLE,
    "too_large": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "join_timeout": grpc.StatusCode.DEADLINE_EXCEEDED,
}


class JobService(rpc.JobServiceServicer):
    """``JobService`` of ``dhcwire/jobservice/jobservice.proto`` over a :class:`JobBook`."""

    def __init__(self, book: JobBook, admin_token: str | None = None):
        self.book = book
        self.admin_hash = token_hash(admin_token) if admin_token else None

    def _guard(self, request, context: grpc.ServicerContext, fn):
        try:
            if request.ByteSize() > MAX_REQUEST_BYTES:
                raise self.book.refuse("too_large", f"request of {request.ByteSize()} bytes refused "
                                                    f"(limit {MAX_REQUEST_BYTES})")
            return fn()
        except Refused as err:
            context.abort(CODES.get(err.reason, grpc.StatusCode.INVALID_ARGUMENT), str(err))
        except ControllerError as err:   # a switch that cannot be reached, a write it rejected
            log.warning("%s", err)
            context.abort(grpc.StatusCode.UNAVAILABLE, str(err))
        except Exception as err:  # noqa: BLE001 - a bug of ours: logged, reported, the service stays up
            log.exception("internal error")
            context.abort(grpc.StatusCode.INTERNAL, f"internal error of the job service: {err!r}")

    def _admin(self, token: str) -> None:
        if self.admin_hash is None:
            raise self.book.refuse("admin", "this service has no admin token (--admin-token-file): "
                                            "jobs cannot be created or deleted remotely")
        if not hmac.compare_digest(token_hash(token), self.admin_hash):
            raise self.book.refuse("admin", "wrong admin token")

    def JoinJob(self, request, context):  # noqa: N802 - gRPC method names
        def run():
            a = JoinArgs(request.job, request.token, request.rank, request.world_size, request.host_ip,
                         request.session_key, request.lanes, request.window, request.bytes_per_iteration,
                         request.wait_s)
            j = self.book.join(a, alive=context.is_active)
            return pb.Endpoint(job_id=j.job_id, child_id=j.child_id, switch_ip=j.switch_ip,
                               switch_port=wire.DHC_UDP_PORT, worker_port=wire.worker_port(j.job_id),
                               window=j.window, lanes=j.lanes, epoch=j.epoch, world_size=j.world_size,
                               peers=[pb.Peer(rank=r, host_ip=ip) for r, ip in j.peers], session=j.session,
                               heartbeat_interval_s=self.book.limits.heartbeat_interval_s)
        return self._guard(request, context, run)

    def Heartbeat(self, request, context):  # noqa: N802
        def run():
            ok, why = self.book.heartbeat(request.job, request.token, request.rank, request.session)
            return pb.HeartbeatReply(session_ok=ok, reason=why)
        return self._guard(request, context, run)

    def ReportFailure(self, request, context):  # noqa: N802
        r = request.ref
        return self._guard(request, context, lambda: pb.Ack(
            message=self.book.fail(r.job, r.token, r.rank, r.session, request.reason)))

    def LeaveJob(self, request, context):  # noqa: N802
        return self._guard(request, context, lambda: pb.Ack(
            message=self.book.leave(request.job, request.token, request.rank, request.session)))

    def CreateJob(self, request, context):  # noqa: N802
        def run():
            self._admin(request.admin_token)
            return pb.CreateJobReply(token=self.book.create(request.job, request.world_size))
        return self._guard(request, context, run)

    def DeleteJob(self, request, context):  # noqa: N802
        def run():
            self._admin(request.admin_token)
            self.book.delete(request.job)
            return pb.Ack(message=f"job {request.job!r} deleted")
        return self._guard(request, context, run)

    def _jobs(self) -> list:
        out = []
        for job, ages in self.book.snapshot():
            regions = self.book.fabric.regions(job.job_id) if job.job_id else []
            out.append(pb.JobInfo(
                name=job.name, job_id=job.job_id or 0, world_size=job.world_size, epoch=job.epoch,
                state=job.state, session=job.session, last_failure=job.last_failure,
                members=[pb.Member(rank=r, host_ip=ip, seconds_since_heartbeat=ages[r])
                         for r, ip in sorted(job.members.items())],
                regions=[pb.Region(switch=s, base=b, slots=n) for s, b, n in regions]))
        return out

    def ListJobs(self, request, context):  # noqa: N802
        return self._guard(request, context, lambda: pb.ListJobsReply(jobs=self._jobs()))

    def Status(self, request, context):  # noqa: N802
        def run():
            counters = self.book.store.counters()
            moved = counters.pop("epoch_moved", 0)
            return pb.StatusReply(fabric=self.book.fabric.topo.name, switches=sorted(self.book.fabric.addrs),
                                  jobs=self._jobs(), epochs_moved=moved,
                                  refused=[pb.Counter(name=k, count=v) for k, v in sorted(counters.items())])
        return self._guard(request, context, run)

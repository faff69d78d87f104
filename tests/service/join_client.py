"""Refused requests sent to the job service over the Mininet network, from a Mininet host.

Run by ``test_service_mininet.py`` in a host's namespace as
``python -m tests.service.join_client ADDR SECRET``, driven over stdin/stdout (one JSON line each):

1. two jobs of two ranks each (``big1`` on h1/h2, ``big2`` on h3/h4, window 1024: together they
   fill s1's registers) join at the same moment; prints ``{"ready": ...}`` with their regions;
2. on ``go``: every refusal in ``REFUSALS`` (a raw JoinJob each) and a third job, ``big3``, that
   does not fit; prints ``{"refused": [[case, code, details], ...]}``;
3. on ``leave``: both jobs leave; exits 0.
"""

from __future__ import annotations

import json
import sys
import threading

import grpc

from dhcwire.jobservice import open_channel, pb, rpc
from hostagent.service_client import JobSession, JoinConfig, ServiceError

HOSTS = ("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4")
WINDOW = 1024
#: case -> JoinRequest fields over a valid join of big1's rank 0 (which is in the running session)
REFUSALS = {
    "token": {"token": "wrong"},
    "unknown_job": {"job": "ghost", "token": "wrong"},
    "duplicate_rank": {},
    "too_large": {"job": "x" * 5000},
}


def join_all(addr: str, secret: str, jobs: dict[str, tuple[str, ...]], wait_s: float) -> dict[str, list]:
    out: dict[str, list] = {name: [None] * len(hosts) for name, hosts in jobs.items()}

    def one(name: str, rank: int) -> None:
        hosts = jobs[name]
        try:
            out[name][rank] = JobSession.join(JoinConfig(addr, name, rank, len(hosts), hosts[rank],
                                                         token=secret, window=WINDOW, wait_s=wait_s))
        except ServiceError as err:
            out[name][rank] = err
    threads = [threading.Thread(target=one, args=(n, r)) for n, hs in jobs.items() for r in range(len(hs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def refusals(addr: str, secret: str) -> list[list]:
    out = []
    with open_channel(addr) as ch:
        stub = rpc.JobServiceStub(ch)
        for case, fields in REFUSALS.items():
            req = pb.JoinRequest(**{"job": "big1", "token": secret, "rank": 0, "world_size": 2,
                                    "host_ip": HOSTS[0], "window": WINDOW, "wait_s": 2.0, **fields})
            try:
                stub.JoinJob(req, timeout=10)
                out.append([case, "OK", ""])
            except grpc.RpcError as err:
                out.append([case, err.code().name, err.details()])
    third = join_all(addr, secret, {"big3": HOSTS[:2]}, wait_s=10)["big3"]
    out.append(["third_job", "OK" if isinstance(third[0], JobSession) else "refused", str(third[0])])
    return out


def main() -> int:
    addr, secret = sys.argv[1], sys.argv[2]
    sessions = join_all(addr, secret, {"big1": HOSTS[:2], "big2": HOSTS[2:]}, wait_s=30)
    ok = all(isinstance(s, JobSession) for ss in sessions.values() for s in ss)
    print(json.dumps({"ready": ok, "errors": [str(s) for ss in sessions.values() for s in ss
                                              if not isinstance(s, JobSession)]}), flush=True)
    if not ok:
        return 1
    for line in sys.stdin:
        if line.strip() == "go":
            print(json.dumps({"refused": refusals(addr, secret)}), flush=True)
        elif line.strip() == "leave":
            break
    for ss in sessions.values():
        for s in ss:
            s.leave()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Retransmission timers of the delivery engine as ChunkTransport drives it: a RESULT restarts
backed-off timers (RFC 6298 5.3)."""

from __future__ import annotations

import time

import numpy as np

from hostagent.delivery import Outstanding, RetryPolicy
from hostagent.transport import ChunkTransport, JobEndpoint


def test_new_results_restart_backed_off_chunks_older_than_the_newest_result() -> None:
    ep = JobEndpoint(job_id=3, child_id=0, switch_ip="127.0.0.1", window=8, lanes=4,
                     bind_ip="127.0.0.1")
    with ChunkTransport(ep, RetryPolicy(initial_timeout=0.1, max_timeout=2.0)) as t:
        out = Outstanding(6)
        now = time.monotonic()
        out.tries[:] = [0, 3, 3, 0, 2, 1]
        out.timeout[:] = [0.1, 0.8, 1.6, 0.1, 0.4, 0.2]
        out.deadline[:] = now + out.timeout
        out.done[3] = True                      # chunk 3 already has its RESULT
        out.deadline[3] = np.inf
        before = out.deadline.copy()
        t.delivery.restart_backed_off(out, 0, 5)        # chunk 5 is beyond the sent range
        rto = t.rto
        assert out.deadline[0] == before[0]                                    # never resent
        assert out.deadline[3] == np.inf                                       # done
        assert out.deadline[4] == before[4] and out.timeout[4] == 0.4          # newer than 3
        assert out.deadline[5] == before[5] and out.timeout[5] == 0.2          # not sent yet
        for i, old in ((1, 0.8), (2, 1.6)):                                    # older, backed off
            assert out.timeout[i] == min(rto, old)
            assert out.deadline[i] <= time.monotonic() + rto
            assert out.deadline[i] < before[i]
        assert list(out.tries) == [0, 3, 3, 0, 2, 1]                           # still bounded

"""Who the error names when nothing answers (real sockets on loopback; the ARP case of a dead
switch runs in Mininet: tests/e2e/test_recovery.py)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dhcwire import header as wire
from hostagent.liveness import switch_answers_arp
from hostagent.transport import ChunkTransport, JobEndpoint, RetryPolicy, TransportTimeout

FAST = RetryPolicy(initial_timeout=0.05, max_timeout=0.1, max_retries=2, min_timeout=0.05)


def _endpoint(ip: str, peers) -> JobEndpoint:
    # the "switch" is a loopback address nobody serves: DATA goes unanswered
    return JobEndpoint(job_id=9, child_id=0, switch_ip="127.0.0.9", window=4, lanes=4, bind_ip=ip,
                       peers=tuple(peers))


def test_arp_cannot_be_asked_on_loopback() -> None:
    assert switch_answers_arp("127.0.0.9") is None


def test_all_peers_silent_names_them_and_the_switch() -> None:
    with ChunkTransport(_endpoint("127.0.0.1", [("h2", "127.0.0.2")]), FAST) as t:
        with pytest.raises(TransportTimeout) as info:
            t.exchange(np.full(1, int(wire.Level.DENSE)), np.zeros((1, 4), dtype=np.uint32))
    msg = str(info.value)
    assert "h2 (127.0.0.2)" in msg and "or switch 127.0.0.9" in msg
    assert "dhc-ctl jobs reset --job 9" in msg


def test_answering_peer_is_not_blamed() -> None:
    peer = ChunkTransport(_endpoint("127.0.0.2", [("h1", "127.0.0.1")]), FAST)
    stop = threading.Event()

    def serve() -> None:   # a live peer: answers liveness probes while its own exchange waits
        while not stop.is_set():
            peer._drain(None)
            stop.wait(0.01)

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    try:
        with ChunkTransport(_endpoint("127.0.0.1", [("h2", "127.0.0.2")]), FAST) as t:
            with pytest.raises(TransportTimeout) as info:
                t.exchange(np.full(1, int(wire.Level.DENSE)), np.zeros((1, 4), dtype=np.uint32))
    finally:
        stop.set()
        th.join(2)
        peer.close()
    msg = str(info.value)
    assert "every peer worker answers" in msg and "h2" not in msg.split("every peer")[0]

"""StreamChannels from silent, slow and hostile clients cannot lock the controller out (issue 30,
item 3).

Before: the server capped streams at 8 with no arbitration timeout, so 8 streams that never
arbitrated made every ``dhc-ctl deploy`` fail "too many open StreamChannels" for as long as they
stayed open.  Now a stream must arbitrate within the arbitration timeout, a newcomer evicts a
pending stream past its grace, and an arbitrating controller evicts an idle backup with a lower
election id."""

from __future__ import annotations

import queue
import threading
import time

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controller.p4rt_client import SwitchConnection
from tests.robustness.p4rt_fixture import IdleStreams, local_insert, running_switch

TIMEOUT = 1.5   # the arbitration timeout these tests run the server with (default 3 s)


class Backup:
    """A client that arbitrates with ``election_id`` and then holds its stream (hostile: it may
    re-send its arbitration every ``chatter`` seconds to look busy)."""

    def __init__(self, addr: str, election_id: int, delay: float = 0.0, chatter: float | None = None):
        self.channel = grpc.insecure_channel(addr)
        self.requests: queue.Queue = queue.Queue()
        self.answers: queue.Queue = queue.Queue()
        self.ended: grpc.StatusCode | None = None
        self.election_id = election_id
        self.stop = threading.Event()
        stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.call = stub.StreamChannel(iter(self.requests.get, None))
        threading.Thread(target=self._consume, daemon=True).start()
        threading.Thread(target=self._send, args=(delay, chatter), daemon=True).start()

    def _arbitration(self) -> p4runtime_pb2.StreamMessageRequest:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = 0
        if self.election_id:
            req.arbitration.election_id.low = self.election_id
        return req

    def _send(self, delay: float, chatter: float | None) -> None:
        if self.stop.wait(delay):
            return
        self.requests.put(self._arbitration())
        while chatter is not None and not self.stop.wait(chatter):
            self.requests.put(self._arbitration())

    def _consume(self) -> None:
        try:
            for msg in self.call:
                self.answers.put(msg.arbitration.status.code)
        except grpc.RpcError as err:
            self.ended = err.code()

    def first_answer(self, timeout: float = 5.0) -> int:
        return self.answers.get(timeout=timeout)

    def close(self) -> None:
        self.stop.set()
        self.requests.put(None)
        self.call.cancel()
        self.channel.close()


def _controller(sw, election_id: tuple[int, int], ip: int) -> tuple[SwitchConnection, float]:
    """Connect a controller as dhc-ctl does and write one entry; it and the seconds it took."""
    t0 = time.monotonic()
    conn = SwitchConnection(sw.conn.address, election_id=election_id, timeout=10)
    conn.connect()
    conn.names = sw.names
    conn.write([local_insert(sw.names, ip)])
    return conn, time.monotonic() - t0


def _controller_writes(sw, election_id: tuple[int, int], ip: int) -> float:
    conn, took = _controller(sw, election_id, ip)
    conn.close()
    return took


@pytest.mark.parametrize("silent", [8, 16, 64])
def test_silent_streams_do_not_lock_the_controller_out(silent: int) -> None:
    with running_switch(arbitration_timeout=TIMEOUT) as sw:
        sw.conn.close()
        idle = IdleStreams(sw.addr, silent)
        try:
            time.sleep(0.2)
            # the controller gets a place (evicting a silent stream past its grace) and writes
            took = _controller_writes(sw, (0, 1), 0x0A000001)
            assert took < TIMEOUT + 2
            time.sleep(TIMEOUT + 0.5)
            # every silent stream has ended: refused, evicted or timed out -- none holds a place
            assert len(idle.codes) == silent
            assert grpc.StatusCode.DEADLINE_EXCEEDED in idle.codes or silent > 4
            assert set(idle.codes) <= {grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.DEADLINE_EXCEEDED}
        finally:
            idle.close()


def test_a_stream_that_never_arbitrates_is_closed() -> None:
    with running_switch(arbitration_timeout=TIMEOUT) as sw:
        idle = IdleStreams(sw.addr, 1)
        try:
            time.sleep(TIMEOUT + 0.7)
            assert idle.codes == [grpc.StatusCode.DEADLINE_EXCEEDED]
        finally:
            idle.close()


def test_slow_client_that_arbitrates_in_time_is_served() -> None:
    with running_switch(arbitration_timeout=TIMEOUT) as sw:
        slow = Backup(sw.addr, 7, delay=TIMEOUT / 2)
        try:
            assert slow.first_answer() == 0     # OK: primary (7 > the fixture's 1)
            time.sleep(TIMEOUT)
            assert slow.ended is None            # arbitrated: no timeout applies any more
        finally:
            slow.close()


def test_hostile_backups_are_evicted_by_a_higher_election_id() -> None:
    with running_switch(arbitration_timeout=TIMEOUT) as sw:
        sw.conn.close()
        # 8 backups fill every arbitrated place, re-sending arbitration to look busy
        hostile = [Backup(sw.addr, i, chatter=0.2) for i in range(1, 9)]
        try:
            for h in hostile:
                h.first_answer()
            ctl, took = _controller(sw, (0, 100), 0x0A000002)
            assert took < 3
            time.sleep(0.3)
            evicted = [h for h in hostile if h.ended == grpc.StatusCode.RESOURCE_EXHAUSTED]
            assert len(evicted) == 1 and evicted[0].election_id < 8   # never the primary (8)
            # a newcomer lower than every backup is refused, and no backup is evicted for it
            low = Backup(sw.addr, 0)
            time.sleep(0.5)
            assert low.ended == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert sum(h.ended is not None for h in hostile) == 1
            low.close()
            ctl.close()
        finally:
            for h in hostile:
                h.close()

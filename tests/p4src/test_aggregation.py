"""One aggregating root switch, three workers: SUM/OR slots, duplicates, retransmissions after
completion, shadow-set reuse, two jobs side by side, two's-complement wraparound, K = 32 and
K = 256 (python and native backends)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dhcwire import header as wire
from dhcwire.p4names import C_DUP, DROP_DUP_PENDING
from tests.p4src.dhcnet import (
    Aggregator,
    Child,
    Host,
    Parsed,
    dhc_frame,
    drops,
    job_counts,
    load_switch,
    parse_dhc,
    program_job,
    program_switch_basics,
)

SWITCH = Host("s1", "00:00:00:00:01:00", "10.0.0.100")
WORKERS = [Host(f"w{i}", f"00:00:00:00:00:0{i + 1}", f"10.0.0.{i + 1}") for i in range(3)]
SUM_LEVEL = int(wire.Level.VALUE_SKETCH)
OR_LEVEL = int(wire.Level.BLOCK_INDEX)


@dataclass
class Rig:
    sw: object
    lanes: int
    agg: Aggregator

    def send(self, w: int, lanes: list[int], *, chunk: int = 0, level: int = SUM_LEVEL,
             job: int | None = None, window: int | None = None, **kw) -> list[tuple[int, bytes]]:
        """Worker ``w`` sends chunk ``chunk`` of ``job`` from its port (w + 1)."""
        win = self.agg.window if window is None else window
        frame = dhc_frame(WORKERS[w], SWITCH.mac, SWITCH.ip, lanes, job=self.agg.job if job is None else job,
                          chunk=chunk, slot=wire.slot_for_chunk(chunk, win), level=level, child_id=w, **kw)
        return self.sw.process(w + 1, frame)

    def parse(self, out: list[tuple[int, bytes]]) -> dict[int, Parsed]:
        ports = [p for p, _ in out]
        assert len(ports) == len(set(ports)), f"two packets on one port: {ports}"
        return {p: parse_dhc(f, self.lanes) for p, f in out}


def make_rig(lanes: int = 4, job: int = 7, base: int = 10, window: int = 4, stats_idx: int = 2,
             backend: str = "python") -> Rig:
    sw = load_switch(lanes=lanes, pool=64, backend=backend)
    program_switch_basics(sw, SWITCH, {w.ip: (w.mac, i + 1) for i, w in enumerate(WORKERS)})
    agg = Aggregator(job=job, base=base, window=window, own=SWITCH, stats_idx=stats_idx,
                     children=[Child(w, port=i + 1, child_id=i, rid=i + 1) for i, w in enumerate(WORKERS)])
    program_job(sw, agg)
    return Rig(sw, lanes, agg)


def assert_result_to_workers(rig: Rig, out: list[tuple[int, bytes]], expected: list[int], chunk: int) -> None:
    """Three replicas, one per worker port, each rewritten to that worker, carrying ``expected``."""
    got = rig.parse(out)
    assert sorted(got) == [1, 2, 3]
    for i, w in enumerate(WORKERS):
        p = got[i + 1]
        assert (p.eth_dst, p.eth_src, p.ip_dst, p.ip_src) == (w.mac, SWITCH.mac, w.ip, SWITCH.ip)
        assert p.ip_checksum_ok
        assert (p.udp_dport, p.udp_checksum) == (wire.worker_port(rig.agg.job), 0)
        assert p.header["pkt_type"] == wire.PacketType.RESULT
        assert p.header["chunk"] == chunk and p.header["job_id"] == rig.agg.job
        assert p.lanes == expected


def test_three_workers_sum_slot() -> None:
    rig = make_rig()
    contrib = [[1, 2, 3, 4], [10, 20, 30, 40], [100, 200, 300, 0xFFFFFFF0]]
    assert rig.send(0, contrib[0]) == []
    assert rig.send(1, contrib[1]) == []
    out = rig.send(2, contrib[2])
    expected = [int(v) for v in np.sum(np.array(contrib, dtype=np.uint32), axis=0, dtype=np.uint32)]
    assert_result_to_workers(rig, out, expected, chunk=0)
    assert job_counts(rig.sw, 2) == {"contributions": 3, "completions": 1, "duplicates": 0, "results": 1}
    assert drops(rig.sw) == {}


def test_three_workers_or_slot() -> None:
    rig = make_rig()
    contrib = [[0x1, 0x100, 0, 0x80000000], [0x2, 0x100, 0, 0x1], [0x4, 0x0, 0, 0x80000000]]
    rig.send(0, contrib[0], level=OR_LEVEL, chunk=1)
    rig.send(1, contrib[1], level=OR_LEVEL, chunk=1)
    out = rig.send(2, contrib[2], level=OR_LEVEL, chunk=1)
    expected = [int(v) for v in np.bitwise_or.reduce(np.array(contrib, dtype=np.uint32), axis=0)]
    assert_result_to_workers(rig, out, expected, chunk=1)


def test_sum_wraps_twos_complement() -> None:
    rig = make_rig()
    contrib = [[0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 5], [0x00000001, 0x00000001, 0x80000000, 0xFFFFFFFB],
               [0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]]
    rig.send(0, contrib[0])
    rig.send(1, contrib[1])
    out = rig.send(2, contrib[2])
    # as signed int32: -1+1-1, max+1+max, min+min+min, 5-5-1
    as_int = np.array(contrib, dtype=np.uint32).view(np.int32).astype(np.int64).sum(axis=0)
    expected = [int(v) & 0xFFFFFFFF for v in as_int]
    assert expected == [0xFFFFFFFF, 0xFFFFFFFF, 0x80000000, 0xFFFFFFFF]
    assert rig.parse(out)[1].lanes == expected


def test_duplicate_is_not_added_twice() -> None:
    rig = make_rig()
    rig.send(0, [1, 1, 1, 1])
    assert rig.send(0, [1, 1, 1, 1]) == []          # retransmission before completion: dropped
    assert drops(rig.sw) == {DROP_DUP_PENDING: 1}
    rig.send(1, [2, 2, 2, 2])
    out = rig.send(2, [4, 4, 4, 4])
    assert rig.parse(out)[3].lanes == [7, 7, 7, 7]
    assert job_counts(rig.sw, 2) == {"contributions": 3, "completions": 1, "duplicates": 1, "results": 1}


def test_retransmission_after_completion_gets_stored_result() -> None:
    rig = make_rig()
    for w, v in enumerate([5, 6, 7]):
        rig.send(w, [v, v + 1, v + 2, v + 3])
    # worker 1 lost its copy and retransmits (even with other data): unicast answer, no re-add
    out = rig.send(1, [1000, 1000, 1000, 1000])
    assert [p for p, _ in out] == [2]
    p = rig.parse(out)[2]
    w1 = WORKERS[1]
    assert (p.eth_dst, p.eth_src, p.ip_dst, p.ip_src) == (w1.mac, SWITCH.mac, w1.ip, SWITCH.ip)
    assert p.ip_checksum_ok and p.udp_dport == wire.worker_port(rig.agg.job)  # back to its port
    assert p.header["pkt_type"] == wire.PacketType.RESULT
    assert p.lanes == [18, 21, 24, 27]
    # and again: still the same stored result
    assert rig.parse(rig.send(0, [0, 0, 0, 0]))[1].lanes == [18, 21, 24, 27]
    assert job_counts(rig.sw, 2) == {"contributions": 3, "completions": 1, "duplicates": 2, "results": 3}


def test_shadow_set_reuse_chunk_c_and_c_plus_w() -> None:
    window = 2
    rig = make_rig(window=window, base=20)
    bm_idx = 20 // 2  # slot 0

    def bitmap(set_: int) -> int:
        return rig.sw.register_read(f"DhcIngress.shadow.bitmap_set{set_}", bm_idx)

    def complete(chunk: int, values: list[int]) -> list[int]:
        out = []
        for w, v in enumerate(values):
            out = rig.send(w, [v, v, v, v + chunk], chunk=chunk, window=window)
        return rig.parse(out)[1].lanes

    assert complete(0, [1, 2, 3]) == [6, 6, 6, 6]              # slot 0 set 0
    assert bitmap(0) == 0b111 and bitmap(1) == 0
    # chunk 2 = slot 0, set 1.  Worker 0 moves on first: its first writer leaves set 0 alone.
    assert rig.send(0, [10, 10, 10, 12], chunk=2, window=window) == []
    assert bitmap(0) == 0b111 and bitmap(1) == 0b001
    # worker 2 has not moved on and retransmits chunk 0: set 0 still answers with chunk 0's result
    assert rig.parse(rig.send(2, [3, 3, 3, 3], chunk=0, window=window))[3].lanes == [6, 6, 6, 6]
    # a delayed duplicate of chunk 0 from worker 0, which has moved on: chunk 0's result again,
    # and worker 0's contribution to chunk 2 stays counted (its bit in set 1 is kept)
    assert rig.parse(rig.send(0, [1, 1, 1, 1], chunk=0, window=window))[1].lanes == [6, 6, 6, 6]
    assert bitmap(1) == 0b001
    rig.send(1, [20, 20, 20, 22], chunk=2, window=window)
    out = rig.send(2, [30, 30, 30, 32], chunk=2, window=window)
    assert rig.parse(out)[2].lanes == [60, 60, 60, 66]          # not mixed with chunk 0
    assert bitmap(0) == 0b111 and bitmap(1) == 0b111
    # chunk 4 reuses set 0 of slot 0: a later chunk is the cell's first writer, fresh aggregate
    assert complete(4, [7, 8, 9]) == [24, 24, 24, 36]
    assert bitmap(0) == 0b111 and bitmap(1) == 0b111
    assert drops(rig.sw) == {}
    assert rig.sw.counter_read(C_DUP, 2)[0] == 2


def test_two_jobs_in_distinct_regions_do_not_interfere() -> None:
    rig = make_rig(job=7, base=0, window=2, stats_idx=1)
    other = Aggregator(job=9, base=4, window=2, own=SWITCH, stats_idx=3, mcast_grp=2,
                       children=[Child(w, port=i + 1, child_id=i, rid=10 + i) for i, w in enumerate(WORKERS)])
    program_job(rig.sw, other)
    outs: dict[int, list] = {}
    for w in range(3):                                    # interleave, same chunk/slot numbers
        for job, scale in ((7, 1), (9, 1000)):
            outs[job] = rig.send(w, [scale * (w + 1)] * 4, job=job)
    assert rig.parse(outs[7])[1].lanes == [6] * 4
    assert rig.parse(outs[9])[1].lanes == [6000] * 4
    assert job_counts(rig.sw, 1)["completions"] == 1 and job_counts(rig.sw, 3)["completions"] == 1
    assert rig.sw.register_read("DhcIngress.lanes.lane_0", 0) == 6
    assert rig.sw.register_read("DhcIngress.lanes.lane_0", 4) == 6000


@pytest.mark.parametrize(("lanes", "level", "backend"), [
    (wire.DEFAULT_LANES, SUM_LEVEL, "python"), (wire.DEFAULT_LANES, OR_LEVEL, "python"),
    # the largest K: num_lanes = 0 on the wire, 1,080-byte frames; both softswitch backends
    (wire.MAX_LANES, SUM_LEVEL, "python"), (wire.MAX_LANES, SUM_LEVEL, "native"),
])
def test_k_lanes_sum_and_or_exactly(lanes: int, level: int, backend: str) -> None:
    if backend == "native":
        from softswitch.native.build import compiler
        if compiler() is None:
            pytest.skip("no C compiler")
    rig = make_rig(lanes=lanes, backend=backend)
    rng = np.random.default_rng(level)
    contrib = rng.integers(0, 1 << 32, size=(3, lanes), dtype=np.uint64).astype(np.uint32)
    out = []
    for w in range(3):
        out = rig.send(w, [int(v) for v in contrib[w]], level=level, chunk=3)
    if level == SUM_LEVEL:
        expected = np.sum(contrib, axis=0, dtype=np.uint32)
    else:
        expected = np.bitwise_or.reduce(contrib, axis=0)
    assert_result_to_workers(rig, out, [int(v) for v in expected], chunk=3)


def test_result_register_index_is_base_plus_slot_times_two_plus_set() -> None:
    rig = make_rig(base=10, window=4)
    for w in range(3):
        rig.send(w, [w + 1, 0, 0, 0], chunk=6)             # slot 2, set 1
    assert rig.sw.register_read("DhcIngress.lanes.lane_0", 10 + 2 * 2 + 1) == 6
    assert rig.sw.register_read("DhcIngress.shadow.slot_count", 15) == 3
    assert rig.sw.register_read("DhcIngress.shadow.bitmap_set1", 15 // 2) == 0b111

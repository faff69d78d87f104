"""``dhc-bench e2e-profile``'s arithmetic: rounds, skew, CPU bounds and wire time per AllReduce."""

from __future__ import annotations

import pytest

from bench.e2e.e2e_profile import HEADER_BYTES, _bytes, machine_share, summarize
from bench.e2e.e2e_profile_worker import TimedReducer, machine_ticks, schedstat


def _host(start, rounds, end, cpu, wait, sw_cpu=0.03, sw_wait=0.1):
    return {"start": start, "end": end, "cpu_seconds": cpu, "runqueue_wait_seconds": wait,
            "user_seconds": cpu * 0.75, "system_seconds": cpu * 0.25,
            "switch_cpu_seconds": sw_cpu, "switch_runqueue_wait_seconds": sw_wait,
            "rounds": [{"start": a, "end": b, "packets": p, "bytes": p * 500, "cpu_seconds": cpu / 4,
                        "retransmissions": 0, "received": p, "lanes": 128 * p} for a, b, p in rounds]}


def test_summary_of_one_allreduce():
    per_host = {"h1": _host(10.000, [(10.002, 10.010, 4), (10.011, 10.050, 100)], 10.052,
                            0.020, 0.030),
                "h2": _host(10.005, [(10.006, 10.012, 4), (10.013, 10.049, 100)], 10.060,
                            0.010, 0.050, sw_cpu=0.05)}
    wire = _bytes(per_host)
    assert wire == {h: 104 * (500 + HEADER_BYTES) for h in per_host}
    row = summarize(per_host, 100_000_000, wire, cores=2)
    assert row["seconds"] == pytest.approx(0.060)
    assert row["launch_skew_seconds"] == pytest.approx(0.005)
    assert row["encode_seconds"] == pytest.approx(0.002)
    assert [r["network_seconds"] for r in row["rounds"]] == pytest.approx([0.008, 0.039])
    # codec time after a round: the slowest worker's gap to its next round (or to its end)
    assert [r["codec_after_seconds"] for r in row["rounds"]] == pytest.approx([0.001, 0.011])
    assert row["rounds"][1]["packets_per_worker"] == 100
    assert row["rounds"][1]["packets_received_per_worker"] == 100
    assert row["workers_cpu_seconds"] == pytest.approx(0.030)
    assert row["workers_runqueue_wait_seconds"] == pytest.approx(0.080)
    assert row["workers_user_cpu_seconds"] == pytest.approx(0.0225)
    assert row["workers_system_cpu_seconds"] == pytest.approx(0.0075)
    assert row["workers_transport_cpu_seconds"] == pytest.approx(0.015)   # 2 rounds x cpu / 4
    assert row["switch_cpu_seconds"] == pytest.approx(0.04)       # median of the hosts' views
    assert row["cpu_bound_seconds"] == pytest.approx((0.030 + 0.04) / 2)
    assert row["wire_seconds"] == pytest.approx(104 * (500 + HEADER_BYTES) * 8 / 1e8)


def test_timed_reducer_counts_each_round():
    class Stats:
        packets_sent = bytes_sent = retransmissions = packets_received = 0

    class Inner:
        def reduce(self, segments):
            stats.packets_sent += 3
            stats.bytes_sent += 30
            stats.packets_received += 4
            return [s.lanes for s in segments]

    class Seg:
        def __init__(self, n):
            self.lanes = list(range(n))

    stats = Stats()
    timed = TimedReducer(Inner(), stats)
    assert timed.reduce([Seg(5), Seg(2)]) == [list(range(5)), list(range(2))]
    (r,) = timed.rounds
    assert (r["packets"], r["bytes"], r["lanes"], r["retransmissions"]) == (3, 30, 7, 0)
    assert 0 <= r["cpu_seconds"] < 1
    assert r["received"] == 4
    assert r["end"] >= r["start"]


def test_schedstat_of_this_process_and_of_a_missing_one():
    run, wait = schedstat()
    assert run > 0 and wait >= 0
    assert schedstat(2 ** 22 + 12345) == (0.0, 0.0)


def test_machine_time_comes_from_the_longest_worker_and_sums_over_runs():
    a = _host(10.000, [(10.002, 10.010, 4)], 10.052, 0.02, 0.03)
    b = _host(10.005, [(10.006, 10.012, 4)], 10.040, 0.01, 0.05)
    a["machine_ticks"], b["machine_ticks"] = [9, 2, 0, 10], [3, 0, 0, 6]
    row = summarize({"h1": a, "h2": b}, 100_000_000, _bytes({"h1": a, "h2": b}), cores=2)
    assert row["machine_ticks"] == [9, 2, 0, 10]           # h1's interval is the longer
    share = machine_share([row, {**row, "machine_ticks": [5, 0, 1, 10]}], clock_ticks=100)
    assert share == pytest.approx({"busy_share": 0.7, "interrupt_share": 0.1, "steal_share": 0.05,
                                   "busy_cpu_seconds_per_allreduce": 0.07})
    assert machine_share([{**row, "machine_ticks": None}]) is None    # an old worker's record


def test_machine_ticks_of_this_machine_only_grow():
    first = machine_ticks()
    sum(range(200_000))
    second = machine_ticks()
    assert all(b >= a for a, b in zip(first, second, strict=True))
    busy, irq, steal, total = second
    assert 0 <= irq <= busy <= total and steal <= total

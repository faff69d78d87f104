"""The ``dhc`` section of ``dhc-bench softswitch-ports``: ``p4src/dhc.p4`` deployed by the
controller for a one-switch topology with one two-worker job, both workers driven over the lab's
raw sockets (``bench.softswitch.ports_lab``).

Each namespace is one worker; chunk c goes out as DATA from both, the second contribution
completes the slot and the switch multicasts the RESULT to both.  A worker sends chunk c+W only
after it has the RESULT of chunk c (the SwitchML self-clocking rule, W = ``--dhc-window``),
retransmits what has no RESULT after a timeout, and every RESULT is checked (addresses, ports,
IPv4 checksum, chunk, lanes = the sum of the two contributions).  The same chunks run through
``Switch.process()`` in-process, side by side.
"""

from __future__ import annotations

import argparse
import select
import socket
import statistics
import struct
import time
from dataclasses import dataclass

from bench.softswitch.ports_lab import ROOT, WORKERS, Lab, cpu_seconds, wait_ready

DHC_PROGRAM = ROOT / "p4src" / "dhc.p4"
#: lane counts p4src/dhc.p4 compiles for here (DHC_LANES)
DHC_LANE_COUNTS = (1, 2, 4, 8, 16, 32)
DHC_JOB = 1
SWITCH_NAME, SWITCH_IP, SWITCH_MAC = "s1", "10.0.0.254", "02:00:00:00:01:01"
RETRANSMIT_S = 0.2  # a worker resends DATA that has no RESULT after this long
STALL_S = 10.0  # no RESULT at all for this long: the switch is stuck, give up


def dhc_topology(lanes: int, window: int):
    """One switch, workers on ports 1 and 2, one job with both (validated by the topology reader)."""
    from controller.topology_file import from_dict

    return from_dict(
        {
            "name": "bench-ports",
            "switches": [{"name": SWITCH_NAME, "ip": SWITCH_IP, "mac": SWITCH_MAC}],
            "hosts": [{"name": n, "ip": ip, "mac": mac} for n, ip, mac in WORKERS],
            "links": [
                {"a": n, "a_port": 0, "b": SWITCH_NAME, "b_port": i + 1}
                for i, (n, _, _) in enumerate(WORKERS)
            ],
            "jobs": [
                {
                    "id": DHC_JOB,
                    "workers": [n for n, _, _ in WORKERS],
                    "bytes_per_iteration": 1 << 20,
                    "window": window,
                    "lanes": lanes,
                }
            ],
        },
        source="bench softswitch-ports",
    )


def _csum16(data: bytes) -> int:
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


@dataclass
class _Worker:
    """What a worker puts in front of its DATA, and what each RESULT it receives must start with."""

    child_id: int
    header: bytes  # Ethernet + IPv4 + UDP (42 bytes) of its DATA frames
    result_macs: bytes  # frame[0:12] of a RESULT to it: dst MAC, src MAC
    result_addrs: bytes  # frame[26:38]: src IP, dst IP, UDP sport, dport


@dataclass
class _Chunks:
    """Chunks ``first .. first + n - 1``: both workers' DATA frames and each RESULT's UDP payload."""

    first: int
    data: tuple[list[bytes], list[bytes]]
    results: list[bytes]

    @property
    def n(self) -> int:
        return len(self.results)


@dataclass
class _Dhc:
    """The job as both workers see it, and the chunk counter shared by the switch and the in-process copy."""

    lanes: int
    window: int
    workers: tuple[_Worker, _Worker]
    bases: tuple  # per worker, the uint32 vector its contribution to chunk c adds c to
    next_chunk: int = 0

    def chunks(self, n: int) -> _Chunks:
        """The next ``n`` chunks.  Worker w contributes bases[w] + c (uint32), so the RESULT of c
        holds bases[0] + bases[1] + 2c, wrapping like the switch's SUM."""
        import numpy as np

        from dhcwire import header as wire
        from dhcwire.frames import encode_datagram

        level = int(wire.Level.DENSE)
        first = self.next_chunk
        data: tuple[list[bytes], list[bytes]] = ([], [])
        results = []
        for c in range(first, first + n):
            slot = wire.slot_for_chunk(c, self.window)
            total = np.zeros(self.lanes, dtype=np.uint32)
            for w, worker in enumerate(self.workers):
                lanes = self.bases[w] + np.uint32(c & 0xFFFFFFFF)
                total += lanes
                payload = encode_datagram(
                    int(wire.PacketType.DATA), level, DHC_JOB, worker.child_id, c, slot, lanes
                )
                data[w].append(worker.header + payload)
            results.append(encode_datagram(int(wire.PacketType.RESULT), level, DHC_JOB, 0, c, slot, total))
        self.next_chunk += n
        return _Chunks(first, data, results)


def dhc_job(topo, placement, lanes: int, window: int) -> _Dhc:
    import numpy as np
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    from dhcwire import header as wire

    agg = placement.jobs[0].aggregators[0]
    payload_len = wire.DHC_HEADER_BYTES + wire.LANE_BYTES * lanes
    port = wire.worker_port(DHC_JOB)
    workers = []
    for name, ip, mac in WORKERS:
        child = next(c.index for c in agg.children if c.name == name)
        # UDP checksum 0 (none, allowed over IPv4), as the switch sends its RESULTs
        pkt = (Ether(src=mac, dst=SWITCH_MAC) / IP(src=ip, dst=SWITCH_IP, ttl=64)
               / UDP(sport=port, dport=wire.DHC_UDP_PORT, chksum=0) / bytes(payload_len))
        addrs = (
            socket.inet_aton(SWITCH_IP) + socket.inet_aton(ip) + struct.pack("!HH", wire.DHC_UDP_PORT, port)
        )
        workers.append(
            _Worker(child, bytes(pkt)[:42], bytes.fromhex((mac + SWITCH_MAC).replace(":", "")), addrs)
        )
    rng = np.random.default_rng(2026)
    bases = tuple(rng.integers(0, 1 << 32, lanes, dtype=np.uint32) for _ in WORKERS)
    return _Dhc(lanes, window, (workers[0], workers[1]), bases)


def _check_result(frame: bytes, worker: _Worker, chunks: _Chunks) -> tuple[int | None, str | None]:
    """(index of the chunk in ``chunks``, problem or None) of a frame a worker received;
    index None if it is no RESULT of these chunks at all."""
    if len(frame) < 42 + 12 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return None, f"not an IPv4/UDP frame: {frame[:42].hex()}"
    chunk = int.from_bytes(frame[50:54], "big")
    i = chunk - chunks.first
    if not 0 <= i < chunks.n:
        return None, f"RESULT for chunk {chunk}, outside {chunks.first}..{chunks.first + chunks.n - 1}"
    if frame[:12] != worker.result_macs:
        return i, f"chunk {chunk}: MACs {frame[:12].hex()}, expected {worker.result_macs.hex()}"
    if frame[26:38] != worker.result_addrs:
        return i, f"chunk {chunk}: IPs and ports {frame[26:38].hex()}, expected {worker.result_addrs.hex()}"
    if _csum16(frame[14:34]) != 0:
        return i, f"chunk {chunk}: bad IPv4 header checksum"
    if frame[42:] != chunks.results[i]:
        return (
            i,
            f"chunk {chunk}: UDP payload {frame[42:58].hex()}..., expected {chunks.results[i][:16].hex()}...",
        )
    return i, None


@dataclass
class _Tally:
    """What one pass of chunks through the switch (process or in-process) gave."""

    elapsed: float = 0.0
    results: int = 0  # distinct (worker, chunk) RESULTs received
    correct: int = 0
    wrong: int = 0
    duplicates: int = 0
    retransmits: int = 0
    first_error: str | None = None

    def add(self, other: _Tally) -> _Tally:
        """Add ``other``'s counts to this total; return ``other``."""
        for name in ("elapsed", "results", "correct", "wrong", "duplicates", "retransmits"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.first_error = self.first_error or other.first_error
        return other

    def record(self, problem: str | None) -> None:
        """One RESULT received: correct, or wrong for ``problem``."""
        self.results += 1
        self.correct += problem is None
        if problem is not None:
            self.fail(problem)

    def fail(self, problem: str) -> None:
        self.wrong += 1
        self.first_error = self.first_error or problem


def _aggregate(socks: list[socket.socket], job: _Dhc, chunks: _Chunks) -> _Tally:
    """Both workers stream ``chunks`` through the switch in one thread; W chunks in flight at most.

    A worker sends chunk c+W only after its RESULT of chunk c arrived; DATA without a RESULT
    after RETRANSMIT_S is sent again (the switch answers a duplicate of a complete slot)."""
    n, window = chunks.n, job.window
    tally = _Tally()
    nxt, low = [0, 0], [0, 0]  # per worker: next chunk to send, lowest chunk without a RESULT
    got = (bytearray(n), bytearray(n))
    poller = select.poll()
    fds = {s.fileno(): w for w, s in enumerate(socks)}
    for s in socks:
        s.setblocking(False)
        poller.register(s.fileno(), select.POLLIN)
    t0 = progress = last_resend = time.perf_counter()
    t_last = t0
    try:
        while low[0] < n or low[1] < n:
            for w in (0, 1):
                data, have, s = chunks.data[w], got[w], socks[w]
                while nxt[w] < n and (nxt[w] < window or have[nxt[w] - window]):
                    s.send(data[nxt[w]])
                    nxt[w] += 1
            events = poller.poll(int(RETRANSMIT_S * 1000))
            now = time.perf_counter()
            for fd, _ in events:
                w = fds[fd]
                while True:
                    try:
                        frame, addr = socks[w].recvfrom(65535)
                    except BlockingIOError:
                        break
                    if addr[2] == socket.PACKET_OUTGOING:
                        continue
                    i, problem = _check_result(frame, job.workers[w], chunks)
                    if i is None:
                        tally.fail(problem)
                    elif got[w][i]:
                        tally.duplicates += 1
                    else:
                        got[w][i] = 1
                        tally.record(problem)
                        progress = t_last = now
                        while low[w] < n and got[w][low[w]]:
                            low[w] += 1
            if now - progress > RETRANSMIT_S and now - last_resend > RETRANSMIT_S:
                if now - progress > STALL_S:
                    raise RuntimeError(f"no RESULT for {STALL_S} s: workers wait for chunks "
                                       f"{chunks.first + low[0]} / {chunks.first + low[1]}")
                for w in (0, 1):
                    for i in range(low[w], nxt[w]):
                        if not got[w][i]:
                            socks[w].send(chunks.data[w][i])
                            tally.retransmits += 1
                last_resend = now
    finally:
        for s in socks:
            poller.unregister(s.fileno())
            s.setblocking(True)
    tally.elapsed = t_last - t0
    return tally


def _in_process_aggregate(sw, job: _Dhc, chunks: _Chunks) -> _Tally:
    """The same DATA frames through ``Switch.process()``: A's chunk c on port 1, then B's on port 2,
    which must yield the RESULT on both ports.  Timed first, checked after."""
    outs = []
    a, b = chunks.data
    t0 = time.perf_counter()
    for i in range(chunks.n):
        outs.append(sw.process(1, a[i]))
        outs.append(sw.process(2, b[i]))
    tally = _Tally(elapsed=time.perf_counter() - t0)
    for i in range(chunks.n):
        first, second = outs[2 * i], outs[2 * i + 1]
        if first or sorted(p for p, _ in second) != [1, 2]:
            tally.fail(
                f"in-process chunk {chunks.first + i}: first DATA gave {len(first)} frames, second gave "
                f"ports {[p for p, _ in second]} (expected nothing, then ports 1 and 2)"
            )
            continue
        for port, frame in second:
            tally.record(_check_result(frame, job.workers[port - 1], chunks)[1])
    return tally


def run_dhc(lab: Lab, args: argparse.Namespace) -> dict:
    from bench.softswitch.inprocess import apply_in_process
    from controller.deploy.apply import deploy
    from controller.p4rt_client import SwitchAddress
    from controller.pipeline import program_defines
    from controller.placement import place
    from controller.plan import intended_state
    from softswitch import Switch

    topo = dhc_topology(args.lanes, args.dhc_window)
    placement = place(topo)
    job = dhc_job(topo, placement, args.lanes, args.dhc_window)
    pool = topo.switches[SWITCH_NAME].register_slots  # the size deploy compiles the switch's pipeline with

    local = Switch.load(str(DHC_PROGRAM), defines=program_defines(args.lanes, pool))
    apply_in_process(local, intended_state(topo, placement)[SWITCH_NAME])

    proc, grpc_port, log = lab.start_switch(["--no-p4"], "dhc")
    wait_ready(grpc_port, proc, log)
    report = deploy(topo, placement, {SWITCH_NAME: SwitchAddress(SWITCH_NAME, f"127.0.0.1:{grpc_port}", 0)},
                    program=DHC_PROGRAM)
    warm = job.chunks(max(2 * args.dhc_window, 100))  # untimed: first packets pay for lazy set-up
    for tally in (_in_process_aggregate(local, job, warm), _aggregate(lab.socks, job, warm)):
        if tally.wrong:
            raise RuntimeError(f"dhc warm-up: {tally.wrong} wrong RESULTs, first: {tally.first_error}")

    data_rate, result_rate, inproc_rate = [], [], []
    ports, inproc = _Tally(), _Tally()
    switch_cpu = 0.0
    for _ in range(args.runs):  # alternate the two, so load from elsewhere hits both alike
        chunks = job.chunks(args.chunks)
        t = inproc.add(_in_process_aggregate(local, job, chunks))
        inproc_rate.append(2 * chunks.n / t.elapsed)
        before = cpu_seconds(proc.pid)
        t = ports.add(_aggregate(lab.socks, job, chunks))
        switch_cpu += cpu_seconds(proc.pid) - before
        data_rate.append(2 * chunks.n / t.elapsed)
        result_rate.append(t.results / t.elapsed)
    lab.stop(proc)
    med, frames = statistics.median, 2 * args.chunks * args.runs
    return {
        "program": DHC_PROGRAM.name, "lanes": args.lanes, "window_chunks": args.dhc_window, "pool_size": pool,
        "chunks": args.chunks, "runs": args.runs, "deploy_writes": report.writes,
        "data_frame_bytes": len(warm.data[0][0]), "result_frame_bytes": 42 + len(warm.results[0]),
        # DATA frames into the switch and RESULT frames out (one per worker and chunk), each checked
        "data_frames": frames, "results_expected": frames, "results_received": ports.results,
        "results_correct": ports.correct, "results_wrong": ports.wrong, "result_duplicates": ports.duplicates,
        "retransmits": ports.retransmits, "in_process_results_wrong": inproc.wrong,
        "first_error": ports.first_error or inproc.first_error,
        "data_frames_per_s": round(med(data_rate), 1), "result_frames_per_s": round(med(result_rate), 1),
        "in_process_data_frames_per_s": round(med(inproc_rate), 1),
        "ports_over_in_process": round(med(p / i for p, i in zip(data_rate, inproc_rate, strict=True)), 3),
        "switch_cpu_share": round(switch_cpu / ports.elapsed, 2),  # as in the basic_ipv4 row
        "data_runs": [round(x, 1) for x in data_rate], "result_runs": [round(x, 1) for x in result_rate],
        "in_process_runs": [round(x, 1) for x in inproc_rate],
    }

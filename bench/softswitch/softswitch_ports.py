"""Frames per second through the softswitch process over real veth ports (needs root).

Two namespaces, each holding one end of a veth pair whose other end is a switch
port.  Two measurements in one invocation, on the same veths:

* ``basic_ipv4.p4`` (top-level keys): one route installed over P4Runtime.  The
  sender keeps at most ``--window`` frames in flight (sent but not yet received),
  so nothing is lost to full socket buffers and the rate is the switch's lossless
  forwarding rate.  Every received frame is checked (TTL decremented, destination
  MAC rewritten).
* ``dhc.p4`` (the ``dhc`` section): K lanes per packet, the switch programmed by
  the controller's ``deploy`` for a one-switch topology with one two-worker job.
  Each namespace is one worker; chunk c goes out as DATA from both, the second
  contribution completes the slot and the switch multicasts the RESULT to both.
  A worker sends chunk c+W only after it has the RESULT of chunk c (the SwitchML
  self-clocking rule, W = ``--dhc-window``), retransmits what has no RESULT after
  a timeout, and every RESULT is checked (addresses, ports, IPv4 checksum, chunk,
  lanes = the sum of the two contributions).

Measured side by side in the same run, for both: the same frames through
``Switch.process()`` in-process, so the ratio shows what the port I/O and the
process boundary cost.
"""

from __future__ import annotations

import argparse
import os
import select
import socket
import statistics
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "softswitch" / "programs" / "basic_ipv4.p4"
DHC_PROGRAM = ROOT / "p4src" / "dhc.p4"
DST_MAC = 0x020000000002

#: lane counts p4src/dhc.p4 compiles for (DHC_LANES)
DHC_LANE_COUNTS = (1, 2, 4, 8, 16, 32)
DHC_JOB = 1
SWITCH_NAME, SWITCH_IP, SWITCH_MAC = "s1", "10.0.0.254", "02:00:00:00:01:01"
#: the two workers: (name, IPv4, MAC); worker i hangs on switch port i + 1
WORKERS = (("wa", "10.0.0.1", "02:00:00:00:00:01"), ("wb", "10.0.0.2", "02:00:00:00:00:02"))
RETRANSMIT_S = 0.2  # a worker resends DATA that has no RESULT after this long
STALL_S = 10.0  # no RESULT at all for this long: the switch is stuck, give up


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=5000, help="frames to forward (default 5000)")
    parser.add_argument("--frame-size", type=int, default=128, help="frame length in bytes (default 128)")
    parser.add_argument("--window", type=int, default=64, help="frames in flight at most (default 64)")
    parser.add_argument("--runs", type=int, default=3, help="measurements of each; medians reported")
    parser.add_argument("--program", type=Path, default=PROGRAM, help="P4 program (basic_ipv4.p4 interface)")
    parser.add_argument("--lanes", type=int, default=32, choices=DHC_LANE_COUNTS,
                        help="dhc.p4: K, lanes per packet (default 32)")
    parser.add_argument(
        "--chunks",
        type=int,
        default=2500,
        help="dhc.p4: chunks per run; each is 2 DATA frames in and 2 RESULT frames out (default 2500)",
    )
    parser.add_argument("--dhc-window", type=int, default=64,
                        help="dhc.p4: the job's window W, chunks in flight at most (default 64)")


def _check_args(args: argparse.Namespace) -> None:
    from controller.topology import DEFAULT_REGISTER_SLOTS

    for name in ("frames", "frame_size", "window", "runs", "chunks", "dhc_window"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if args.lanes not in DHC_LANE_COUNTS:
        raise ValueError(f"--lanes {args.lanes}: dhc.p4 compiles for {', '.join(map(str, DHC_LANE_COUNTS))}")
    if 2 * args.dhc_window > DEFAULT_REGISTER_SLOTS:
        raise ValueError(f"--dhc-window {args.dhc_window}: the job needs 2W register cells, the pool has "
                         f"{DEFAULT_REGISTER_SLOTS}")


def _ip(*args: str, check: bool = True) -> None:
    subprocess.run(["ip", *args], check=check, capture_output=True, timeout=30)


def _frames(n: int, size: int) -> list[bytes]:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    base = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:fe") / IP(
        src="10.0.1.1", dst="10.0.2.2", ttl=64
    )
    out = []
    for i in range(n):
        pkt = base / UDP(sport=1000, dport=2000) / i.to_bytes(4, "big")
        pad = size - len(pkt)
        out.append(bytes(pkt / bytes(max(0, pad))))
    return out


def _in_process_switch(program: Path, frames: list[bytes]):
    from softswitch import Switch
    from softswitch.api import Lpm

    sw = Switch.load(str(program), defines={}, include_dirs=[], cpu_port=None)
    sw.table_add("MyIngress.ipv4_lpm", "MyIngress.ipv4_forward", {"hdr.ipv4.dstAddr": Lpm(0x0A000202, 32)},
                 {"dstAddr": DST_MAC, "port": 2})
    for f in frames[:500]:  # warm-up: first packets pay for lazy set-up, as in the switch process
        sw.process(1, f)
    return sw


def _in_process_rate(sw, frames: list[bytes]) -> float:
    t0 = time.perf_counter()
    for f in frames:
        out = sw.process(1, f)
        if len(out) != 1 or out[0][0] != 2:
            raise RuntimeError(f"in-process pipeline did not forward a frame to port 2: {out!r}")
    return len(frames) / (time.perf_counter() - t0)


# ---------------------------------------------------------------- the lab: veths, namespaces, processes
@dataclass
class _Lab:
    """Two namespaces, each with the host end of a veth whose other end becomes switch port 1 / 2,
    a raw socket on each host end, and the switch processes started; all removed on exit."""

    tag: str = field(default_factory=lambda: f"b{os.getpid() % 100000}")
    created: list[tuple[str, str]] = field(default_factory=list)
    socks: list[socket.socket] = field(default_factory=list)
    procs: list[subprocess.Popen] = field(default_factory=list)

    def __enter__(self) -> _Lab:
        from softswitch.target.ports import ETH_P_ALL, ignore_outgoing, run_in_netns, set_offloads

        try:
            for p in (1, 2):
                ns, h, s = f"{self.tag}n{p}", f"{self.tag}h{p}", f"{self.tag}s{p}"
                _ip("netns", "add", ns)
                self.created.append((ns, s))
                _ip("link", "add", s, "type", "veth", "peer", "name", h)
                Path(f"/proc/sys/net/ipv6/conf/{s}/disable_ipv6").write_text("1")
                _ip("link", "set", h, "netns", ns)
                _ip("link", "set", s, "up")
                # the host end has the MAC of the worker on that port, and no IP address: only the
                # raw socket speaks there, the kernel never answers (no ICMP unreachable to the switch)
                _ip("-n", ns, "link", "set", h, "address", WORKERS[p - 1][2], "up")
                set_offloads(s, False)

                def mk(ifname: str = h) -> socket.socket:
                    Path(f"/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6").write_text("1")
                    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                    sock.bind((ifname, 0))
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
                    ignore_outgoing(sock)  # the generator reads only what the switch sends
                    return sock

                self.socks.append(run_in_netns(f"/run/netns/{ns}", mk))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def start_switch(self, program_args: list[str], name: str) -> tuple[subprocess.Popen, int, Path]:
        """A softswitch process on the two ports: (process, P4Runtime port, log file)."""
        grpc_port = _free_port()
        log = Path(f"/tmp/{self.tag}-bench-{name}.log")
        cmd = [sys.executable, "-m", "softswitch.cli", "--log-level", "warn", "-i", f"1@{self.tag}s1",
               "-i", f"2@{self.tag}s2", *program_args, "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                    env=dict(os.environ, PYTHONPATH=str(ROOT)))
        self.procs.append(proc)
        return proc, grpc_port, log

    def drain(self) -> None:
        """Drop whatever the sockets hold (e.g. frames of the previous measurement)."""
        for s in self.socks:
            while select.select([s], [], [], 0)[0]:
                s.recv(65535)

    @staticmethod
    def stop(proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __exit__(self, *exc) -> None:
        for proc in self.procs:
            self.stop(proc)
        for s in self.socks:
            s.close()
        for ns, s in self.created:
            _ip("link", "del", s, check=False)
            _ip("netns", "del", ns, check=False)


def run(args: argparse.Namespace) -> dict:
    if os.geteuid() != 0:
        raise PermissionError("softswitch-ports needs root (network namespaces and veth pairs)")
    _check_args(args)
    with _Lab() as lab:
        result = _run_basic(lab, args)
        lab.drain()
        result["dhc"] = _run_dhc(lab, args)
    return result


def _run_basic(lab: _Lab, args: argparse.Namespace) -> dict:
    frames = _frames(args.frames, args.frame_size)
    local = _in_process_switch(args.program, frames)
    inproc: list[float] = []
    ports: list[float] = []
    received = 0
    proc, grpc_port, log = lab.start_switch([str(args.program)], "basic")
    _wait_ready(grpc_port, proc, log)
    _install_route(grpc_port)
    _blast(lab.socks[0], lab.socks[1], frames[:300], args.window)  # warm-up, untimed
    switch_cpu = 0.0
    for _ in range(args.runs):  # alternate the two, so load from elsewhere hits both alike
        inproc.append(_in_process_rate(local, frames))
        before = _cpu_seconds(proc.pid)
        rate, got = _blast(lab.socks[0], lab.socks[1], frames, args.window)
        switch_cpu += _cpu_seconds(proc.pid) - before
        ports.append(rate)
        received += got
    lab.stop(proc)
    return {
        "program": args.program.name,
        "frames": len(frames),
        "frame_bytes": args.frame_size,
        "window": args.window,
        "runs": args.runs,
        "received": received,
        "lost": args.runs * len(frames) - received,
        "ports_frames_per_s": round(statistics.median(ports), 1),
        "in_process_frames_per_s": round(statistics.median(inproc), 1),
        "ports_over_in_process": round(
            statistics.median(p / i for p, i in zip(ports, inproc, strict=True)), 3
        ),
        # CPU time the switch process used per second of forwarding (1.0 = one core busy):
        # near 1 means the switch, not the traffic generator, is the bottleneck
        "switch_cpu_share": round(switch_cpu / sum(len(frames) / r for r in ports), 2),
        "ports_runs": [round(x, 1) for x in ports],
        "in_process_runs": [round(x, 1) for x in inproc],
    }


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(grpc_port: int, proc: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    """Return once the switch process accepts connections on its P4Runtime port."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"softswitch exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", grpc_port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError("softswitch did not open its P4Runtime port") from None
            time.sleep(0.05)


def _install_route(grpc_port: int) -> None:
    """Become primary over P4Runtime (the controller's client) and add 10.0.2.2/32 -> port 2."""
    from p4.v1 import p4runtime_pb2

    from controller.intent import MatchField, TableEntry
    from controller.p4rt_client import PendingUpdate, SwitchAddress, SwitchConnection

    conn = SwitchConnection(SwitchAddress("basic", f"127.0.0.1:{grpc_port}"), timeout=30)
    conn.connect()
    try:
        entry = TableEntry("MyIngress.ipv4_lpm", (MatchField("hdr.ipv4.dstAddr", 0x0A000202, 32),),
                           "MyIngress.ipv4_forward", (("dstAddr", DST_MAC), ("port", 2)))
        proto = conn.load_p4info().entry_to_proto(entry)
        conn.write([PendingUpdate(p4runtime_pb2.Update.INSERT, p4runtime_pb2.Entity(table_entry=proto),
                                  entry.describe())])
    finally:
        conn.close()


def _blast(tx: socket.socket, rx: socket.socket, frames: list[bytes], window: int) -> tuple[float, int]:
    """Send with at most ``window`` frames in flight; return (frames/s, frames received).

    One thread does both ends (top the window up, then drain what arrived), so the
    generator costs no thread hand-offs and the switch is what limits the rate.
    """
    mac = DST_MAC.to_bytes(6, "big")
    poller = select.poll()
    poller.register(rx.fileno(), select.POLLIN)
    rx.setblocking(False)
    sent = received = 0
    t0 = time.perf_counter()
    t_last = t0
    idle_since = t0
    while received < len(frames):
        while sent < len(frames) and sent - received < window:
            tx.send(frames[sent])
            sent += 1
        if not poller.poll(1000):
            if time.perf_counter() - idle_since > 5:
                break  # frames were lost; report what came through
            continue
        while True:
            try:
                data, addr = rx.recvfrom(65535)
            except BlockingIOError:
                break
            if addr[2] == 4 or len(data) < 34 or data[12:14] != b"\x08\x00":
                continue
            if data[:6] != mac or data[22] != 63:
                raise RuntimeError("a forwarded frame was not rewritten (dst MAC / TTL)")
            received += 1
        t_last = idle_since = time.perf_counter()
    rx.setblocking(True)
    if received == 0:
        raise RuntimeError("no frame came through the switch")
    return received / (t_last - t0), received


# ---------------------------------------------------------------- dhc.p4: two workers, one job
def _dhc_topology(lanes: int, window: int):
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


def _dhc_job(topo, placement, lanes: int, window: int) -> _Dhc:
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


def _run_dhc(lab: _Lab, args: argparse.Namespace) -> dict:
    from bench.softswitch.inprocess import apply_in_process
    from controller.deploy.apply import deploy
    from controller.p4rt_client import SwitchAddress
    from controller.pipeline import program_defines
    from controller.placement import place
    from controller.plan import intended_state
    from softswitch import Switch

    topo = _dhc_topology(args.lanes, args.dhc_window)
    placement = place(topo)
    job = _dhc_job(topo, placement, args.lanes, args.dhc_window)
    pool = topo.switches[SWITCH_NAME].register_slots  # the size deploy compiles the switch's pipeline with

    local = Switch.load(str(DHC_PROGRAM), defines=program_defines(args.lanes, pool))
    apply_in_process(local, intended_state(topo, placement)[SWITCH_NAME])

    proc, grpc_port, log = lab.start_switch(["--no-p4"], "dhc")
    _wait_ready(grpc_port, proc, log)
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
        before = _cpu_seconds(proc.pid)
        t = ports.add(_aggregate(lab.socks, job, chunks))
        switch_cpu += _cpu_seconds(proc.pid) - before
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

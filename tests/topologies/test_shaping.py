"""Link shaping: tc rates parse and print exactly, and tbf really limits a veth in a namespace."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from topologies.shaping import RateError, Shaping, format_rate, parse_rate, shape


@pytest.mark.parametrize("text,bps", [("100mbit", 10**8), ("1gbit", 10**9), ("2.5gbit", 25 * 10**8),
                                      ("10Gbit", 10**10), (" 500kbit ", 5 * 10**5)])
def test_parse_rate(text: str, bps: int) -> None:
    assert parse_rate(text) == bps


@pytest.mark.parametrize("text", ["", "100", "fast", "100mbps", "-1gbit", "10bit", "1 gbyte"])
def test_bad_rate_names_the_value(text: str) -> None:
    with pytest.raises(RateError, match="bad bandwidth"):
        parse_rate(text)


@pytest.mark.parametrize("bps", [10**8, 10**9, 25 * 10**8, 123_456_000, 777])
def test_format_round_trips(bps: int) -> None:
    assert parse_rate(format_rate(bps)) == bps if bps >= 10**5 else format_rate(bps) == "777bit"


def test_burst_covers_a_millisecond_and_ten_frames() -> None:
    assert Shaping(10**8).burst_bytes == 10 * 1514            # 12.5 kB/ms < 10 frames
    assert Shaping(10**10).burst_bytes == 10**10 // 8 // 1000  # 1.25 MB at 10 Gbit/s


def test_queue_holds_fifty_ms_and_never_less_than_four_windows() -> None:
    """At 10 Mbit/s 50 ms is 41 frames, less than one 64-packet window: the floor holds 256."""
    assert Shaping(10**7).limit_bytes == 256 * 1514 + 10 * 1514
    assert Shaping(10**9).limit_bytes == 10**9 // 8 // 20 + 125_000     # 50 ms + 1 ms bucket at 1 Gbit/s
    args = Shaping(10**7).tc_args("x-eth0")
    assert args[args.index("limit") + 1] == str(266 * 1514) and "latency" not in args


def test_control_packets_get_a_band_of_their_own_of_the_same_size() -> None:
    qlen, root, bands = Shaping(10**7).tc_commands("x-eth0")
    assert qlen == ["ip", "link", "set", "dev", "x-eth0", "txqueuelen", "266"]    # 266 full frames
    assert root == Shaping(10**7).tc_args("x-eth0")
    assert bands[bands.index("parent") + 1] == "1:1" and bands[-1] == "pfifo_fast"


def _needs_root() -> None:
    if os.geteuid() != 0 or shutil.which("tc") is None or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2")


def _sh(*args: str) -> str:
    return subprocess.run(list(args), check=True, capture_output=True, text=True).stdout


SINK = """
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind(("10.254.0.2", 9000))
print("ready", flush=True)
s.settimeout(2.0)
n, first, last = 0, None, None
try:
    while True:
        s.recv(2000)
        last = time.monotonic()
        first = first or last
        n += 1
except OSError:
    pass
print(n, (last or 0) - (first or 0))
"""

SOURCE = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(3000):
    s.sendto(b"x" * 1400, ("10.254.0.2", 9000))
"""


FLOOD = """
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# past the default send buffer (about 90 queued frames), so that the qdisc is what fills up
s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_SNDBUFFORCE", 32), 1 << 23)
end = time.monotonic() + 4.0
while time.monotonic() < end:          # far above 10 Mbit/s for 4 s: tbf's data queue stays full
    for _ in range(100):
        try:
            s.sendto(b"x" * 1400, ("10.254.0.2", 9001))
        except OSError:
            pass
    time.sleep(0.005)
"""


def test_tbf_limits_a_veth_between_namespaces() -> None:
    """Shape one end of a veth pair (both ends in namespaces of this test) to 10 Mbit/s and send
    3000 frames as fast as a socket can: the far end receives them at about 10 Mbit/s (tbf drops
    what does not fit its bucket and queue), where an unshaped veth carries Gbit/s; while a flood
    fills the data queue, low-delay pings still come back in milliseconds (the control band)."""
    _needs_root()
    tag = uuid.uuid4().hex[:6]
    ns_a, ns_b, a, b = f"dhcshpa{tag}", f"dhcshpb{tag}", f"shpa{tag}", f"shpb{tag}"
    _sh("ip", "netns", "add", ns_a)
    _sh("ip", "netns", "add", ns_b)
    try:
        _sh("ip", "-n", ns_a, "link", "add", a, "type", "veth", "peer", "name", b, "netns", ns_b)
        _sh("ip", "-n", ns_a, "addr", "add", "10.254.0.1/30", "dev", a)
        _sh("ip", "-n", ns_b, "addr", "add", "10.254.0.2/30", "dev", b)
        _sh("ip", "-n", ns_a, "link", "set", a, "up")
        _sh("ip", "-n", ns_b, "link", "set", b, "up")

        def run_in_a(args: list[str]) -> tuple[int, str]:
            p = subprocess.run(["ip", "netns", "exec", ns_a, *args], capture_output=True, text=True)
            return p.returncode, p.stdout + p.stderr

        shape(a, Shaping(10**7), run_in_a)
        shown = run_in_a(["tc", "qdisc", "show", "dev", a])[1]
        assert "tbf" in shown and "10Mbit" in shown, shown
        for _ in range(50):   # a new veth needs a moment before it carries traffic
            if run_in_a(["ping", "-c1", "-W1", "10.254.0.2"])[0] == 0:
                break
            time.sleep(0.1)
        sink = subprocess.Popen(["ip", "netns", "exec", ns_b, sys.executable, "-c", SINK],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert sink.stdout.readline().strip() == "ready"
        status, out = run_in_a([sys.executable, "-c", SOURCE])
        received, err = sink.communicate(timeout=60)
        assert status == 0, out
        count, seconds = received.split()
        wire_bits = int(count) * (1400 + 42) * 8
        assert int(count) > 20, f"the sink received {count} frames {err}"
        rate = wire_bits / max(float(seconds), 1e-6)
        assert 5e6 < rate < 13e6, f"{count} frames in {float(seconds):.3f} s = {rate / 1e6:.1f} Mbit/s"
        # a flood keeps the data queue full (266 frames, 0.3 s at 10 Mbit/s): low-delay pings
        # (priority 6, as the ring's ACKs) take band 0 past it, a plain one after them waits
        flood = subprocess.Popen(["ip", "netns", "exec", ns_a, sys.executable, "-c", FLOOD],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(0.7)
        _, fast = run_in_a(["ping", "-c2", "-i0.2", "-W2", "-Q", "0x10", "10.254.0.2"])   # low delay
        _, slow = run_in_a(["ping", "-c1", "-W2", "10.254.0.2"])    # after them: the queue was full
        assert flood.communicate(timeout=60)[1] is None and flood.returncode == 0
        slow_ms, fast_ms = ([float(x) for x in re.findall(r"time=([0-9.]+) ms", t)] for t in (slow, fast))
        # behind the full data queue, or refused by it (ENOBUFS: its band was full when sent)
        assert (slow_ms and slow_ms[0] > 100) or "No buffer space available" in slow, slow
        assert len(fast_ms) == 2 and max(fast_ms) < 50, fast  # band 0: past it
    finally:
        subprocess.run(["ip", "netns", "del", ns_a], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns_b], capture_output=True)

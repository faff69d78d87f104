"""PortSet alone on veth pairs: receive order, own transmissions skipped, pcap files, stop()."""

from __future__ import annotations

import os
import struct
import threading
import time

import pytest

from softswitch.target.ports import PortSet
from tests.softswitch.runtime.netns import Lab

pytestmark = [pytest.mark.root, pytest.mark.own_netns]   # Lab names all it makes uniquely

if os.geteuid() != 0:
    pytest.skip("needs root for network namespaces", allow_module_level=True)


def test_portset_forwards_in_order_and_skips_own_frames(tmp_path):
    with Lab(2) as lab:
        h1, h2 = lab.hosts[1], lab.hosts[2]
        ports = PortSet({1: h1.sw_ifname, 2: h2.sw_ifname}, pcap_dir=tmp_path)
        ports.open()
        seen: list[tuple[int, bytes]] = []

        def handler(port: int, frame: bytes) -> None:
            seen.append((port, frame))
            ports.send(2 if port == 1 else 1, frame)  # a two-port wire

        loop = threading.Thread(target=ports.run, args=(handler,))
        loop.start()
        try:
            frames = [bytes.fromhex("020000000002020000000001" "88b5") + b"n%04d" % i + bytes(40)
                      for i in range(100)]
            for f in frames:
                h1.send(f)
            got = []
            while len(got) < len(frames):
                data = h2.recv_until(lambda f: f[12:14] == b"\x88\xb5", timeout=5)
                if data is None:
                    break
                got.append(data)
            assert got == frames
            # the frames the switch sent on port 2 did not come back in as port-2 arrivals
            assert [p for p, _ in seen] == [1] * len(frames)
        finally:
            ports.stop()
            loop.join(timeout=5)
            assert not loop.is_alive()
            ports.close()
        pin = (tmp_path / f"{h1.sw_ifname}_in.pcap").read_bytes()
        pout = (tmp_path / f"{h2.sw_ifname}_out.pcap").read_bytes()
        assert struct.unpack("<I", pin[:4])[0] == 0xA1B2C3D4
        assert len(pin) == 24 + sum(16 + len(f) for f in frames) == len(pout)


def test_open_of_a_missing_interface_names_it():
    ports = PortSet({3: "nosuchif0"})
    with pytest.raises(OSError, match="nosuchif0"):
        ports.open()
    assert ports.ports == {}


def test_stop_wakes_an_idle_loop_quickly():
    with Lab(1) as lab:
        ports = PortSet({1: lab.hosts[1].sw_ifname})
        ports.open()
        loop = threading.Thread(target=ports.run, args=(lambda p, f: None,))
        loop.start()
        time.sleep(0.2)
        t0 = time.monotonic()
        ports.stop()
        loop.join(timeout=5)
        assert not loop.is_alive() and time.monotonic() - t0 < 1
        ports.close()

"""802.1Q tags survive AF_PACKET ports on both backends: the kernel moves a received tag into
PACKET_AUXDATA (VLAN offload), and the port layer (Python loop and C loop) puts it back."""

from __future__ import annotations

import os
import socket
import struct
import time

import pytest

from bench.softswitch.ports_lab import free_port
from softswitch.target.ports import _AUX, PACKET_AUXDATA, SOL_PACKET, TP_STATUS_VLAN_VALID, restore_vlan
from tests.softswitch.runtime.conftest import PROGRAMS
from tests.softswitch.runtime.netns import Lab

FRAME = bytes.fromhex("020000000002" "020000000001" "8100" "a07b" "0800") + b"vlan-payload" * 4


def test_restore_vlan_from_auxdata():
    plain = FRAME[:12] + FRAME[16:]
    aux = _AUX.pack(TP_STATUS_VLAN_VALID, len(plain), len(plain), 0, 0, 0xA07B, 0)
    assert restore_vlan(plain, [(SOL_PACKET, PACKET_AUXDATA, aux)]) == FRAME
    assert restore_vlan(plain, []) == plain
    aux_ad = _AUX.pack(TP_STATUS_VLAN_VALID | 0x40, len(plain), len(plain), 0, 0, 0x0005, 0x88A8)
    assert restore_vlan(plain, [(SOL_PACKET, PACKET_AUXDATA, aux_ad)])[12:16] == struct.pack("!HH", 0x88A8, 5)


def _recv_tagged(sock: socket.socket, marker: bytes, timeout: float = 5.0) -> bytes | None:
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            data, anc, _f, addr = sock.recvmsg(65535, 256)
        except TimeoutError:
            return None
        data = restore_vlan(data, anc)
        if addr[2] != 4 and data.endswith(marker):
            return data
    return None


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces")
@pytest.mark.parametrize("backend", ["native", "python"])
def test_tagged_frame_crosses_the_switch_with_its_tag(backend):
    with Lab(2) as lab:
        lab.start_switch(PROGRAMS / "wire.p4", free_port(), extra=["--backend", backend])
        h1, h2 = lab.hosts[1], lab.hosts[2]
        h2.sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        time.sleep(0.3)
        h2.drain()
        marker = b"vlan-payload"
        h1.send(FRAME)
        got = _recv_tagged(h2.sock, marker)
        assert got == FRAME, f"got {got.hex() if got else None}; log:\n{lab.log.read_text()[-2000:]}"

"""Packets that must not be aggregated are dropped and counted by reason, and leave the slot
state untouched (a valid round afterwards still sums exactly)."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from dhcwire import header as wire
from dhcwire.p4names import (
    DROP_BAD_CHECKSUM,
    DROP_LOCAL_NOT_DHC,
    DROP_MALFORMED,
    DROP_NO_JOB,
    DROP_NO_LEVEL,
    DROP_UNAUTHORISED,
    DROP_UNSUPPORTED,
)
from tests.p4src.dhcnet import dhc_frame, drops, job_counts
from tests.p4src.test_aggregation import SWITCH, WORKERS, Rig, make_rig


@pytest.fixture
def rig() -> Rig:
    return make_rig()


def frame(w: int, lanes: list[int] | None = None, **kw) -> bytes:
    kw.setdefault("job", 7)
    kw.setdefault("child_id", w)
    return dhc_frame(WORKERS[w], SWITCH.mac, SWITCH.ip, lanes or [1, 2, 3, 4], **kw)


def still_sums(rig: Rig) -> None:
    """A full, valid round after the bad packets aggregates exactly once per worker."""
    out = []
    for w in range(3):
        out = rig.send(w, [w + 1] * 4)
    assert rig.parse(out)[1].lanes == [6] * 4
    assert job_counts(rig.sw, 2)["contributions"] == 3


def test_unauthorised_port_and_impersonation(rig: Rig) -> None:
    assert rig.sw.process(2, frame(0)) == []                 # worker 0's packet on worker 1's port
    assert rig.sw.process(2, frame(1, child_id=0)) == []     # worker 1 claims child id 0
    assert rig.sw.process(1, dhc_frame(WORKERS[1], SWITCH.mac, SWITCH.ip, [1] * 4, job=7, child_id=1)) == []
    assert drops(rig.sw) == {DROP_UNAUTHORISED: 3}
    still_sums(rig)


def test_unknown_job(rig: Rig) -> None:
    assert rig.sw.process(1, frame(0, job=8)) == []
    assert drops(rig.sw) == {DROP_NO_JOB: 1}
    still_sums(rig)


def test_unconfigured_level(rig: Rig) -> None:
    assert rig.sw.process(1, frame(0, level=200)) == []
    assert drops(rig.sw) == {DROP_NO_LEVEL: 1}
    still_sums(rig)


@pytest.mark.parametrize("bad", [
    {"version": 2},
    {"version": 0},
    {"pkt_type": 3},
    {"pkt_type": 0},
    {"num_lanes": 32},
    {"slot": 4},                    # window is 4: slots 0..3
    {"slot": 0x8000 | 5},
])
def test_malformed_header(rig: Rig, bad: dict) -> None:
    assert rig.sw.process(1, frame(0, **bad)) == []
    assert drops(rig.sw) == {DROP_MALFORMED: 1}
    still_sums(rig)


@pytest.mark.parametrize("cut", [1, 4, 15, 16 + wire.DHC_HEADER_BYTES])
def test_short_packet(rig: Rig, cut: int) -> None:
    full = frame(0)
    assert rig.sw.process(1, full[:-cut]) == []
    assert drops(rig.sw) == {DROP_MALFORMED: 1}
    still_sums(rig)


def test_ip_options_are_malformed(rig: Rig) -> None:
    pkt = Ether(bytes(Ether(src=WORKERS[0].mac, dst=SWITCH.mac) / IP(src=WORKERS[0].ip, dst=WORKERS[1].ip,
                                                                        options=b"\x01\x01\x01\x00")
                      / UDP(sport=1, dport=2) / b"x"))
    assert rig.sw.process(1, bytes(pkt)) == []
    assert drops(rig.sw) == {DROP_MALFORMED: 1}


def test_result_from_a_worker_at_the_root_is_unauthorised(rig: Rig) -> None:
    assert rig.sw.process(1, frame(0, pkt_type=int(wire.PacketType.RESULT))) == []
    assert drops(rig.sw) == {DROP_UNAUTHORISED: 1}
    still_sums(rig)


def test_local_non_dhc_and_non_ip(rig: Rig) -> None:
    udp = (
        Ether(src=WORKERS[0].mac, dst=SWITCH.mac)
        / IP(src=WORKERS[0].ip, dst=SWITCH.ip)
        / UDP(dport=53)
        / b"q"
    )
    assert rig.sw.process(1, bytes(udp)) == []
    v6 = Ether(src=WORKERS[0].mac, dst=SWITCH.mac) / IPv6(src="fe80::1", dst="fe80::2") / UDP() / b"q"
    assert rig.sw.process(1, bytes(v6)) == []
    assert drops(rig.sw) == {DROP_LOCAL_NOT_DHC: 1, DROP_UNSUPPORTED: 1}


def _corrupt_ip_checksum(frame: bytes) -> bytes:
    """The same frame with its IPv4 header checksum off by one (bytes 24..25)."""
    raw = bytearray(frame)
    raw[25] ^= 0x01
    return bytes(raw)


def test_bad_ipv4_checksum_is_dropped_and_counted(rig: Rig) -> None:
    """DATA for this switch and transit IPv4 alike: verify_checksum flags the header, ingress
    drops it under its own reason, and the slot is untouched."""
    assert rig.sw.process(1, _corrupt_ip_checksum(frame(0, [1000] * 4))) == []
    transit = bytes(Ether(src=WORKERS[0].mac, dst=SWITCH.mac) / IP(src=WORKERS[0].ip, dst=WORKERS[1].ip)
                    / UDP(sport=1, dport=2) / b"payload")
    assert len(rig.sw.process(1, transit)) == 1              # the intact one is routed
    assert rig.sw.process(1, _corrupt_ip_checksum(transit)) == []
    assert drops(rig.sw) == {DROP_BAD_CHECKSUM: 2}
    assert job_counts(rig.sw, 2)["contributions"] == 0
    still_sums(rig)


@pytest.mark.parametrize("field", ["hwtype", "ptype", "hwlen", "plen"])
def test_arp_other_than_ipv4_over_ethernet_is_malformed(rig: Rig, field: str) -> None:
    """Checked by the arp_check table in ingress (not by a parser select)."""
    bad = {"hwtype": 6, "ptype": 0x86DD, "hwlen": 8, "plen": 16}[field]
    pkt = Ether(src=WORKERS[0].mac, dst="ff:ff:ff:ff:ff:ff") / ARP(
        op=1, hwsrc=WORKERS[0].mac, psrc=WORKERS[0].ip, pdst=SWITCH.ip, **{field: bad}
    )
    assert rig.sw.process(1, bytes(pkt)) == []
    assert drops(rig.sw) == {DROP_MALFORMED: 1}

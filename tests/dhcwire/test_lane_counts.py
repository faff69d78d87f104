"""Lane counts on the wire: ``num_lanes`` is 8 bits, so K = 256 travels as 0 and back; every K the
P4 program supports fits the Ethernet MTU with all headers; a K that does not is refused naming
the MTU, by the wire helpers and by ``dhc-agent --lanes``."""

from __future__ import annotations

import numpy as np
import pytest

from controller.topology import SUPPORTED_LANES
from dhcwire import header as wire
from dhcwire.frames import decode_datagram, encode_datagram
from hostagent.cli import build_parser
from hostagent.scapy_layer import DHC


@pytest.mark.parametrize("k", SUPPORTED_LANES)
def test_supported_counts_round_trip_and_fit_the_mtu(k: int) -> None:
    assert wire.lanes_from_wire(wire.lanes_on_wire(k), wire.PacketType.RESULT) == k
    assert 0 <= wire.lanes_on_wire(k) < 256
    assert wire.ip_packet_bytes(k) <= wire.ETHERNET_MTU


def test_256_lanes_is_a_1066_byte_ip_packet_with_num_lanes_zero() -> None:
    lanes = np.arange(256, dtype=np.uint32) * 0x01010101
    payload = encode_datagram(int(wire.PacketType.DATA), 3, 5, 1, 9, 9, lanes)
    assert len(payload) + wire.IPV4_UDP_BYTES == wire.ip_packet_bytes(256) == 1066
    assert wire.unpack_header(payload)["num_lanes"] == 0
    dg = decode_datagram(payload, expected_lanes=256)
    assert np.array_equal(dg.lanes, lanes)
    assert DHC(payload).lanes == [int(v) for v in lanes]       # scapy reads 0 as 256 too


def test_probes_carry_no_lanes_and_zero_stays_zero() -> None:
    probe = encode_datagram(int(wire.PacketType.PROBE), 0, 5, 1, 0, 0, np.zeros(0, dtype=np.uint32))
    assert wire.unpack_header(probe)["num_lanes"] == 0
    assert decode_datagram(probe).lanes.size == 0
    assert wire.lanes_from_wire(0, wire.PacketType.PROBE_ACK) == 0


@pytest.mark.parametrize("k", [0, 365, 512])
def test_counts_that_do_not_fit_are_refused(k: int) -> None:
    with pytest.raises(ValueError, match="MTU" if k > 256 else "num_lanes"):
        wire.check_lanes(k)


def test_agent_refuses_lanes_over_the_mtu(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--lanes", "512"])
    assert "1500-byte Ethernet MTU" in capsys.readouterr().err
    assert build_parser().parse_args(["--lanes", "256"]).lanes == 256

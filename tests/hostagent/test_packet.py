"""The host-side packet definitions: Scapy layer, fast codec, chunking of segments."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from dhc.protocol import Segment
from dhcwire import header as wire
from dhcwire.frames import MalformedPacket, decode_datagram, encode_datagram
from hostagent.manifest import ManifestError, load_endpoint, write_manifest
from hostagent.reducer import pack_segments, unpack_segments
from hostagent.scapy_layer import DHC


def test_scapy_layer_fields_follow_wire_definition():
    names = [f.name for f in DHC.fields_desc]
    assert names == [f.name for f in wire.DHC_HEADER_FIELDS] + ["lanes"]
    assert [f.size for f in DHC.fields_desc[:-1]] == [f.bits for f in wire.DHC_HEADER_FIELDS]


def test_fast_codec_and_scapy_agree_byte_for_byte():
    lanes = np.array([0, 1, 0xFFFFFFFF, 0x80000000], dtype=np.uint32)
    fast = encode_datagram(wire.PacketType.DATA, wire.Level.VALUE_SKETCH, 513, 7, 123456,
                           wire.slot_for_chunk(123456, 64), lanes, flags=3)
    slow = bytes(DHC(pkt_type=1, level=3, job_id=513, child_id=7, flags=3, num_lanes=4,
                     chunk=123456, slot=wire.slot_for_chunk(123456, 64), lanes=list(map(int, lanes))))
    assert fast == slow
    frame = Ether() / IP(dst="10.0.0.1") / UDP(sport=wire.DHC_UDP_PORT, dport=wire.DHC_UDP_PORT) / fast
    parsed = Ether(bytes(frame))
    assert parsed[DHC].chunk == 123456 and parsed[DHC].lanes == list(map(int, lanes))
    dg = decode_datagram(fast, expected_lanes=4)
    assert (dg.job_id, dg.child_id, dg.chunk, dg.level, dg.flags) == (513, 7, 123456, 3, 3)
    np.testing.assert_array_equal(dg.lanes, lanes)


@pytest.mark.parametrize("mutate, reason", [
    (lambda b: b[:5], "short packet"),
    (lambda b: bytes([0x21]) + b[1:], "bad version"),
    (lambda b: bytes([0x17]) + b[1:], "unknown packet type"),
    (lambda b: b[:-1], "lane bytes"),
])
def test_malformed_datagrams_are_named(mutate, reason):
    good = encode_datagram(2, 1, 1, 0, 0, 0, np.zeros(4, dtype=np.uint32))
    with pytest.raises(MalformedPacket, match=reason):
        decode_datagram(mutate(good))


def test_wrong_lane_count_is_malformed():
    good = encode_datagram(2, 1, 1, 0, 0, 0, np.zeros(8, dtype=np.uint32))
    with pytest.raises(MalformedPacket, match="wrong lane count 8"):
        decode_datagram(good, expected_lanes=4)


def test_segments_round_trip_through_chunks_without_mixing_levels():
    rng = np.random.default_rng(0)
    segs = [Segment(wire.Level.SCALE, rng.integers(0, 2**32, 3, dtype=np.uint32)),
            Segment(wire.Level.BLOCK_INDEX, rng.integers(0, 2**32, 9, dtype=np.uint32)),
            Segment(wire.Level.VALUE_SKETCH, rng.integers(0, 2**32, 8, dtype=np.uint32))]
    levels, chunks = pack_segments(segs, 4)
    assert levels.tolist() == [0, 1, 1, 1, 3, 3]
    assert chunks[0, 3] == 0 and chunks[3, 1:].sum() == 0   # zero padding is neutral
    back = unpack_segments(segs, chunks)
    for s, b in zip(segs, back, strict=True):
        np.testing.assert_array_equal(s.lanes, b)


def test_manifest_round_trip_and_errors(tmp_path):
    path = tmp_path / "jobs.json"
    write_manifest(path, [{"job_id": 3, "window": 16, "lanes": 32, "workers": {
        "h1": {"ip": "10.0.0.1", "child_id": 0, "switch_ip": "10.0.100.1"},
        "h2": {"ip": "10.0.0.2", "child_id": 1, "switch_ip": "10.0.100.1"}}}])
    ep, n = load_endpoint(path, "h2")
    assert (ep.job_id, ep.child_id, ep.switch_ip, ep.window, n) == (3, 1, "10.0.100.1", 16, 2)
    with pytest.raises(ManifestError, match="'h9' is not a worker"):
        load_endpoint(path, "h9")
    path.write_text("{ nope")
    with pytest.raises(ManifestError, match=r"jobs.json:1:3: not JSON"):
        load_endpoint(path, "h1")
    path.write_text(json.dumps({"version": 1, "jobs": [{"job_id": 1, "workers": {"h1": {}}}]}))
    with pytest.raises(ManifestError, match=r"jobs\[0\].workers.h1: missing or bad field"):
        load_endpoint(path, "h1")


def test_scapy_layer_matches_the_p4_header_as_the_softswitch_parses_it():
    from pathlib import Path

    from softswitch import Switch

    program = Path(__file__).resolve().parents[2] / "p4src" / "dhc.p4"
    p4_fields = Switch.load(str(program)).header_types["dhc_h"]
    scapy_fields = [(f.name, f.size) for f in DHC.fields_desc[:-1]]
    assert scapy_fields == list(p4_fields)

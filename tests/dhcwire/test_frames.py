"""The vectorised frame codec equals the per-datagram reference byte for byte, field for field."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dhcwire import header as wire
from dhcwire.frames import decode_datagram, encode_datagram, encode_frames, frame_length, parse_frames

lane_counts = st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256])


@settings(max_examples=60, deadline=None)
@given(k=lane_counts, n=st.integers(1, 20), job=st.integers(0, 0xFFFF), child=st.integers(0, 255),
       epoch=st.integers(0, 255), ptype=st.sampled_from(list(wire.PacketType)),
       seed=st.integers(0, 2**32 - 1))
def test_encode_frames_matches_encode_datagram(k, n, job, child, epoch, ptype, seed) -> None:
    rng = np.random.default_rng(seed)
    levels = rng.integers(0, 256, n)
    chunks = rng.integers(0, 2**32, n, dtype=np.uint64)
    slots = rng.integers(0, 2**16, n)
    lanes = rng.integers(0, 2**32, (n, k), dtype=np.uint64).astype(np.uint32)
    rows = encode_frames(int(ptype), levels, job, child, chunks, slots, lanes, epoch=epoch)
    assert rows.shape == (n, frame_length(k))
    for i in range(n):
        want = encode_datagram(int(ptype), int(levels[i]), job, child, int(chunks[i]), int(slots[i]),
                               lanes[i], epoch=epoch)
        assert rows[i].tobytes() == want


@settings(max_examples=60, deadline=None)
@given(k=lane_counts, n=st.integers(1, 20), seed=st.integers(0, 2**32 - 1))
def test_parse_frames_matches_decode_datagram(k, n, seed) -> None:
    rng = np.random.default_rng(seed)
    types = 5 if k < wire.MAX_LANES else 3    # num_lanes 0 is 256 lanes in DATA/RESULT only
    payloads = [encode_datagram(int(rng.integers(1, types)), int(rng.integers(0, 256)),
                                int(rng.integers(0, 2**16)), int(rng.integers(0, 256)),
                                int(rng.integers(0, 2**32)), int(rng.integers(0, 2**16)),
                                rng.integers(0, 2**32, k, dtype=np.uint64).astype(np.uint32),
                                epoch=int(rng.integers(0, 256)))
                for _ in range(n)]
    rows = np.frombuffer(b"".join(payloads), dtype=np.uint8).reshape(n, -1)
    batch = parse_frames(rows, k)
    for i, p in enumerate(payloads):
        dg = decode_datagram(p)
        assert (batch.version[i], batch.pkt_type[i], batch.job_id[i], batch.epoch[i],
                batch.chunk[i], batch.num_lanes[i]) == (wire.DHC_VERSION, dg.pkt_type, dg.job_id,
                                                        dg.epoch, dg.chunk, k)
        assert np.array_equal(batch.lanes[i], dg.lanes)


@settings(max_examples=60, deadline=None)
@given(window=st.integers(1, wire.SLOT_SET_BIT - 1), first=st.integers(0, 2**32 - 1),
       n=st.integers(1, 200))
def test_slot_rule_for_an_array_equals_the_rule_per_chunk(window, first, n) -> None:
    """One slot rule: a round of chunks as an array gives, element for element, what one chunk
    gives -- ``chunk mod W``, with SLOT_SET_BIT in odd laps."""
    chunks = first + np.arange(n, dtype=np.int64)
    slots = wire.slot_for_chunk(chunks, window)
    assert slots.shape == chunks.shape
    for c, s in zip(chunks.tolist(), slots.tolist(), strict=True):
        assert s == wire.slot_for_chunk(c, window)
        assert s == (c % window) + (wire.SLOT_SET_BIT if (c // window) % 2 else 0)


def test_slot_rule_refuses_a_window_the_field_cannot_carry() -> None:
    for window in (0, wire.SLOT_SET_BIT):
        with pytest.raises(ValueError, match=r"window must be in 1\.\.32767"):
            wire.slot_for_chunk(np.arange(4), window)

"""The codec's reducer over the network: each round of segments becomes a stream of chunks.

A segment (``level`` + uint32 lanes) is cut into chunks of K lanes; the last chunk of a
segment is padded with zeros, which are neutral for both SUM and OR, so the switch never
mixes two levels (two ops) in one packet.  The aggregated chunks are cut back into the
segments' lengths for the codec.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from hostagent.transport import ChunkTransport


def pack_segments(segments: Sequence, lanes_per_chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """(levels per chunk, chunk lanes as (n_chunks, K) uint32) for a round's segments."""
    K = lanes_per_chunk
    counts = [-(-len(s.lanes) // K) for s in segments]
    levels = np.repeat(np.array([int(s.level) for s in segments], dtype=np.int64), counts)
    chunks = np.zeros((sum(counts), K), dtype=np.uint32)
    row = 0
    for seg, c in zip(segments, counts, strict=True):
        flat = chunks[row:row + c].reshape(-1)
        flat[:len(seg.lanes)] = np.asarray(seg.lanes, dtype=np.uint32)
        row += c
    return levels, chunks


def unpack_segments(segments: Sequence, chunks: np.ndarray) -> list[np.ndarray]:
    """Cut aggregated chunks back into arrays shaped like the segments' lanes."""
    K = chunks.shape[1]
    out, row = [], 0
    for seg in segments:
        n = len(seg.lanes)
        c = -(-n // K)
        out.append(chunks[row:row + c].reshape(-1)[:n].copy())
        row += c
    return out


class NetworkReducer:
    """``dhc.protocol.Reducer`` whose aggregation happens in the switches of the job's tree."""

    def __init__(self, transport: ChunkTransport, progress: Callable[[int], None] | None = None):
        self.transport = transport
        self.progress = progress
        self.rounds = 0

    def reduce(self, segments: Sequence) -> list[np.ndarray]:
        levels, chunks = pack_segments(segments, self.transport.endpoint.lanes)
        aggregated = self.transport.exchange(levels, chunks, progress=self.progress)
        self.rounds += 1
        return unpack_segments(segments, aggregated)

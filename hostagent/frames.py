"""Many DHC datagrams at once: headers built and parsed with numpy, one row per datagram.

``encode_datagram``/``decode_datagram`` (``hostagent.packet``) handle one datagram in Python and
stay the reference; the transport's hot path uses these instead, so its cost per packet is one
``sendto``/``recv`` and a share of a few numpy operations, not a Python loop over header fields.
The layout comes from ``DHC_HEADER_FIELDS`` like everything else on the host: each field is read
from (and written to) the bytes it spans, in network order, whatever its width and offset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dhcwire import header as wire

HEADER_BYTES = wire.DHC_HEADER_BYTES


@dataclass(frozen=True)
class FieldSpan:
    """Where one header field lives: the bytes it spans and its bit position in them."""

    name: str
    first_byte: int
    n_bytes: int
    shift: int        # right shift of the spanned bytes' big-endian value
    mask: int


def _spans() -> dict[str, FieldSpan]:
    out, bit = {}, 0
    for f in wire.DHC_HEADER_FIELDS:
        first, last = bit // 8, (bit + f.bits - 1) // 8
        n = last - first + 1
        out[f.name] = FieldSpan(f.name, first, n, 8 * n - (bit - 8 * first) - f.bits,
                                (1 << f.bits) - 1)
        bit += f.bits
    return out


SPANS: dict[str, FieldSpan] = _spans()


def _whole(span: FieldSpan) -> bool:
    """The field fills its bytes exactly (1, 2, 4 or 8 of them): one big-endian view reads or
    writes it, instead of a shift-and-mask per byte."""
    return span.shift == 0 and span.n_bytes in (1, 2, 4, 8) and span.mask == (1 << 8 * span.n_bytes) - 1


def _view(rows: np.ndarray, span: FieldSpan) -> np.ndarray:
    return rows[:, span.first_byte:span.first_byte + span.n_bytes].view(f">u{span.n_bytes}")[:, 0]


def _read(rows: np.ndarray, span: FieldSpan) -> np.ndarray:
    if _whole(span):
        return _view(rows, span).astype(np.uint64)
    value = np.zeros(len(rows), dtype=np.uint64)
    for j in range(span.n_bytes):
        value = (value << np.uint64(8)) | rows[:, span.first_byte + j].astype(np.uint64)
    return (value >> np.uint64(span.shift)) & np.uint64(span.mask)


def _write(rows: np.ndarray, span: FieldSpan, values: np.ndarray) -> None:
    if _whole(span):      # the bytes are the field's alone: assigning is or-ing into zeros
        _view(rows, span)[:] = np.asarray(values, dtype=np.uint64) & np.uint64(span.mask)
        return
    v = (np.asarray(values, dtype=np.uint64) & np.uint64(span.mask)) << np.uint64(span.shift)
    for j in range(span.n_bytes - 1, -1, -1):
        rows[:, span.first_byte + j] |= (v & np.uint64(0xFF)).astype(np.uint8)
        v = v >> np.uint64(8)


def encode_frames(pkt_type: int, levels: np.ndarray, job_id: int, child_id: int,
                  chunks: np.ndarray, slots: np.ndarray, lanes: np.ndarray, epoch: int = 0,
                  flags: int = 0) -> np.ndarray:
    """UDP payloads of ``len(levels)`` chunks as a (n, header + 4K) uint8 array, row i
    byte-identical to ``encode_datagram(pkt_type, levels[i], ..., chunks[i], slots[i], lanes[i])``."""
    lanes = np.ascontiguousarray(lanes, dtype=np.uint32)
    n, k = lanes.shape
    rows = np.zeros((n, HEADER_BYTES + wire.LANE_BYTES * k), dtype=np.uint8)
    fields = {"version": wire.DHC_VERSION, "pkt_type": pkt_type, "level": levels,
              "job_id": job_id, "child_id": child_id, "flags": flags, "num_lanes": k,
              "epoch": epoch, "chunk": chunks, "slot": slots}
    for name, value in fields.items():
        _write(rows, SPANS[name], np.asarray(value, dtype=np.uint64))
    rows[:, HEADER_BYTES:] = lanes.astype(">u4").view(np.uint8).reshape(n, -1)
    return rows


@dataclass
class ParsedBatch:
    """Header fields and lanes of a batch of well-sized datagrams (one entry per row)."""

    version: np.ndarray
    pkt_type: np.ndarray
    job_id: np.ndarray
    epoch: np.ndarray
    chunk: np.ndarray
    num_lanes: np.ndarray
    lanes: np.ndarray     # (n, K) uint32


def parse_frames(rows: np.ndarray, lanes: int) -> ParsedBatch:
    """Parse datagrams of exactly ``header + 4 * lanes`` bytes, one per row of ``rows``."""
    rows = np.ascontiguousarray(rows, dtype=np.uint8)
    get = {name: _read(rows, SPANS[name])
           for name in ("version", "pkt_type", "job_id", "epoch", "chunk", "num_lanes")}
    body = rows[:, HEADER_BYTES:HEADER_BYTES + wire.LANE_BYTES * lanes]
    values = body.reshape(len(rows), lanes, wire.LANE_BYTES).copy().view(">u4")
    return ParsedBatch(lanes=values.reshape(len(rows), lanes).astype(np.uint32), **get)


def frame_length(lanes: int) -> int:
    """Bytes of a DHC datagram carrying ``lanes`` lanes."""
    return HEADER_BYTES + wire.LANE_BYTES * lanes

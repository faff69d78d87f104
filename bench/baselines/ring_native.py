"""A ring step in the native delivery engine (``hostagent.native_delivery``, ``hde_ring_run``).

The C loop sends the step's DATA rows to the next neighbour, takes its ACKs (cumulative + SACK)
into the engine, stores the previous neighbour's DATA of this step and of the next one in
buffers held here (``NativeInbox``), acknowledges them, and watches that neighbour's silence.
What it does not take (HELLOs, other steps, foreign datagrams) comes back to the transport's
Python handler, which is the reference for all of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hostagent import native_delivery as nd
from hostagent.delivery import Outstanding
from hostagent.fastio import Destination, ip_key

#: packets a step's receive buffer holds at first (a longer step grows it: ``GROW``)
MIN_CAP = 64


@dataclass
class NativeInbox:
    """One step's arrivals from the previous neighbour, in arrays the C loop fills."""

    step: int
    have: np.ndarray        # (cap,) uint8
    nvalues: np.ndarray     # (cap,) uint32: int32 values in each packet
    values: np.ndarray      # (cap, values_per_packet) int32
    count: int = 0
    n_have: int = 0

    @classmethod
    def empty(cls, step: int, cap: int, per_packet: int) -> NativeInbox:
        return cls(step, np.zeros(cap, np.uint8), np.zeros(cap, np.uint32),
                   np.zeros((cap, per_packet), np.int32))

    @property
    def cap(self) -> int:
        return len(self.have)

    def take(self, box: Any) -> None:
        """Merge what the Python handler stored for this step (a ``StepInbox``: it got there
        first)."""
        if self.count == 0:
            self.count = box.count
        for seq, piece in box.pieces.items():
            if not self.have[seq]:
                vals = np.frombuffer(piece, dtype="<i4")
                self.values[seq, :vals.size] = vals
                self.nvalues[seq], self.have[seq] = vals.size, 1
                self.n_have += 1

    def array(self) -> np.ndarray:
        """The step's int32 array, packets in order."""
        n, full = self.count, self.values.shape[1]
        if n == 0 or bool(np.all(self.nvalues[:n - 1] == full)):
            return self.values[:n].reshape(-1)[:max(0, (n - 1) * full + int(self.nvalues[n - 1]))].copy()
        return np.concatenate([self.values[i, :self.nvalues[i]] for i in range(n)])

    def bind(self, c: Any, keep: list[Any]) -> None:
        c.step, c.cap, c.count, c.n_have, c.dirty = self.step & 0xFFFF, self.cap, self.count, self.n_have, 0
        for name, ctype, arr in (("have", "uint8_t[]", self.have),
                                 ("nvalues", "uint32_t[]", self.nvalues),
                                 ("values", "int32_t[]", self.values)):
            keep.append(nd.FFI.from_buffer(ctype, arr))
            setattr(c, name, keep[-1])

    def sync(self, c: Any) -> None:
        self.count, self.n_have = int(c.count), int(c.n_have)


def inbox_for(t: Any, step: int, cap: int, per_packet: int) -> NativeInbox:
    """The native inbox of ``step``: carried from the last step, or new; with whatever the Python
    handler stored for it merged in (grown to its packet count if needed)."""
    box = t.native_inbox.pop(step, None) or NativeInbox.empty(step, cap, per_packet)
    py = t.inbox.pop(step, None)
    if py is not None:
        if py.count > box.cap:
            box = NativeInbox.empty(step, py.count, per_packet)
        box.take(py)
    return box


def run_step(t: Any, step: int, frames: Any, out: Outstanding, silence: float,
             per_packet: int, poll_cap: float) -> np.ndarray:
    """Deliver one step's frames (``DataFrames``) of ring transport ``t`` and collect the
    previous neighbour's array of the step; the errors are the transport's."""
    # the neighbour's step is about as long as ours (a ring's chunks differ by one value), but
    # the next step may be longer (after a one-packet exchange): at least MIN_CAP packets
    cap = max(len(frames.lens) + 2, MIN_CAP)
    boxes = [inbox_for(t, step, cap, per_packet), inbox_for(t, (step + 1) & 0xFFFF, cap, per_packet)]
    g, keep = nd.FFI.new("hde_ring *"), []
    engine, bound = nd.load_engine(t.delivery), nd.BoundOutstanding(out)
    g.engine, g.out = engine, bound.c
    nd.bind_socket(g.sock, t._sock.fileno(), frames.rows, Destination.of(t._next_addr),
                   frames.lens, t._rx, keep)
    g.next_ip, g.prev_ip = ip_key(t.cfg.next.ip), ip_key(t.cfg.prev.ip)
    g.job, g.step, g.values_per_packet = t.cfg.job_id & 0xFFFF, step, per_packet
    g.silence = silence
    for j, b in enumerate(boxes):
        b.bind(g.box[j], keep)
    spent, lib = nd.FFI.new("int64_t *"), nd.lib()
    try:
        while True:
            g.last_from_prev = t._last_from_prev     # both clocks are CLOCK_MONOTONIC
            status = lib.hde_ring_run(g, poll_cap, spent)
            bound.sync()
            t._last_from_prev = max(t._last_from_prev, g.last_from_prev)
            rx = t._rx
            for k in [g.other[j] for j in range(g.n_other)]:
                t._handle(rx.payload(k), rx.address(k))
            g.n_other = 0
            t._send_acks()
            if status == nd.DONE:
                break
            _on_status(t, g, status, step, out, silence, boxes, keep, int(spent[0]))
            t.raise_mismatch()
    finally:
        nd.store_engine(engine, t.delivery)
        _count(t, g)
    for j, b in enumerate(boxes):
        b.sync(g.box[j])
    # the step is over: later retransmissions of it are acknowledged by the Python handler
    t.step_received(step, boxes[0].count)
    if boxes[1].count:
        t.native_inbox[boxes[1].step] = boxes[1]
    return boxes[0].array()


def _on_status(t: Any, g: Any, status: int, step: int, out: Outstanding, silence: float,
               boxes: list[NativeInbox], keep: list[Any], spent: int) -> None:
    """What the C loop came back for, other than the end: an error to raise, a disagreement to
    record, or a receive buffer to grow (its datagram went to ``t.inbox``: taken over here)."""
    if status == nd.GIVE_UP:
        raise t.unacknowledged(step, spent, out)
    if status == nd.SILENT:
        raise t.silent_prev(step, silence, int(g.box[0].n_have), int(g.box[0].count) or "?")
    if status == nd.MISMATCH:
        held = g.box[0 if g.mismatch_step == g.box[0].step else 1].count
        t._disagree(f"ring job {t.cfg.job_id}: {t._who(t.cfg.prev)} sent step "
                    f"{g.mismatch_step} packet {g.mismatch_seq} of {g.mismatch_count}, "
                    f"earlier packets said {held}")
    if status == nd.SOCKET_ERROR:
        raise OSError(g.sock.rx_errno, "recvmmsg failed")
    if status == nd.GROW:
        j = g.grow_box
        bigger = NativeInbox.empty(boxes[j].step, int(g.grow_count), g.values_per_packet)
        py = t.inbox.pop(bigger.step, None)
        if py is not None:
            bigger.take(py)
        boxes[j] = bigger
        bigger.bind(g.box[j], keep)
        t.stats.buffer_grows += 1


def _count(t: Any, g: Any) -> None:
    st = t.stats
    nd.add_socket_counts(st, g.sock)
    st.retransmissions += g.retransmissions
    st.data_packets_sent += g.data_packets_sent
    st.acks_sent += g.acks_sent
    st.duplicates += g.duplicates

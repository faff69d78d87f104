"""The native delivery engine: one exchange's loop in C (``native_delivery.c``), GIL released.

``hostagent.delivery.Delivery`` is the reference: the same window, timers, backoff and retry
budget, written in Python.  The C loop keeps its per-item state in the very numpy arrays of a
``delivery.Outstanding`` and its persistent state (RTT estimate, window) is copied from and back
into the transport's ``Delivery`` around each exchange, so the Python engine can take over (or be
compared) at any exchange boundary.  The transports (``hostagent.transport`` for DHC,
``bench/baselines/ring_transport`` for the ring) give the C loop their prebuilt frames and a
receive buffer; it sends, receives, matches answers, retransmits and fills the result array, and
comes back to Python only for what Python does: a datagram that is not a well-formed answer
(probes, foreign or malformed packets), the end, or the error naming who did not answer.

``DHC_HOST_ENGINE`` chooses: ``native`` (this module; the default where it builds and the
batched I/O of ``hostagent.fastio`` is selected) or ``python`` (the reference engine).

While many items are in flight the C loop coalesces its receives (``hde_linger_for``): instead
of waking for every answer it sleeps until about a quarter of them can have come, then drains them
in one ``recvmmsg`` and refills the window in one ``sendmmsg``.  Only when the socket is read
changes, not what the engine decides from what it reads.  ``DHC_HOST_COALESCE=off`` turns it
off (benchmarks compare both); :func:`linger_reference` is the rule in Python, tested against
the C function.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hostagent import fastio
from hostagent.delivery import Delivery, Outstanding

ENV = "DHC_HOST_ENGINE"
COALESCE_ENV = "DHC_HOST_COALESCE"
FFI = fastio._FFI
#: the C loop's coalescing constants (native_linger.c HDE_LINGER_ITEMS, HDE_LINGER_MIN,
#: HDE_LINGER_GAP_MIN)
LINGER_ITEMS, LINGER_MIN, LINGER_GAP_MIN = 16, 20e-6, 10e-6

DONE, GIVE_UP, OTHER, SOCKET_ERROR, SILENT, MISMATCH, GROW = 0, 2, 3, 4, 5, 6, 7


def native_engine_selected() -> bool:
    """Whether the transports run the C engine: ``DHC_HOST_ENGINE`` (``native``/``python``); by
    default native when the batched I/O is selected (it builds, ``DHC_HOST_IO`` allows it)."""
    mode = os.environ.get(ENV, "").strip().lower()
    if mode not in ("", "native", "python"):
        raise fastio.HostIOError(f"{ENV} must be 'native' or 'python', got {mode!r}")
    if mode == "python":
        return False
    io_native = fastio.native_selected()
    if mode == "native" and not io_native:
        raise fastio.HostIOError(f"{ENV}=native needs the batched host I/O "
                                 f"({fastio.ENV}=python was asked for)")
    return io_native


def coalescing_selected() -> bool:
    """Whether the C loop coalesces its receives: ``DHC_HOST_COALESCE`` (``on``, the default, or
    ``off``)."""
    mode = os.environ.get(COALESCE_ENV, "").strip().lower()
    if mode not in ("", "on", "off"):
        raise fastio.HostIOError(f"{COALESCE_ENV} must be 'on' or 'off', got {mode!r}")
    return mode != "off"


@dataclass
class LingerState:
    """``hde_sock``'s coalescing fields: seconds per answered item (EWMA, 0 = not measured), and
    the time and completed count of the last completion."""

    gap: float = 0.0
    mark_t: float = 0.0
    mark_done: int = 0


def linger_reference(st: LingerState, has_srtt: bool, srtt: float, sent: int, n_done: int,
                     wait: float) -> float:
    """``hde_linger_for`` in Python: how long the C loop sleeps before draining, 0 to poll now.
    A quarter of the items in flight (at most ``LINGER_ITEMS``) at the measured time per answer,
    never past ``wait`` (the next deadline) nor a quarter of the smoothed RTT; 0 below 2 items
    or ``LINGER_MIN`` s, before a time per answer is measured, or while answers come less than
    ``LINGER_GAP_MIN`` s apart (they already come several per wake-up)."""
    batch = min(max(sent - n_done, 0) // 4, LINGER_ITEMS)
    if batch < 2 or st.gap < LINGER_GAP_MIN:
        return 0.0
    t = batch * st.gap
    if has_srtt and t > srtt / 4:
        t = srtt / 4
    t = min(t, wait)
    return t if t >= LINGER_MIN else 0.0


def sample_reference(st: LingerState, n_done: int, now: float) -> None:
    """``hde_linger_sample`` in Python: after a receive that completed items, one time-per-answer
    sample since the previous completion, taken in with weight 1/2 below the estimate and 1/8
    above it; the first completion only sets the mark."""
    if n_done <= st.mark_done:
        return
    if st.mark_t > 0:
        g = (now - st.mark_t) / (n_done - st.mark_done)
        st.gap = g if st.gap <= 0 else st.gap + (g - st.gap) * (0.5 if g < st.gap else 0.125)
    st.mark_t, st.mark_done = now, n_done


def lib() -> Any:
    return fastio._lib()


def load_engine(delivery: Delivery) -> Any:
    """An ``hde_engine`` holding ``delivery``'s policy, RTT estimate and window."""
    e = FFI.new("hde_engine *")
    p, rtt, w = delivery.policy, delivery._rtt, delivery.window
    e.initial_timeout, e.backoff, e.max_timeout = p.initial_timeout, p.backoff, p.max_timeout
    e.min_timeout, e.max_retries = p.min_timeout, p.max_retries
    e.has_srtt = rtt.srtt is not None
    e.srtt, e.rttvar = rtt.srtt or 0.0, rtt.rttvar
    e.limit, e.cwnd, e.ssthresh = w.limit, w.cwnd, w.ssthresh
    return e


def store_engine(e: Any, delivery: Delivery) -> None:
    """Copy the RTT estimate and window the C loop moved back into ``delivery``."""
    rtt, w = delivery._rtt, delivery.window
    rtt.srtt = e.srtt if e.has_srtt else None
    rtt.rttvar = e.rttvar
    w.cwnd, w.ssthresh = e.cwnd, e.ssthresh


@dataclass
class BoundOutstanding:
    """An ``hde_out`` over the arrays of one ``Outstanding`` (kept alive here)."""

    out: Outstanding
    c: Any = None
    keep: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        out, o = self.out, FFI.new("hde_out *")
        self.scratch = np.zeros(max(1, out.n), dtype=np.int64)
        self.scratch2 = np.zeros(max(1, out.n), dtype=np.int64)
        ptrs = {"done": ("uint8_t[]", out.done.view(np.uint8)),
                "deadline": ("double[]", out.deadline), "first_sent": ("double[]", out.first_sent),
                "timeout": ("double[]", out.timeout), "tries": ("int64_t[]", out.tries),
                "scratch": ("int64_t[]", self.scratch), "scratch2": ("int64_t[]", self.scratch2)}
        for name, (ctype, arr) in ptrs.items():
            buf = FFI.from_buffer(ctype, arr) if arr.size else FFI.NULL
            self.keep.append(buf)
            setattr(o, name, buf)
        o.n, o.n_done, o.sent, o.lo = out.n, out.n_done, out.sent, out.lo
        self.c = o

    def sync(self) -> None:
        """The counters the C loop moved, back into the Python ``Outstanding``."""
        o, out = self.c, self.out
        out.n_done, out.sent, out.lo = int(o.n_done), int(o.sent), int(o.lo)


def bind_socket(sock: Any, fd: int, frames: np.ndarray, dest: fastio.Destination,
                lens: np.ndarray | None, rx: fastio.Receiver, keep: list[Any]) -> None:
    """Fill an ``hde_sock`` with a transport's frame rows, destination and receive buffer."""
    sock.fd, sock.stride, sock.ip, sock.port = fd, frames.shape[1], dest.ip, dest.port
    for name, ctype, arr in (("frames", "uint8_t[]", frames), ("rx", "uint8_t[]", rx.buf),
                             ("rx_lens", "uint32_t[]", rx.lens), ("rx_ips", "uint32_t[]", rx.ips),
                             ("rx_ports", "uint16_t[]", rx.ports)):
        buf = FFI.from_buffer(ctype, arr)
        keep.append(buf)
        setattr(sock, name, buf)
    if lens is not None:
        buf = FFI.from_buffer("uint32_t[]", lens)
        keep.append(buf)
        sock.lens = buf
    sock.rx_stride, sock.rx_rows = rx.buf.shape[1], rx.buf.shape[0]
    sock.coalesce = coalescing_selected()


def send_refusals(sock: Any) -> dict[str, int]:
    """Refused sends of the run by the Python exception name the reference path counts."""
    out: dict[str, int] = {}
    for k in range(min(int(sock.n_errs), 64)):
        name = fastio._errno_name(sock.errs[k])
        out[name] = out.get(name, 0) + 1
    extra = int(sock.n_errs) - 64
    if extra > 0 and out:
        first = next(iter(out))
        out[first] += extra
    return out


def add_socket_counts(stats: Any, sock: Any) -> None:
    """Add one C run's socket counters (an ``hde_sock``) to a transport's stats: packets and
    bytes each way, its system calls (ppoll, recvmmsg, sendmmsg/sendto), and its refused sends
    to ``send_errors``/``reasons`` where the stats keep them (DHC's ``TransportStats``; the
    ring's counts no refusals)."""
    stats.packets_sent += sock.packets_sent
    stats.bytes_sent += sock.bytes_sent
    stats.packets_received += sock.packets_received
    stats.bytes_received += sock.bytes_received
    stats.system_calls += sock.polls + sock.drains + sock.sends + sock.lingers
    if not hasattr(stats, "reasons"):
        return
    for name, count in send_refusals(sock).items():
        stats.send_errors += count
        stats.reasons[name] = stats.reasons.get(name, 0) + count

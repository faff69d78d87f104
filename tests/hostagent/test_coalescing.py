"""The native engine's receive coalescing (``hde_linger_for``, ``hde_linger_sample`` in
``native_linger.c``) against its Python statement (``native_delivery.linger_reference``,
``sample_reference``): the same sleep and the same time-per-answer estimate, bit for bit, and
the properties that keep it from slowing an exchange down."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostagent import native_delivery as nd

from .native_engine import requires_native

pytestmark = requires_native

seconds = st.floats(0.0, 0.05, allow_nan=False)


def _c_structs(gap: float, has_srtt: bool, srtt: float, sent: int, n_done: int,
               coalesce: bool = True):
    sock, eng, out = nd.FFI.new("hde_sock *"), nd.FFI.new("hde_engine *"), nd.FFI.new("hde_out *")
    sock.coalesce, sock.gap = coalesce, gap
    eng.has_srtt, eng.srtt = has_srtt, srtt
    out.n, out.sent, out.n_done = max(sent, 1), sent, n_done
    return sock, eng, out


@settings(max_examples=300, deadline=None)
@given(gap=st.one_of(st.just(0.0), st.floats(1e-7, 2e-3)), has_srtt=st.booleans(),
       srtt=seconds, in_flight=st.integers(0, 300), done=st.integers(0, 1000), wait=seconds)
def test_the_sleep_is_the_python_rule_bit_for_bit(gap, has_srtt, srtt, in_flight, done,
                                                  wait) -> None:
    sent = done + in_flight
    sock, eng, out = _c_structs(gap, has_srtt, srtt, sent, done)
    got = nd.lib().hde_linger_for(sock, eng, out, wait)
    want = nd.linger_reference(nd.LingerState(gap=gap), has_srtt, srtt, sent, done, wait)
    assert got == want
    # never past the next deadline nor a quarter of the RTT; never while fewer than 8 items are
    # in flight (the last answers of an exchange are taken as they come) or unmeasured
    assert 0.0 <= got <= wait
    if has_srtt:
        assert got <= srtt / 4
    if in_flight < 8 or gap < nd.LINGER_GAP_MIN:
        assert got == 0.0     # answers less than 10 us apart come several per wake-up anyway
    # even with the time per answer overestimated 3x, the sleep ends before every item in
    # flight can have been answered: the pipe never runs dry while the loop sleeps
    assert got <= in_flight * gap / 3 + 1e-18 or got == 0.0
    sock.coalesce = False
    assert nd.lib().hde_linger_for(sock, eng, out, wait) == 0.0


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.tuples(st.integers(0, 40), st.floats(0.0, 0.01)), min_size=1,
                      max_size=30))
def test_the_time_per_answer_estimate_is_the_python_rule_bit_for_bit(steps) -> None:
    sock = nd.FFI.new("hde_sock *")
    ref, done, now = nd.LingerState(), 0, 1000.0
    for completed, dt in steps:
        done, now = done + completed, now + dt
        nd.lib().hde_linger_sample(sock, done, now)
        nd.sample_reference(ref, done, now)
        assert (sock.gap, sock.mark_t, sock.mark_done) == (ref.gap, ref.mark_t, ref.mark_done)


def test_the_estimate_falls_fast_and_rises_slowly() -> None:
    """The first completion only sets the mark; a shorter time per answer is taken in at 1/2, a
    longer one at 1/8 (a long estimate would let the pipe run dry, and then measure that)."""
    ref = nd.LingerState()
    nd.sample_reference(ref, 4, 1.0)
    assert ref.gap == 0.0 and (ref.mark_t, ref.mark_done) == (1.0, 4)
    nd.sample_reference(ref, 14, 1.001)            # 10 answers in 1 ms
    assert ref.gap == pytest.approx(1e-4)
    nd.sample_reference(ref, 24, 1.0015)           # 50 us each: half way down
    assert ref.gap == pytest.approx(7.5e-5)
    nd.sample_reference(ref, 25, 1.0025)           # 1 ms for one: an eighth of the way up
    assert ref.gap == pytest.approx(7.5e-5 + (1e-3 - 7.5e-5) / 8)
    nd.sample_reference(ref, 25, 2.0)              # nothing completed: no sample
    assert ref.mark_t == 1.0025


def test_coalescing_setting_is_read_and_a_bad_one_named(monkeypatch) -> None:
    for value, on in (("", True), ("on", True), ("OFF", False)):
        monkeypatch.setenv(nd.COALESCE_ENV, value)
        assert nd.coalescing_selected() is on
    monkeypatch.setenv(nd.COALESCE_ENV, "sometimes")
    with pytest.raises(nd.fastio.HostIOError, match="DHC_HOST_COALESCE must be 'on' or 'off'"):
        nd.coalescing_selected()


def test_bound_sockets_carry_the_setting(monkeypatch) -> None:
    """``bind_socket`` (both transports) hands the setting to the C loop."""
    import socket

    from hostagent.fastio import Destination, Receiver

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        rx, frames = Receiver(s), np.zeros((2, 30), np.uint8)
        for value, flag in (("off", 0), ("on", 1)):
            monkeypatch.setenv(nd.COALESCE_ENV, value)
            sock, keep = nd.FFI.new("hde_sock *"), []
            nd.bind_socket(sock, s.fileno(), frames, Destination.of(("127.0.0.1", 9)), None, rx,
                           keep)
            assert sock.coalesce == flag
    finally:
        s.close()

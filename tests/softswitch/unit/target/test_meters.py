"""Meters with control-plane rates (BMv2's two-rate three-colour marker, ``bm_sim/meters.cpp``)
on both backends, with a clock the test drives: colours, refill, byte meters, direct meters,
unconfigured meters, out-of-range indexes, and a random trace compared between the backends and
a straight transcription of BMv2's ``Meter::execute``."""

from __future__ import annotations

import random
import time

import pytest

from softswitch import Switch
from softswitch.api import Exact, MeterConfig, RuntimeAPIError
from softswitch.native.build import compiler
from softswitch.stf.syntax import MeterSetRates, parse_command
from softswitch.target.meters import MeterCell

from ..helpers import frame, program, run_words, switch, words

BACKENDS = ["python", pytest.param("native", marks=pytest.mark.skipif(compiler() is None, reason="no cc"))]

ILOCALS = """
    meter<bit<32>>(4, MeterType.packets) mp;
    meter<bit<32>>(2, MeterType.bytes) mb;
    direct_meter<bit<32>>(MeterType.packets) dm;
    action col() { dm.read(hdr.d.w5); }
    table t { key = { hdr.d.w4: exact; } actions = { col; NoAction; } meters = dm;
              default_action = col(); }
"""

INGRESS = """
        if (hdr.d.w7 == 1) { mp.execute_meter(hdr.d.w0, hdr.d.w1); }
        if (hdr.d.w7 == 2) { mb.execute_meter(hdr.d.w0, hdr.d.w1); }
        if (hdr.d.w7 == 3) { t.apply(); }
"""


class Clock:
    """Microseconds since the switch started, advanced by the test."""

    def __init__(self) -> None:
        self.t = 0

    def __call__(self) -> int:
        return self.t


def _switch(backend: str):
    sw = switch(INGRESS, backend=backend, ilocals=ILOCALS)
    clk = Clock()
    sw.set_clock(clk)
    return sw, clk


def _color(sw, idx: int, kind: int = 1, w4: int = 0, w5: int = 99) -> int:
    out = run_words(sw, idx, 77, 0, 0, w4, w5, 0, kind)
    return out[5] if kind == 3 else out[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_packet_meter_colours_and_refill(backend: str):
    sw, clk = _switch(backend)
    assert _color(sw, 0) == 0                       # unconfigured: GREEN
    assert sw.meter_get_config("mp", 0) is None
    cfg = MeterConfig(cir=1000, cburst=2, pir=2000, pburst=3)  # packets per second
    sw.meter_set_config("mp", 0, cfg)
    assert sw.meter_get_config("mp", 0) == cfg
    assert sw.meter_get_config("mp", 1) is None
    # rates read back as PI gets them from BMv2 (double per microsecond, * 1e6, truncated)
    sw.meter_set_config("mp", 1, MeterConfig(cir=249, cburst=2, pir=1001, pburst=3))
    assert sw.meter_get_config("mp", 1) == MeterConfig(248, 2, 1000, 3)
    # buckets start full: 2 GREEN, then 1 YELLOW (peak still has a token), then RED
    assert [_color(sw, 0) for _ in range(4)] == [0, 0, 1, 2]
    assert _color(sw, 1) == 0                       # another cell is untouched
    clk.t = 500      # 0.5 ms: committed +0 (floor(0.5)), peak +1
    assert _color(sw, 0) == 1
    clk.t = 1000     # committed +1, peak +1
    assert [_color(sw, 0), _color(sw, 0)] == [0, 2]
    clk.t = 10_000_000  # long idle: buckets capped at their bursts
    assert [_color(sw, 0) for _ in range(4)] == [0, 0, 1, 2]
    sw.meter_set_config("mp", 0, None)              # back to unconfigured
    assert [_color(sw, 0) for _ in range(3)] == [0, 0, 0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_byte_meter_all_cells_and_bounds(backend: str):
    sw, clk = _switch(backend)
    n = len(frame())                                 # bytes per packet
    sw.meter_set_config("mb", None, MeterConfig(cir=0, cburst=n, pir=0, pburst=2 * n))
    assert sw.meter_get_config("mb", 1) == MeterConfig(0, n, 0, 2 * n)
    assert [_color(sw, 1, kind=2) for _ in range(3)] == [0, 1, 2]
    assert [_color(sw, 0, kind=2) for _ in range(3)] == [0, 1, 2]
    # an index past the end leaves the destination as it was (BMv2 execute_meter)
    assert _color(sw, 7, kind=2) == 77
    with pytest.raises(RuntimeAPIError, match="out of range"):
        sw.meter_set_config("mb", 2, MeterConfig(1, 1, 1, 1))
    with pytest.raises(ValueError, match="committed rate 5 exceeds peak rate 4"):
        sw.meter_set_config("mb", 0, MeterConfig(5, 1, 4, 1))
    with pytest.raises(RuntimeAPIError, match="no meter named nope"):
        sw.meter_set_config("nope", 0, None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_direct_meter(backend: str):
    sw, clk = _switch(backend)
    sw.table_add("t", "col", {"hdr.d.w4": Exact(5)})
    sw.table_add("t", "col", {"hdr.d.w4": Exact(6)})
    assert _color(sw, 0, kind=3, w4=5) == 0          # entry without a configuration: GREEN
    cfg = MeterConfig(cir=1_000_000, cburst=1, pir=1_000_000, pburst=2)
    sw.direct_meter_set_config("t", {"hdr.d.w4": Exact(5)}, cfg)
    assert sw.direct_meter_get_config("t", {"hdr.d.w4": Exact(5)}) == cfg
    assert sw.direct_meter_get_config("t", {"hdr.d.w4": Exact(6)}) is None
    assert [_color(sw, 0, kind=3, w4=5) for _ in range(3)] == [0, 1, 2]
    assert _color(sw, 0, kind=3, w4=6) == 0          # the other entry has its own meter
    # a miss runs no meter: the default action's read leaves its target unchanged (BMv2)
    assert _color(sw, 0, kind=3, w4=9, w5=1234) == 1234
    # modifying the entry keeps its meter; other table writes keep the meter state
    sw.table_modify("t", "col", {"hdr.d.w4": Exact(5)})
    sw.table_add("t", "NoAction", {"hdr.d.w4": Exact(7)})
    assert _color(sw, 0, kind=3, w4=5) == 2
    # p4c makes read()'s target the meter's result field: BMv2 writes it on every hit, also
    # when the entry's action does not call read()
    assert _color(sw, 0, kind=3, w4=7, w5=1234) == 0
    clk.t = 2                                        # 1 token per microsecond
    assert [_color(sw, 0, kind=3, w4=5) for _ in range(3)] == [0, 1, 2]
    sw.direct_meter_set_config("t", {"hdr.d.w4": Exact(5)}, None)
    assert _color(sw, 0, kind=3, w4=5) == 0
    with pytest.raises(RuntimeAPIError, match="no such entry"):
        sw.direct_meter_set_config("t", {"hdr.d.w4": Exact(8)}, cfg)


FALLBACK = """
    direct_meter<bit<32>>(MeterType.packets) dm2;
    action a1() { bit<32> c = 9; dm2.read(c); hdr.d.w5 = c; }
    action a2() { bit<32> c = 5; dm2.read(c); hdr.d.w6 = c; }
    table t2 { key = { hdr.d.w4: exact; } actions = { a1; a2; } meters = dm2; default_action = a1(); }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_direct_meter_read_into_action_locals(backend: str):
    """A target the table cannot see (an action's local): each read() assigns the colour of its
    table's hit; after a miss it leaves its target."""
    sw = switch("t2.apply();", backend=backend, ilocals=FALLBACK)
    sw.set_clock(lambda: 0)
    sw.table_add("t2", "a1", {"hdr.d.w4": Exact(1)})
    sw.table_add("t2", "a2", {"hdr.d.w4": Exact(2)})
    for v in (1, 2):
        sw.direct_meter_set_config("t2", {"hdr.d.w4": Exact(v)}, MeterConfig(0, 0, 0, 1))
    assert run_words(sw, 0, 0, 0, 0, 1, 50, 60)[5:7] == [1, 60]     # a1: local c = YELLOW
    assert run_words(sw, 0, 0, 0, 0, 2, 50, 60)[5:7] == [50, 1]     # a2: its c = YELLOW
    assert run_words(sw, 0, 0, 0, 0, 3, 50, 60)[5:7] == [9, 60]     # miss: c keeps 9


def _bmv2_execute(st: dict, amount: int, now: int) -> int:
    """BMv2's ``Meter::execute`` written out independently: rates reversed (peak first)."""
    for r, colour in ((1, 2), (0, 1)):  # st[...][0] committed, [1] peak, as configured
        since = int(now * st["rate"][r])
        new = since - st["last"][r]
        st["last"][r] = since
        st["tokens"][r] = min(st["tokens"][r] + new, st["burst"][r])
        if st["tokens"][r] < amount:
            return colour
        st["tokens"][r] -= amount
    return 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_trace_matches_bmv2(backend: str):
    rng = random.Random(14)
    sw, clk = _switch(backend)
    n = len(frame())
    cfg = MeterConfig(cir=rng.randint(1, 300_000), cburst=rng.randint(0, 4 * n),
                      pir=0, pburst=rng.randint(0, 8 * n))
    cfg = MeterConfig(cfg.cir, cfg.cburst, cfg.cir + rng.randint(0, 500_000), cfg.pburst)
    sw.meter_set_config("mb", 1, cfg)
    ref = {"rate": [cfg.cir / 1e6, cfg.pir / 1e6], "burst": [cfg.cburst, cfg.pburst],
           "tokens": [cfg.cburst, cfg.pburst], "last": [0, 0]}
    cell = MeterCell()
    cell.configure(cfg)
    got, want, mine = [], [], []
    for _ in range(300):
        clk.t += rng.choice([0, 1, 3, 17, 150, 999])
        got.append(_color(sw, 1, kind=2))
        want.append(_bmv2_execute(ref, n, clk.t))
        mine.append(cell.execute(n, clk.t))
    assert got == want == mine
    assert set(want) == {0, 1, 2}                    # the trace visits every colour


@pytest.mark.parametrize("backend", BACKENDS)
def test_meter_result_width(backend: str):
    """The colour is truncated to the destination's width, as BMv2's ``Field::set``."""
    sw = switch("m.execute_meter(32w0, hdr.d.w1[0:0]);", backend=backend,
                ilocals="meter<bit<32>>(1, MeterType.packets) m;")
    sw.set_clock(lambda: 0)
    sw.meter_set_config("m", 0, MeterConfig(0, 0, 0, 0))   # empty buckets: RED (2) -> bit<1> 0
    out = sw.process(0, frame(0, 3))
    assert words(out[0][1])[1] == 2


def test_stf_meter_commands_parse_and_refuse():
    want = MeterSetRates(3, "m", 2, ((0.5, 10), (1.0, 20)))
    assert parse_command(3, "meter_set_rates m 2 0.5:10 1:20") == want
    assert parse_command(4, "meter_array_set_rates m 0:1 0:2").index is None
    with pytest.raises(ValueError, match="takes: meter index"):
        parse_command(1, "meter_set_rates m 0 1:1")
    with pytest.raises(ValueError, match="is not a number"):
        parse_command(1, "meter_array_set_rates m x:1 1:1")


def test_meter_clock_and_random_seed_start_with_the_switch(tmp_path, monkeypatch):
    """A checked program can come from the disk cache (pickled when it was first checked): each
    switch still starts its meter clock at its own start and draws a fresh random seed."""
    monkeypatch.setenv("SOFTSWITCH_CACHE", str(tmp_path))
    monkeypatch.setenv("SOFTSWITCH_PROGRAM_CACHE", "1")
    src = program(INGRESS, ilocals=ILOCALS)
    first = Switch.from_source(src, "cached.p4")
    time.sleep(0.05)
    second = Switch.from_source(src, "cached.p4")      # unpickled from tmp_path
    assert list(tmp_path.rglob("*.prog.pickle"))
    assert second.prog is not first.prog
    assert second.inst.state.t0_ns > first.inst.state.t0_ns
    assert second.inst.state.rng.state != first.inst.state.rng.state
    assert second.inst.state.now_us() < 1_000_000


@pytest.mark.parametrize("backend", BACKENDS)
def test_clock_extremes(backend: str):
    """A clock before the start counts as the start; one far beyond the rates' range saturates
    the token count (both backends alike, no undefined conversion in C)."""
    sw, clk = _switch(backend)
    sw.meter_set_config("mp", 0, MeterConfig(cir=1 << 40, cburst=1, pir=1 << 40, pburst=1))
    clk.t = -5
    assert [_color(sw, 0), _color(sw, 0)] == [0, 2]
    clk.t = 1 << 62
    assert [_color(sw, 0), _color(sw, 0)] == [0, 2]

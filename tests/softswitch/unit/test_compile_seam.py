"""The seam between compile time and run time: ``softswitch.compile`` returns a
``CompiledProgram`` that holds no run-time object and pickles small; a ``Switch`` makes its own
objects from it; the controller and the P4Runtime server get P4Info and device configs from
``compile`` without building a switch."""

from __future__ import annotations

import dataclasses
import io
import pickle
from pathlib import Path

import pytest

import softswitch
from softswitch import CompiledProgram, P4CompileError, Switch
from softswitch.api import Lpm
from softswitch.target.crc import CustomCrc
from softswitch.target.externs import Counter, DirectCounter, Meter, Register, ValueSet
from softswitch.target.instances import SwitchState
from softswitch.target.meters import MeterCell
from softswitch.target.profiles import ActionProfile
from softswitch.target.rng import XorShift64
from softswitch.target.tables import Table
from tests.softswitch.unit.helpers import program

ROOT = Path(__file__).resolve().parents[3]
PROGRAMS = ROOT / "tests" / "softswitch" / "programs"
BASIC = PROGRAMS / "basic_ipv4.p4"
DHC = ROOT / "p4src" / "dhc.p4"
#: to 10.0.1.5 (basic_ipv4.stf): forwarded to port 1 by a route for it
FRAME = bytes.fromhex("000000000a0a000000000b0b080045000018123440004011139c0a0000010a000105deadbeef")
RUNTIME_TYPES = (Table, ActionProfile, Register, Counter, DirectCounter, Meter, MeterCell, ValueSet,
                 SwitchState, XorShift64, CustomCrc)
#: basic_ipv4 pickles to ~0.17 MB (declarations, parse trees, IR, P4Info)
SMALL = 400_000


class _Finder(pickle.Pickler):
    """A pickler that records every run-time object it meets on the way."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), protocol=pickle.HIGHEST_PROTOCOL)
        self.found: list[str] = []

    def persistent_id(self, obj):  # noqa: ANN001 - pickle's hook
        if isinstance(obj, RUNTIME_TYPES):
            self.found.append(type(obj).__name__)
        return None


def _runtime_objects(obj) -> list[str]:
    f = _Finder()
    f.dump(obj)
    return f.found


def test_finder_sees_runtime_objects():
    """Guards the test below: the walk does reach objects nested in the program."""
    sw = Switch.load(BASIC)
    assert "Table" in _runtime_objects(sw.inst)


VALUE_SETS = program("hdr.d.w1 = meta.m0;", parser="""
    value_set<bit<16>>(4) types;
    state start { pkt.extract(hdr.eth);
                  transition select(hdr.eth.etype) { types: parse_d; default: accept; } }
    state parse_d { pkt.extract(hdr.d); transition accept; }
    """)
#: every kind of run-time object: tables, selectors, meters, direct meters, registers, counters,
#: value sets
SOURCES = [BASIC, PROGRAMS / "action_selector.p4", ROOT / "tests/softswitch/runtime/programs/meters.p4",
           PROGRAMS / "extern_arguments.p4", VALUE_SETS]


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.stem if isinstance(s, Path) else "value_sets")
def test_compiled_program_holds_no_runtime_state(source):
    compiled = softswitch.compile(source)
    assert isinstance(compiled, CompiledProgram)
    assert _runtime_objects(compiled) == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        compiled.source = ""  # type: ignore[misc]
    sw = Switch(compiled)  # the switch makes them
    prog = compiled.program
    assert set(sw.inst.tables) == set(prog.tables)
    assert set(sw.inst.externs) | set(prog.profiles) >= set(prog.extern_insts)
    assert set(sw.inst.value_sets) == set(prog.value_sets)
    assert set(sw.inst.profiles) == set(prog.profiles)


def test_pickles_small_and_round_trips():
    compiled = softswitch.compile(BASIC)
    data = pickle.dumps(compiled, protocol=pickle.HIGHEST_PROTOCOL)
    assert len(data) < SMALL, f"{len(data)} bytes"
    back = pickle.loads(data)
    assert back.p4info == compiled.p4info and back.warnings == compiled.warnings
    assert back.source == compiled.source
    one, two = Switch(compiled), Switch(back)
    assert one.code.source == two.code.source
    for sw in (one, two):
        sw.table_add("MyIngress.ipv4_lpm", "MyIngress.ipv4_forward",
                     {"hdr.ipv4.dstAddr": Lpm(0x0A000105, 32)}, {"dstAddr": 2, "port": 3})
    assert one.process(0, FRAME) == two.process(0, FRAME) != []


def test_switches_of_one_program_share_no_state():
    compiled = softswitch.compile(BASIC)
    one, two = Switch(compiled), Switch(compiled)
    one.table_add("MyIngress.ipv4_lpm", "MyIngress.ipv4_forward",
                  {"hdr.ipv4.dstAddr": Lpm(0x0A000105, 32)}, {"dstAddr": 2, "port": 3})
    assert len(one.table_entries("MyIngress.ipv4_lpm")) == 1
    assert two.table_entries("MyIngress.ipv4_lpm") == []
    assert one.process(0, FRAME) != [] and two.process(0, FRAME) == []
    assert one.inst.state is not two.inst.state
    one.p4info.tables[0].preamble.name = "changed"
    assert compiled.p4info.tables[0].preamble.name == "MyIngress.ipv4_lpm"


def test_registers_start_fresh_per_switch():
    compiled = softswitch.compile(PROGRAMS / "extern_arguments.p4")
    regs = [n for n, i in compiled.program.extern_insts.items() if i.extern == "register"]
    assert regs
    one, two = Switch(compiled), Switch(compiled)
    one.register_write(regs[0], 0, 7)
    assert one.register_read(regs[0], 0) == 7 and two.register_read(regs[0], 0) == 0


def test_compile_error_is_raised_by_compile():
    with pytest.raises(P4CompileError) as ei:
        softswitch.compile("#include <core.p4>\n#include <v1model.p4>\nconst bit<8> X = 1 +;\n",
                           filename="bad.p4")
    assert ei.value.file == "bad.p4" and ei.value.line == 3


def test_p4info_and_device_config_need_no_switch(monkeypatch):
    """``server.pipeline_config`` and the controller's softswitch build call ``compile`` only."""
    from controller.pipeline import SoftswitchBuild, _softswitch_build
    from softswitch.server import pipeline_config

    def no_switch(*_a, **_k):
        raise AssertionError("a Switch was built to get P4Info")

    monkeypatch.setattr(Switch, "__init__", no_switch)
    cfg = pipeline_config(str(BASIC))
    assert cfg.p4info == softswitch.compile(BASIC).p4info
    assert cfg.p4_device_config.decode() == softswitch.compile(BASIC).source
    _softswitch_build.cache_clear()
    built = SoftswitchBuild(DHC).config(8, 64, 2)
    assert any(t.preamble.name.endswith("lane_0_update") for t in built.p4info.tables)

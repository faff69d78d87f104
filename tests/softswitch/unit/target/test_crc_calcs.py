"""One custom CRC configuration per calculation, named as p4c's BMv2 back end names them
(``calc``, ``calc_0``...: parser, then each pipeline control's table actions and apply body, then
compute-checksum, then verify-checksum), on both backends."""

from __future__ import annotations

import pytest

from softswitch.api import Exact, RuntimeAPIError
from softswitch.cli import parse_args
from softswitch.native.build import compiler
from softswitch.target.crc import CrcParams, CustomCrc

from ..helpers import frame, switch, words

BACKENDS = ["python", pytest.param("native", marks=pytest.mark.skipif(compiler() is None, reason="no cc"))]
FL = "{hdr.d.w0, hdr.d.w1, hdr.d.w2[31:24]}"
M = "64w0x100000000"

# egress is declared after ingress: ingress's calculations first
KW = dict(
    ilocals=f"""
    action h_in_action() {{ hash(hdr.d.w3, HashAlgorithm.crc16_custom, 32w0, {FL}, {M}); }}
    table t {{ key = {{ hdr.d.w7 : exact; }} actions = {{ h_in_action; NoAction; }}
               default_action = NoAction(); }}
""",
    egress=f"""
        hash(hdr.d.w6, HashAlgorithm.crc32_custom, 32w0, {FL}, {M});
""",
    compute="update_checksum(hdr.d.isValid(), {hdr.d.w0, hdr.d.w1, hdr.d.w2[31:24]}, hdr.d.w7, "
            "HashAlgorithm.crc16_custom);",
)
INGRESS = f"""
        t.apply();
        hash(hdr.d.w4, HashAlgorithm.crc32, 32w0, {FL}, {M});
        hash(hdr.d.w5, HashAlgorithm.crc16_custom, 32w0, {FL}, {M});
"""
KERMIT = CrcParams(16, 0x1021, 0, 0, True, True)          # "123456789" -> 0x2189
MAXIM = CrcParams(16, 0x8005, 0, 0xFFFF, True, True)      # -> 0x44C2
CRC32C = CrcParams(32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True)  # -> 0xE3069283


def _run(sw, data: bytes = b"123456789") -> list[int]:
    w = [int.from_bytes(data[0:4], "big"), int.from_bytes(data[4:8], "big"), data[8] << 24]
    out = sw.process(0, frame(*w, 0, 0, 0, 0, 9))
    return words(out[0][1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_calculation_has_its_own_parameters(backend: str):
    sw = switch(INGRESS, backend=backend, **KW)
    # calc: the action's hash; calc_0 (crc32, fixed) and calc_1: ingress apply body; calc_2:
    # egress; calc_3: compute checksum.  Only the custom ones are configurable.
    assert sw.crc_calculations() == {"calc": 16, "calc_1": 16, "calc_2": 32, "calc_3": 16}
    sw.table_add("I.t", "I.h_in_action", {"hdr.d.w7": Exact(9)})
    ws = _run(sw)
    assert ws[3:8] == [0xBB3D, 0xCBF43926, 0xBB3D, 0xCBF43926, 0xBB3D]   # defaults: ARC / CRC-32
    assert sw.crc_set_parameters(KERMIT, "calc") == ["calc"]
    assert sw.crc_set_parameters(MAXIM, "calc_3") == ["calc_3"]
    assert sw.crc_set_parameters(CRC32C, "calc_2") == ["calc_2"]
    assert _run(sw)[3:8] == [0x2189, 0xCBF43926, 0xBB3D, 0xE3069283, 0x44C2]
    assert sw.crc_get_parameters("calc_1") == CrcParams(16, 0x8005, 0, 0, True, True)
    # no name: every crc16_custom calculation, as the CLI flag without CALC
    assert sw.crc_set_parameters(KERMIT) == ["calc", "calc_1", "calc_3"]
    assert _run(sw)[3:8] == [0x2189, 0xCBF43926, 0x2189, 0xE3069283, 0x2189]
    ref = CustomCrc(16)
    ref.configure(KERMIT)
    assert ref(b"123456789") == 0x2189


@pytest.mark.parametrize("backend", BACKENDS)
def test_refusals(backend: str):
    sw = switch(INGRESS, backend=backend, **KW)
    with pytest.raises(RuntimeAPIError, match="no custom CRC calculation 'calc_0'"):
        sw.crc_set_parameters(KERMIT, "calc_0")            # crc32: not a custom calculation
    with pytest.raises(RuntimeAPIError, match="calc_2 is crc32_custom"):
        sw.crc_set_parameters(KERMIT, "calc_2")
    with pytest.raises(RuntimeAPIError, match="no custom CRC calculation 'nope'"):
        sw.crc_get_parameters("nope")


def test_names_skip_the_programs_own_identifiers():
    """p4c's name generator does not reuse a name the program declares: ``calc`` taken, the
    first calculation is ``calc_0``."""
    sw = switch(f"bit<32> calc = 1; hash(hdr.d.w3, HashAlgorithm.crc16_custom, calc, {FL}, {M});")
    assert sw.crc_calculations() == {"calc_0": 16}


def test_cli_names_a_calculation():
    args, _t = parse_args(["--no-p4", "--crc16-parameters", "calc_1", "0x1021", "0", "0", "1", "1",
                           "--crc16-parameters", "0x8005", "0", "0xffff", "1", "1"])
    assert args.crc_params == [("calc_1", KERMIT), (None, MAXIM)]


FN = f"""
bit<32> crc_of(in bit<32> a, in bit<32> b, in bit<32> c) {{
    bit<32> r;
    hash(r, HashAlgorithm.crc16_custom, 32w0, {{a, b, c[31:24]}}, {M});
    return r;
}}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_function_and_direct_action_calls_get_a_calculation_each(backend: str):
    """p4c inlines each call of a function or a directly called action: every call is its own
    calculation (the second call runs a copy here)."""
    ilocals = f"""
    action direct() {{ hash(hdr.d.w5, HashAlgorithm.crc16_custom, 32w0, {FL}, {M}); }}
"""
    ingress = """
        hdr.d.w3 = crc_of(hdr.d.w0, hdr.d.w1, hdr.d.w2);
        hdr.d.w4 = crc_of(hdr.d.w0, hdr.d.w1, hdr.d.w2);
        direct();
        hdr.d.w6 = hdr.d.w5;
        direct();
"""
    sw = switch(ingress, backend=backend, decls=FN, ilocals=ilocals)
    assert sw.crc_calculations() == {"calc": 16, "calc_0": 16, "calc_1": 16, "calc_2": 16}
    assert _run(sw)[3:7] == [0xBB3D] * 4
    sw.crc_set_parameters(KERMIT, "calc_0")      # the second crc_of call
    sw.crc_set_parameters(MAXIM, "calc_1")       # the first direct() call
    assert _run(sw)[3:7] == [0xBB3D, 0x2189, 0xBB3D, 0x44C2]


SITES = f"""
control H(inout bit<32> crc, out bit<32> count, in bit<32> a, in bit<32> b, in bit<32> c) {{
    bit<32> n;
    apply {{
        n = n + 1;
        count = n;
        hash(crc, HashAlgorithm.crc16_custom, 32w0, {{a, b, c[31:24]}}, {M});
    }}
}}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_control_instance_applied_at_two_sites_gets_a_calculation_per_site(backend: str):
    """p4c inlines an instance's apply body at each site: one calculation per site (the second
    site runs a copy of the body here), while the instance's variables stay one per instance."""
    ingress = """
        h.apply(hdr.d.w3, hdr.d.w5, hdr.d.w0, hdr.d.w1, hdr.d.w2);
        h.apply(hdr.d.w4, hdr.d.w6, hdr.d.w0, hdr.d.w1, hdr.d.w2);
"""
    sw = switch(ingress, backend=backend, decls=SITES, ilocals="    H() h;")
    assert sw.crc_calculations() == {"calc": 16, "calc_0": 16}
    assert _run(sw)[3:7] == [0xBB3D, 0xBB3D, 1, 2]
    sw.crc_set_parameters(KERMIT, "calc_0")      # the second site only
    assert _run(sw)[3:7] == [0xBB3D, 0x2189, 1, 2]
    sw.crc_set_parameters(MAXIM, "calc")
    assert _run(sw)[3:7] == [0x44C2, 0x2189, 1, 2]

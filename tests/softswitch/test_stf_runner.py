"""The STF runner itself: parsing, key conversion, packet comparison, CLI exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from softswitch.api import Exact, Lpm, Optional, Range, Ternary
from softswitch.stf.names import FieldInfo, match_value
from softswitch.stf.runner import compare_packet
from softswitch.stf.syntax import (
    ActionCall,
    AddEntry,
    AddIndirect,
    CheckCounter,
    Checkpoint,
    ExpectPacket,
    KeyValue,
    McNodeCreate,
    ProfileGroup,
    ProfileMember,
    RegisterRead,
    SendPacket,
    StfSyntaxError,
    p4c_dialect_problems,
    parse_stf,
)

PROGRAMS = Path(__file__).parent / "programs"


def test_parse_add_with_priority_keys_and_handle():
    f = parse_stf("add acl 10 hdr.ipv4.srcAddr:0x0a000000&&&0xff000000 proto:0x11 "
                  "MyIngress.deny(code: 0x3, port:2) = H1\n")
    (cmd,) = f.commands
    assert isinstance(cmd, AddEntry)
    assert cmd.table == "acl" and cmd.priority == 10
    assert [(k.name, k.text) for k in cmd.keys] == [("hdr.ipv4.srcAddr", "0x0a000000&&&0xff000000"),
                                                    ("proto", "0x11")]
    assert cmd.action.name == "MyIngress.deny" and cmd.action.args == (("code", 3), ("port", 2))


def test_parse_add_without_priority_and_no_args():
    (cmd,) = parse_stf("add fwd dst:10.0.0.0/8 drop()").commands
    assert cmd.priority is None and cmd.action.args == () and cmd.keys[0].text == "10.0.0.0/8"


def test_parse_packets_expects_comments_and_headers():
    text = """# defines: DHC_LANES=4 DEBUG
# cpu_port: 64
# a comment line

packet 0 0102 0304  # trailing comment
expect 1 01** 0304 $
expect 2
no_packet
wait
"""
    f = parse_stf(text, "t.stf")
    assert f.defines == {"DHC_LANES": "4", "DEBUG": "1"} and f.cpu_port == 64
    send, exp, anyexp, nop, wait = f.commands
    assert send == SendPacket(5, 0, bytes.fromhex("01020304"))
    assert exp == ExpectPacket(6, 1, "01**0304", True)
    assert anyexp.pattern is None and anyexp.port == 2
    assert nop == Checkpoint(8, "no_packet") and wait == Checkpoint(9, "wait")


def test_parse_pre_and_extern_commands():
    f = parse_stf("mc_mgrp_create 1\nmc_node_create 7 1 2 3\nmc_node_associate 1 0\n"
                  "mirroring_add 5 4\nregister_write r 3 0x10\n#!softswitch register_read MyIngress.r 3 16\n"
                  "check_counter c(2) bytes >= 100\ncheck_counter c(1)\nregister_read r 4\n")
    kinds = [type(c).__name__ for c in f.commands]
    assert kinds == ["McGroup", "McNodeCreate", "McNodeAssociate", "MirroringAdd", "RegisterWrite",
                     "RegisterRead", "CheckCounter", "CheckCounter", "RegisterRead"]
    assert f.commands[1] == McNodeCreate(2, 7, (1, 2, 3))
    assert f.commands[5] == RegisterRead(6, "MyIngress.r", 3, 16)
    assert f.commands[6] == CheckCounter(7, "c", 2, "bytes", ">=", 100)
    assert f.commands[7] == CheckCounter(8, "c", 1, "packets", "==", 0)
    assert f.commands[8] == RegisterRead(9, "r", 4, None)  # p4c's form: a read, no check


def test_register_check_is_a_softswitch_extension():
    """p4c's runner reads 'register_read NAME INDEX'; a check with a value must say it is ours."""
    with pytest.raises(StfSyntaxError, match="#!softswitch register_read r 3 16"):
        parse_stf("register_read r 3 16\n")
    assert p4c_dialect_problems("#!softswitch register_read r 3 16\nregister_read r 3\n") == []
    probs = p4c_dialect_problems("add t k:10.0.0.0/8 a()\nadd t k:0x0a&&&0xff a()\nregister_read r 3 16\n")
    assert [p.split(":")[0] for p in probs] == ["1", "2", "3"]


def test_action_profile_commands_are_a_softswitch_extension():
    text = """#!softswitch act_prof_create_member ap 3 set(port:1, v:0x2)
#!softswitch act_prof_delete_member ap 3
#!softswitch act_prof_create_group ap 7 3 4
#!softswitch act_prof_remove_member_from_group ap 4 7
#!softswitch add t 5 k:0x0* group(7)
#!softswitch add t k:1 member(3)
"""
    assert parse_stf(text).commands == [
        ProfileMember(1, "create", "ap", 3, ActionCall("set", (("port", 1), ("v", 2)))),
        ProfileMember(2, "delete", "ap", 3),
        ProfileGroup(3, "create", "ap", 7, (3, 4)),
        ProfileGroup(4, "remove", "ap", 7, (4,)),
        AddIndirect(5, "t", (KeyValue("k", "0x0*"),), None, 7, 5),
        AddIndirect(6, "t", (KeyValue("k", "1"),), 3, None, None),
    ]
    assert p4c_dialect_problems(text) == []   # comments to p4c's runner
    for line in ("act_prof_create_group ap 7", "add t k:1 member(3)"):
        with pytest.raises(StfSyntaxError, match="softswitch extension"):
            parse_stf(line + "\n")


@pytest.mark.parametrize("line, reason", [
    ("packet 0 01zz", "bad character"),
    ("packet x 01", "port 'x' is not a number"),
    ("expect 1 $", "needs packet data"),
    ("add t k:1 act(p 1)", "not name:value"),
    ("add t k:1 act(p:zz)", "not a number"),
    ("add t k1 act()", "not field:value"),
    ("frobnicate 1", "unknown STF command"),
    ("mirroring_add 1", "takes 2 argument"),
    ("wait now", "takes no arguments"),
    ("# defines: 9X=1", "bad define"),
])
def test_syntax_errors_name_line_and_problem(line, reason):
    with pytest.raises(StfSyntaxError) as ei:
        parse_stf("\n" + line + "\n", "bad.stf")
    assert str(ei.value).startswith("bad.stf:2: ") and reason in str(ei.value)


def _f(kind: str, width: int = 16) -> FieldInfo:
    return FieldInfo("hdr.x.f", width, kind)


@pytest.mark.parametrize("kind, text, want", [
    ("exact", "0x0a0b", Exact(0x0A0B)),
    ("exact", "10", Exact(10)),
    ("ternary", "0x0a&&&0xf0", None),  # value outside mask -> error, see below
    ("ternary", "0x0a00&&&0xff00", Ternary(0x0A00, 0xFF00)),
    ("ternary", "0x0a**", Ternary(0x0A00, 0xFF00)),
    ("ternary", "0x0a", Ternary(0x0A, 0xFF)),   # p4c: mask covers the digits written
    ("ternary", "0b1*", Ternary(0b10, 0b10)),
    ("ternary", "5", Ternary(5, 0xFFFF)),
    ("ternary", "*", None),
    ("ternary", "0x****", None),
    ("lpm", "0x0a00/8", Lpm(0x0A00, 8)),
    ("lpm", "0x0a**", Lpm(0x0A00, 8)),
    ("lpm", "0/0", None),
    ("range", "10->20", Range(10, 20)),
    ("range", "10..20", Range(10, 20)),
    ("range", "7", Range(7, 7)),
    ("range", "0->0xffff", None),
    ("optional", "3", Optional(3)),
    ("optional", "*", None),
])
def test_match_value(kind, text, want):
    if text == "0x0a&&&0xf0":
        with pytest.raises(ValueError, match="outside mask"):
            match_value(_f(kind), text)
        return
    assert match_value(_f(kind), text) == want


def test_match_value_ipv4_and_widths():
    assert match_value(_f("lpm", 32), "10.1.0.0/16") == Lpm(0x0A010000, 16)
    assert match_value(_f("exact", 32), "10.0.0.1") == Exact(0x0A000001)
    with pytest.raises(ValueError, match="does not fit in 8 bits"):
        match_value(_f("exact", 8), "0x100")
    with pytest.raises(ValueError, match="beyond the /8 prefix"):
        match_value(_f("lpm", 32), "10.1.0.0/8")
    with pytest.raises(ValueError, match="low > high"):
        match_value(_f("range"), "9->3")


def test_compare_packet_wildcards_prefix_and_exact_length():
    exp = ExpectPacket(1, 1, "01**03", False)
    assert compare_packet(exp, bytes.fromhex("01ff03")) is None
    assert compare_packet(exp, bytes.fromhex("01ff0399")) is None  # longer is fine without $
    exact = ExpectPacket(1, 1, "01**03", True)
    assert "exactly 3" in compare_packet(exact, bytes.fromhex("01ff0399"))
    diff = compare_packet(exp, bytes.fromhex("01ff04"))
    assert "differs from byte 2 (nibble 5)" in diff and "^" in diff
    assert "too short" in compare_packet(exp, bytes.fromhex("01ff"))


def test_cli_reports_missing_file_with_exit_2(tmp_path, capsys):
    from softswitch.stf.runner import main

    stf = tmp_path / "t.stf"
    stf.write_text("packet 0 00\n")
    assert main([str(tmp_path / "nope.p4"), str(stf)]) == 2
    assert "nope.p4" in capsys.readouterr().err


def test_cli_bad_stf_exit_2(tmp_path, capsys):
    from softswitch.stf.runner import main

    stf = tmp_path / "t.stf"
    stf.write_text("packet 0 0g\n")
    assert main([str(PROGRAMS / "basic_ipv4.p4"), str(stf)]) == 2
    assert "t.stf:1: bad character(s) 'g' in packet data" in capsys.readouterr().err


def test_odd_digit_counts_read_as_p4c_runner():
    """p4c's runner turns a lone last digit into a byte of its own and compares expected
    packets nibble by nibble, so ``... 20 0`` (an odd count) is valid STF."""
    cmds = parse_stf("packet 0 0120 5\nexpect 0 0120 0\n").commands
    assert cmds[0].data == bytes([0x01, 0x20, 0x05])
    assert cmds[1].pattern == "01200"
    assert compare_packet(cmds[1], bytes([0x01, 0x20, 0x05])) is None
    assert compare_packet(cmds[1], bytes([0x01, 0x20, 0x15])) is not None


# ---------------------------------------------------------------- against the real target

ROUTE = "add ipv4_lpm hdr.ipv4.dstAddr:10.0.0.0/8 ipv4_forward(dstAddr:0x000000000202, port:2)\n"


def _basic_lines() -> tuple[str, str]:
    """The first packet/expect pair of basic_ipv4.stf (a frame routed to port 2 via 10/8)."""
    lines = (PROGRAMS / "basic_ipv4.stf").read_text().splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("# to 10.9.9.9"))
    return lines[i + 1], lines[i + 2]


def _run(tmp_path, text: str):
    from softswitch.stf.runner import run_stf

    stf = tmp_path / "t.stf"
    stf.write_text(text)
    return run_stf(str(PROGRAMS / "basic_ipv4.p4"), str(stf), all_ports=True)


def test_passing_file(tmp_path):
    pkt, exp = _basic_lines()
    res = _run(tmp_path, ROUTE + pkt + "\n" + exp + "\n")
    assert res.passed, res.report()
    assert (res.packets_sent, res.packets_received, res.packets_expected) == (1, 1, 1)


def test_wrong_byte_is_a_failure_with_a_diff(tmp_path):
    pkt, exp = _basic_lines()
    words = exp.split()
    data = words[2]
    bad = data[:44] + ("0" if data[44] != "0" else "1") + data[45:]  # nibble 44 = TTL's high nibble
    res = _run(tmp_path, ROUTE + pkt + f"\nexpect 2 {bad} $\n")
    assert not res.passed
    (msg,) = res.failures
    assert msg.startswith("line 3: packet on port 2 (sent at line 2)") and "differs from byte 22" in msg
    assert "expected:" in msg and "received:" in msg and "^" in msg


def test_wildcards_accept_any_nibble(tmp_path):
    pkt, exp = _basic_lines()
    data = exp.split()[2]
    wild = data[:24] + "****" + data[28:]
    assert _run(tmp_path, ROUTE + pkt + f"\nexpect 2 {wild} $\n").passed


def test_odd_hex_digit_count_as_p4c_runner(tmp_path):
    """p4c's runner sends a last odd digit as a byte of its own and matches expect by digit."""
    assert parse_stf("packet 0 0102 3\n").commands[0].data == bytes([1, 2, 3])
    pkt, exp = _basic_lines()
    data = exp.split()[2]
    odd = pkt.split()[2] + "0"    # one more byte, 0x00, sent; the frame's padding ignores it
    assert _run(tmp_path, ROUTE + f"packet 0 {odd}\nexpect 2 {data[:31]}\n").passed
    res = _run(tmp_path, ROUTE + f"packet 0 {odd}\nexpect 2 {data[:30]}{'0' if data[30] != '0' else '1'}\n")
    assert not res.passed and "nibble 30" in res.failures[0]


def test_missing_and_extra_packets_fail(tmp_path):
    pkt, exp = _basic_lines()
    data = exp.split()[2]
    res = _run(tmp_path, ROUTE + pkt + f"\nexpect 3 {data}\n")
    assert not res.passed
    text = "\n".join(res.failures)
    assert "expected packet on port 3 never came" in text
    assert "unexpected packet on port 2" in text


def test_no_packet_checkpoint_catches_output(tmp_path):
    pkt, _ = _basic_lines()
    res = _run(tmp_path, ROUTE + pkt + "\nno_packet\n")
    assert not res.passed and "unexpected packet on port 2 (at no_packet (line 3))" in res.failures[0]


def test_expect_port_without_data_accepts_anything(tmp_path):
    pkt, _ = _basic_lines()
    assert _run(tmp_path, ROUTE + pkt + "\n" + pkt + "\nexpect 2\n").passed


def test_bad_names_and_values_are_reported_per_line(tmp_path):
    res = _run(tmp_path, "add no_such_table x:1 drop()\n"
                         "add ipv4_lpm dstAddr:10.0.0.0/8 no_such_action()\n"
                         "add ipv4_lpm dstAddr:10.0.0.0/8 ipv4_forward(dstAddr:1)\n"
                         "add ipv4_lpm dstAddr:10.0.0.0/8 ipv4_forward(dstAddr:1, port:0x200)\n"
                         "#!softswitch register_read nope 0 0\n")
    assert len(res.failures) == 5, res.report()
    f = res.failures
    assert f[0].startswith("line 1: no table 'no_such_table'")
    assert f[1].startswith("line 2: no action 'no_such_action' in table MyIngress.ipv4_lpm")
    assert "parameter(s) port not given" in f[2]
    assert "does not fit in 9 bits" in f[3]
    assert f[4].startswith("line 5: no register 'nope'")


def test_cli_exit_codes(tmp_path, capsys):
    from softswitch.stf.runner import main

    pkt, exp = _basic_lines()
    good, bad = tmp_path / "good.stf", tmp_path / "bad.stf"
    good.write_text(ROUTE + pkt + "\n" + exp + "\n")
    bad.write_text(ROUTE + pkt + "\n")
    prog = str(PROGRAMS / "basic_ipv4.p4")
    assert main([prog, str(good)]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main([prog, str(bad), "--all-ports"]) == 1
    assert "unexpected packet on port 2" in capsys.readouterr().err
    assert main([prog, str(bad)]) == 0, "port 2 is not named by the file: unobserved, as in p4c's runner"


def test_defines_header_and_override(tmp_path):
    from softswitch.stf.runner import run_stf

    prog, stf = str(PROGRAMS / "defines.p4"), str(PROGRAMS / "defines.stf")
    assert run_stf(prog, stf).passed
    overridden = run_stf(prog, stf, defines={"TAG_VALUE": "0x11"})
    assert not overridden.passed and "differs from byte 14" in overridden.failures[0]
    bare = tmp_path / "bare.stf"
    bare.write_text("packet 0 000000000001000000000002 88bc 0000\n"
                    "expect 1 000000000001000000000002 88bc 0100 $\n")
    assert run_stf(prog, str(bare)).passed, "without the header the program's defaults apply"


@pytest.mark.parametrize("backend", ["python", "native"])
def test_empty_packet_as_p4c_runner_sends_it(tmp_path, backend):
    """``packet 0`` with no bytes is an empty frame (p4c's runner accepts it): the parser fails on
    the first extract, ingress still runs (v1model), and nothing is sent for it here."""
    from softswitch.stf.runner import run_stf

    assert parse_stf("packet 0\n").commands[0].data == b""
    stf = tmp_path / "t.stf"
    stf.write_text(ROUTE + "packet 0\nno_packet\n")
    res = run_stf(str(PROGRAMS / "basic_ipv4.p4"), str(stf), backend=backend)
    assert res.passed, res.report()
    assert (res.packets_sent, res.packets_received) == (1, 0)


def test_output_to_ports_the_file_never_names_is_not_checked_as_p4c_runner(tmp_path):
    """p4c's BMv2 runner opens interfaces only for ports a packet/expect names: a frame routed
    elsewhere is lost there, not a failure; ``all_ports`` (the project's suites) checks it."""
    from softswitch.stf.runner import run_stf

    pkt, _ = _basic_lines()  # routed to port 2, which this file never names
    stf = tmp_path / "t.stf"
    stf.write_text(ROUTE + pkt + "\nno_packet\n")
    prog = str(PROGRAMS / "basic_ipv4.p4")
    lax = run_stf(prog, str(stf))
    assert lax.passed and (lax.packets_received, lax.packets_unobserved) == (0, 1), lax.report()
    assert "1 to unobserved ports" in lax.report()
    strict = run_stf(prog, str(stf), all_ports=True)
    assert not strict.passed and "unexpected packet on port 2" in strict.failures[0]


@pytest.mark.parametrize("backend", ["python", "native"])
def test_priority_zero_is_valid_and_lowest(tmp_path, backend):
    """p4c's runner accepts ``add t 0 ...`` (BMv2 priority 10000 - p): priority 0 is the lowest
    an entry can have, below 1, and on its own it matches."""
    from softswitch.stf.runner import run_stf

    lines = (PROGRAMS / "ternary_acl.stf").read_text().splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("# 11.0.0.1 -> 1.2.3.4 proto 17"))
    pkt = lines[i + 1]
    exp3 = lines[i + 2]
    exp1 = "expect 1 " + exp3.split()[2].replace("45030018", "45010018", 1) + " $"
    stf = tmp_path / "t.stf"
    stf.write_text("add acl 0 protocol:0x11&&&0xff allow(port:3, tag:3)\n"
                   f"{pkt}\n{exp3}\nwait\n"
                   "add acl 1 protocol:0x11&&&0xff allow(port:1, tag:1)\n"
                   f"{pkt}\n{exp1}\n")
    res = run_stf(str(PROGRAMS / "ternary_acl.p4"), str(stf), backend=backend, all_ports=True)
    assert res.passed, res.report()

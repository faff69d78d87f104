"""Pieces of the runtime that need no pipeline: byte codec, CLI parsing, port maps, stub generation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from softswitch.cli import parse_args
from softswitch.server.errors import P4RuntimeError
from softswitch.server.ids import decode_bytes, encode_bytes
from softswitch.target.ports import parse_port_map


def test_canonical_encoding():
    assert encode_bytes(0) == b"\x00"
    assert encode_bytes(255) == b"\xff"
    assert encode_bytes(256) == b"\x01\x00"
    assert encode_bytes(0x0A000001) == b"\x0a\x00\x00\x01"


def test_decode_accepts_leading_zeros_and_checks_width():
    assert decode_bytes(b"\x00\x00\x01\xff", 9, "x") == 511
    with pytest.raises(P4RuntimeError) as exc:
        decode_bytes(b"\x02\x00", 9, "port")
    assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT and "9 bits" in exc.value.message
    with pytest.raises(P4RuntimeError, match="empty"):
        decode_bytes(b"", 8, "x")


def test_port_map():
    assert parse_port_map(["1@veth1", "12@s1-eth2"]) == {1: "veth1", 12: "s1-eth2"}
    for bad, reason in [(["veth1"], "PORT@IFNAME"), (["x@veth1"], "PORT@IFNAME"),
                        (["1@a", "1@b"], "given twice"), (["1@a", "2@a"], "two ports"),
                        (["1@" + "v" * 16], "longer than 15")]:
        with pytest.raises(ValueError, match=reason):
            parse_port_map(bad)


def test_cli_mirrors_simple_switch_grpc():
    args, targs = parse_args(["--device-id", "3", "-i", "1@veth1", "-i", "2@veth2", "prog.p4",
                              "--log-level", "debug", "--pcap", "/tmp/p", "--",
                              "--grpc-server-addr", "0.0.0.0:50001", "--cpu-port", "255"])
    assert (args.device_id, args.interface, args.program, args.log_level, args.pcap) == \
        (3, ["1@veth1", "2@veth2"], "prog.p4", "debug", "/tmp/p")
    assert (targs.grpc_server_addr, targs.cpu_port) == ("0.0.0.0:50001", 255)
    args, targs = parse_args(["--no-p4"])
    assert args.no_p4 and targs.cpu_port == 0 and targs.grpc_server_addr == "0.0.0.0:9559"


@pytest.mark.parametrize("argv", [
    ["--no-p4", "--bogus"],                      # unknown main flag
    ["--no-p4", "--", "--cpu-port", "1", "--x"],  # unknown target flag
    ["--no-p4", "--", "--grpc-server-addr"],     # missing value
    ["prog.p4", "--no-p4"],                      # both
    [],                                          # neither
    ["--no-p4", "--", "--cpu-port", "-1"],
])
def test_cli_rejects_bad_command_lines(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(argv)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_stf_subcommand_dispatches_to_the_stf_runner():
    out = subprocess.run([sys.executable, "-m", "softswitch.cli", "stf", "--help"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "stf" in out.stdout.lower()


def test_gen_stubs_is_idempotent_and_importable(tmp_path):
    """Regenerating from the installed (already regenerated) modules gives importable stubs."""
    script = Path(__file__).resolve().parents[3] / "scripts" / "gen_p4runtime_stubs.py"
    out = subprocess.run([sys.executable, str(script), "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    names = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*_pb2*.py"))
    assert names == ["p4/config/v1/p4info_pb2.py", "p4/config/v1/p4info_pb2_grpc.py",
                     "p4/config/v1/p4types_pb2.py", "p4/config/v1/p4types_pb2_grpc.py",
                     "p4/v1/p4data_pb2.py", "p4/v1/p4data_pb2_grpc.py",
                     "p4/v1/p4runtime_pb2.py", "p4/v1/p4runtime_pb2_grpc.py"]
    check = subprocess.run(
        [sys.executable, "-c",
         "import p4.v1.p4runtime_pb2 as p, p4.v1.p4runtime_pb2_grpc as g; "
         f"assert p.__file__.startswith({str(tmp_path)!r}); "
         "print(p.WriteRequest.DESCRIPTOR.full_name, g.P4RuntimeStub)"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert check.returncode == 0, check.stderr
    assert "p4.v1.WriteRequest" in check.stdout

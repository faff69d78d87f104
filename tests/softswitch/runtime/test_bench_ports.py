"""``dhc-bench softswitch-ports``: both rows (basic_ipv4 and dhc.p4) over real veths, every RESULT
correct, and nothing left behind (namespaces, veths, switch processes), also when a run fails."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import pytest

from bench.cli import main
from bench.softswitch import ports_dhc, softswitch_ports

pytestmark = [pytest.mark.root, pytest.mark.slow]

if os.geteuid() != 0:
    pytest.skip("needs root for network namespaces", allow_module_level=True)

SMALL = ["--frames", "300", "--runs", "1", "--chunks", "150", "--lanes", "8", "--dhc-window", "16"]


def _leftovers(tag: str) -> list[str]:
    """Namespaces, links and processes of a bench lab with this tag that still exist."""
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    out = [line for line in (netns + links).splitlines() if f"{tag}n" in line or f"{tag}s" in line]
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a.startswith(f"1@{tag}s".encode()) for a in args):
            out.append(f"process {cmdline.parent.name}: {b' '.join(args).decode(errors='replace')}")
    return out


def test_both_rows_and_every_result_correct(capsys) -> None:
    assert main(["softswitch-ports", "--json", *SMALL]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["program"] == "basic_ipv4.p4" and result["lost"] == 0
    assert result["ports_frames_per_s"] > 0 and result["in_process_frames_per_s"] > 0
    dhc = result["dhc"]
    assert {
        "data_frames_per_s",
        "result_frames_per_s",
        "in_process_data_frames_per_s",
        "ports_over_in_process",
        "switch_cpu_share",
        "data_runs",
        "result_runs",
        "in_process_runs",
    } <= set(dhc)
    assert (dhc["program"], dhc["lanes"], dhc["window_chunks"], dhc["chunks"]) == ("dhc.p4", 8, 16, 150)
    assert dhc["deploy_writes"] > 0  # the controller's deploy programmed the switch
    assert dhc["data_frame_bytes"] == 14 + 20 + 8 + 14 + 4 * 8
    assert dhc["results_expected"] == 2 * 150
    assert dhc["results_received"] == dhc["results_correct"] == dhc["results_expected"]
    assert dhc["results_wrong"] == 0 and dhc["in_process_results_wrong"] == 0 and dhc["first_error"] is None
    assert dhc["data_frames_per_s"] > 0 and dhc["result_frames_per_s"] > 0
    assert dhc["in_process_data_frames_per_s"] > 0
    assert dhc["ports_over_in_process"] == pytest.approx(
        dhc["data_runs"][0] / dhc["in_process_runs"][0], rel=1e-2)
    assert _leftovers(f"b{os.getpid() % 100000}") == []


def test_failure_mid_measurement_leaves_nothing_behind(monkeypatch) -> None:
    """A failure while the dhc switch runs (injected into the traffic loop) still removes
    the namespaces and veths and stops the switch process."""
    def broken(*_args):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(ports_dhc, "_aggregate", broken)
    parser = argparse.ArgumentParser()
    softswitch_ports.add_arguments(parser)
    with pytest.raises(RuntimeError, match="injected failure"):
        softswitch_ports.run(parser.parse_args(SMALL))
    assert _leftovers(f"b{os.getpid() % 100000}") == []


class _Lossy:
    """A worker's raw socket that loses its 20th DATA frame on the way to the switch."""

    def __init__(self, sock):
        self.sock, self.sends = sock, 0

    def send(self, frame: bytes) -> int:
        self.sends += 1
        return len(frame) if self.sends == 20 else self.sock.send(frame)

    def __getattr__(self, name: str):
        return getattr(self.sock, name)


def test_lost_data_is_retransmitted_and_results_stay_correct(monkeypatch, capsys) -> None:
    real = ports_dhc._aggregate

    def lossy(socks, job, chunks):
        return real([_Lossy(socks[0]), socks[1]], job, chunks)

    monkeypatch.setattr(ports_dhc, "_aggregate", lossy)
    assert main(["softswitch-ports", "--json", *SMALL]) == 0
    dhc = json.loads(capsys.readouterr().out)["dhc"]
    assert dhc["retransmits"] >= 1
    assert dhc["results_received"] == dhc["results_correct"] == dhc["results_expected"]
    assert dhc["results_wrong"] == 0


def test_bad_arguments_are_named() -> None:
    parser = argparse.ArgumentParser()
    softswitch_ports.add_arguments(parser)
    with pytest.raises(ValueError, match="--chunks must be positive"):
        softswitch_ports.run(parser.parse_args(["--chunks", "0"]))
    with pytest.raises(ValueError, match="--dhc-window 4000"):
        softswitch_ports.run(parser.parse_args(["--dhc-window", "4000"]))

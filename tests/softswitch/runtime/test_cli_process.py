"""The ``softswitch`` process: starts with --no-p4, answers P4Runtime, idles quietly, stops on signals."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from bench.softswitch.ports_lab import cpu_seconds, free_port
from tests.softswitch.runtime.netns import REPO


def _start(*extra: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "softswitch.cli", "--no-p4", "--device-id", "7", *extra,
                             "--", "--grpc-server-addr", f"127.0.0.1:{port}", "--cpu-port", "64"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=REPO)
    return proc, f"127.0.0.1:{port}"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_no_p4_process_serves_idles_and_stops(sig):
    proc, addr = _start()
    try:
        channel = grpc.insecure_channel(addr)
        grpc.channel_ready_future(channel).result(timeout=30)
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        assert stub.Capabilities(p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version
        with pytest.raises(grpc.RpcError) as exc:  # no pipeline yet
            stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=7))
        assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        channel.close()
        before, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(1.5)
        share = (cpu_seconds(proc.pid) - before) / (time.monotonic() - t0)
        assert share < 0.02, f"idle softswitch used {share:.1%} CPU"
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_interface_is_a_clear_error():
    proc, _ = _start("-i", "1@nosuchif9")
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert b"nosuchif9" in out


def test_unknown_flag_is_an_error():
    proc = subprocess.run([sys.executable, "-m", "softswitch.cli", "--no-p4", "--frobnicate"],
                          capture_output=True, text=True, timeout=30, cwd=REPO)
    assert proc.returncode == 2 and "--frobnicate" in proc.stderr

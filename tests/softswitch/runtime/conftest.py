"""Fixtures: an in-process P4Runtime server around a real Device, and compiled test programs."""

from __future__ import annotations

from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"
CPU_PORT = 255


def compile_config(path: Path, defines: dict[str, str] | None = None):
    """(P4Info, device config bytes) of a program, as a controller would send them."""
    from softswitch.server import pipeline_config

    cfg = pipeline_config(str(path), defines, cpu_port=CPU_PORT)
    return cfg.p4info, cfg.p4_device_config


@pytest.fixture(scope="session")
def fwd_cpu():
    return compile_config(PROGRAMS / "fwd_cpu.p4")


@pytest.fixture(scope="session")
def kinds():
    return compile_config(PROGRAMS / "kinds.p4")


@pytest.fixture
def server():
    """A started server with no program; frames the pipeline emits land in ``device.sent``."""
    from softswitch.server import Device, serve

    device = Device(device_id=0, cpu_port=CPU_PORT)
    device.sent = []
    device.emit = lambda port, frame: device.sent.append((port, frame))
    srv, port = serve(device, "127.0.0.1:0")
    try:
        yield device, f"127.0.0.1:{port}"
    finally:
        srv.stop(grace=None).wait(5)

"""p4runtime-shell from PyPI, unchanged, against the softswitch P4Runtime server."""

from __future__ import annotations

import json
import subprocess
import sys

from google.protobuf import text_format

from tests.softswitch.runtime.conftest import CPU_PORT
from tests.softswitch.runtime.netns import REPO


def test_p4runtime_shell_end_to_end(server, fwd_cpu, tmp_path):
    device, addr = server
    p4info, config = fwd_cpu
    p4info_path, bin_path = tmp_path / "fwd_cpu.p4info.txtpb", tmp_path / "fwd_cpu.p4src"
    p4info_path.write_text(text_format.MessageToString(p4info))
    bin_path.write_bytes(config)
    proc = subprocess.run([sys.executable, "-m", "tests.softswitch.runtime.shell_session", addr,
                           str(p4info_path), str(bin_path)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["entries"] == [{"value": "0a000002", "plen": 32, "port": "02", "dmac": "020000000002"}]
    assert out["acl_priorities"] == [5]
    assert out["groups"] == [[[1, 1], [2, 1]]]
    assert out["clone_sessions"] == [[CPU_PORT]]
    frame = bytes.fromhex("ffffffffffff02000000000188b5") + b"shell-loop"
    assert out["packet_in"] == [{"payload": frame.hex(), "meta": {"1": "ff", "2": "00"}}]
    assert out["counter"] == [[2, 2 * (len(frame) + 2)]]  # both packet-outs entered on the CPU port
    assert out["after_delete"] == 0 and out["groups_after_delete"] == 0
    assert device.sent == [(2, frame)]

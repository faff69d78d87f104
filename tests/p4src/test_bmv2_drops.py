"""BMv2 drops what the softswitch drops (issue 30, items 2 and 6): the frames of port 1 in
``stf/spoofed_fragmented_trailing.stf`` (spoofed sources, "more fragments", trailing payload) run
through p4c's BMv2 build of dhc.p4 on ``simple_switch_grpc --use-files`` (pcap in, no interfaces),
entries written with the controller's P4Runtime client; the drop counters must equal the STF's
``check_counter`` lines, which the softswitch passes in test_stf."""

from __future__ import annotations

import re
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from controller.intent import entry
from controller.p4rt_client import PendingUpdate, SwitchAddress, SwitchConnection
from controller.status import _counter_cells
from dhcwire.p4names import C_DROP
from tests.p4src.dhcnet import PROGRAM, STF_DIR
from tests.p4src.toolchain import toolchain_env

STF = STF_DIR / "spoofed_fragmented_trailing.stf"
LINE = re.compile(r"(add|setdefault) (\w+) (.*?)\s*(\w+)\((.*)\)$")


def _script() -> tuple[list[tuple[str, dict, str, dict]], list[bytes], dict[int, int]]:
    """(table adds, port-1 frames before the first wait, expected drop counts)."""
    adds, frames, before_wait = [], [], True
    text = STF.read_text()
    for line in text.splitlines():
        before_wait &= not line.startswith("wait")
        m = LINE.match(line)
        if m and m.group(1) == "add" and m.group(2) != "ipv4_lpm":
            _, t, keys, a, params = m.groups()
            match = {k.split(":")[0]: int(k.split(":")[1], 0) for k in keys.split()}
            ps = {p.split(":")[0].strip(): int(p.split(":")[1], 0) for p in params.split(",") if p.strip()}
            adds.append((t, match, a, ps))
        elif before_wait and line.startswith("packet 1 "):
            frames.append(bytes.fromhex(line[len("packet 1 "):].replace(" ", "")))
    expected = {int(i): int(n) for i, n in re.findall(r"drop_counter\((\d+)\) packets == (\d+)", text)}
    return adds, frames, expected


def _pcap(path: Path, frames: list[bytes]) -> None:
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(frames):
            f.write(struct.pack("<IIII", 1, i, len(p), len(p)) + p)


def test_bmv2_drops_as_the_softswitch(tmp_path: Path) -> None:
    env = toolchain_env()
    if env is None:
        pytest.skip("no p4c/BMv2 toolchain (DHC_TOOLCHAIN, ../shared/toolchain or /work/shared/toolchain)")
    defines = re.search(r"# defines: (.*)", STF.read_text()).group(1).split()
    subprocess.run(["p4c", "--target", "bmv2", "--arch", "v1model", *[f"-D{d}" for d in defines], "-o",
                    str(tmp_path), "--p4runtime-files", str(tmp_path / "p4info.txtpb"), str(PROGRAM)],
                   env=env, check=True, capture_output=True, timeout=300)
    p4info = text_format.Parse((tmp_path / "p4info.txtpb").read_text(), p4info_pb2.P4Info())
    names = [o.preamble.name for o in (*p4info.tables, *p4info.actions)]
    full = {n.rsplit(".", 1)[-1]: n for n in names}
    adds, frames, expected = _script()
    _pcap(tmp_path / "p1_in.pcap", frames)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path / "bmv2.log", "w")   # noqa: SIM115 - closed below
    sw = subprocess.Popen(["simple_switch_grpc", "--use-files", "6", "-i", "1@p1", "--no-p4", "--thrift-port",
                           "0", "--", "--grpc-server-addr", f"127.0.0.1:{port}"], cwd=tmp_path, env=env,
                          stdout=log, stderr=subprocess.STDOUT)
    try:
        conn = SwitchConnection(SwitchAddress("bmv2", f"127.0.0.1:{port}"), timeout=15)
        conn.connect()
        conn.set_pipeline(p4info, (tmp_path / "dhc.json").read_bytes())
        ents = [entry(full[t], m, full[a], p) for t, m, a, p in adds]
        insert = p4runtime_pb2.Update.INSERT
        conn.write([PendingUpdate(insert, p4runtime_pb2.Entity(table_entry=conn.names.entry_to_proto(e)),
                                  e.describe()) for e in ents])
        deadline, got = time.monotonic() + 30, {}
        while time.monotonic() < deadline:
            got = {i: c[0] for i, c in _counter_cells(conn, C_DROP).items() if c[0]}
            if sum(got.values()) >= len(frames):
                break
            time.sleep(0.5)
        conn.close()
    finally:
        sw.terminate()
        sw.wait(10)
        log.close()
    assert got == {i: n for i, n in expected.items() if n}, got

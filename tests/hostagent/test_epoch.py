"""The agent side of the epoch protocol (docs/recovery.md): the manifest's epoch, ``--epoch``,
frames stamped with it, RESULTs of other epochs ignored and counted."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import numpy as np
import pytest

from dhcwire import header as wire
from dhcwire.frames import decode_datagram, encode_datagram
from hostagent.cli import main as agent_main
from hostagent.manifest import ManifestError, load_endpoint, set_epoch, write_manifest
from hostagent.transport import ChunkTransport, JobEndpoint, RetryPolicy

JOB = {"job_id": 7, "window": 4, "lanes": 4,
       "workers": {"h1": {"ip": "127.0.0.1", "child_id": 0, "switch_ip": "127.0.0.1"},
                   "h2": {"ip": "127.0.0.2", "child_id": 1, "switch_ip": "127.0.0.1"}}}


def _manifest(tmp_path: Path, **extra) -> Path:
    path = tmp_path / "jobs.json"
    write_manifest(path, [{**JOB, **extra}])
    return path


def test_manifest_epoch_default_override_and_rewrite(tmp_path: Path) -> None:
    path = _manifest(tmp_path)
    assert load_endpoint(path, "h1")[0].epoch == 0
    assert load_endpoint(path, "h1", epoch=9)[0].epoch == 9
    set_epoch(path, 7, 42)
    assert load_endpoint(path, "h1")[0].epoch == 42
    assert json.loads(path.read_text())["jobs"][0]["epoch"] == 42
    with pytest.raises(ManifestError, match="job 8 is not in the manifest"):
        set_epoch(path, 8, 1)


@pytest.mark.parametrize("bad", [256, -1, "3", True, 1.5])
def test_bad_epoch_in_manifest(tmp_path: Path, bad) -> None:
    with pytest.raises(ManifestError, match="epoch"):
        load_endpoint(_manifest(tmp_path, epoch=bad), "h1")


def test_cli_rejects_out_of_range_epoch(capsys) -> None:
    # a usage error from argparse, as for every option: exit 2, the option and value named
    with pytest.raises(SystemExit) as info:
        agent_main(["--job", "1", "--child", "0", "--switch", "127.0.0.1", "--workers", "2",
                    "--epoch", "300"])
    assert info.value.code == 2 and "--epoch: '300'" in capsys.readouterr().err


def test_frames_carry_the_epoch() -> None:
    frame = encode_datagram(wire.PacketType.DATA, 3, 7, 1, 5, 5, np.arange(4, dtype=np.uint32), epoch=200)
    assert decode_datagram(frame).epoch == 200
    assert wire.unpack_header(frame)["epoch"] == 200


class FakeSwitch(threading.Thread):
    """Answers each DATA first with a RESULT of another epoch, then with the right one."""

    def __init__(self, epoch: int):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.epoch, self.seen_epochs, self.stop = epoch, set(), threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                data, addr = self.sock.recvfrom(65535)
            except TimeoutError:
                continue
            dg = decode_datagram(data)
            self.seen_epochs.add(dg.epoch)
            for ep in ((self.epoch + 1) % 256, self.epoch):
                self.sock.sendto(encode_datagram(wire.PacketType.RESULT, dg.level, dg.job_id, 0, dg.chunk,
                                                 dg.slot, dg.lanes * 2, epoch=ep), addr)


def test_results_of_other_epochs_are_ignored_and_counted() -> None:
    sw = FakeSwitch(epoch=5)
    sw.start()
    ep = JobEndpoint(job_id=7, child_id=0, switch_ip="127.0.0.1", window=4, lanes=4, bind_ip="127.0.0.1",
                     switch_port=sw.sock.getsockname()[1], epoch=5)
    try:
        with ChunkTransport(ep, RetryPolicy(initial_timeout=0.5)) as t:
            lanes = np.arange(40, dtype=np.uint32).reshape(10, 4)
            out = t.exchange(np.full(10, int(wire.Level.DENSE)), lanes)
            assert np.array_equal(out, lanes * 2)
            assert t.stats.stale_epoch_ignored >= 10 and t.stats.retransmissions == 0
    finally:
        sw.stop.set()
        sw.join(2)
    assert sw.seen_epochs == {5}

"""Sessions that keep their epoch resume the chunk sequence (hostagent/chunk_state.py; the switch
drops an older chunk of a session as stale_chunk, p4src/README.md "Epochs")."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hostagent.agent import Agent
from hostagent.chunk_state import CHUNK_SPACE, ChunkStateError, position_for, state_dir
from hostagent.cli import main as agent_main
from hostagent.manifest import load_endpoint, write_manifest
from hostagent.transport import JobEndpoint

EP = JobEndpoint(job_id=7, child_id=1, switch_ip="127.0.0.1", window=4, lanes=4,
                 bind_ip="127.0.0.1", peers=(("h1", "127.0.0.2"),), epoch=3)


def test_no_file_starts_at_zero_and_a_saved_end_is_resumed(tmp_path: Path) -> None:
    pos = position_for(EP, tmp_path)
    assert pos.load() == 0
    pos.save(40)
    assert pos.load() == 40
    assert position_for(EP, tmp_path).load() == 40
    pos.save(CHUNK_SPACE + 8)                   # chunk numbers are 32-bit on the wire
    assert pos.load() == 8


def test_every_part_of_the_workers_place_is_in_the_key(tmp_path: Path) -> None:
    position_for(EP, tmp_path).save(40)
    for other in (replace(EP, epoch=4), replace(EP, job_id=8), replace(EP, child_id=0),
                  replace(EP, switch_ip="127.0.0.9"), replace(EP, window=8),
                  replace(EP, peers=(("h1", "127.0.0.2"), ("h3", "127.0.0.3")))):
        assert position_for(other, tmp_path).load() == 0, other


@pytest.mark.parametrize("content", [b"\xff\xfe", b"{}", b'{"next_chunk": -1}', b'{"next_chunk": "8"}',
                                     b"[1]"])
def test_a_bad_file_is_a_clear_error(tmp_path: Path, content: bytes) -> None:
    pos = position_for(EP, tmp_path)
    pos.directory.mkdir(parents=True, exist_ok=True)
    pos.path.write_bytes(content)
    with pytest.raises(ChunkStateError, match=str(pos.path)):
        pos.load()


def test_state_dir_from_the_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DHC_STATE_DIR", str(tmp_path / "s"))
    assert state_dir() == tmp_path / "s"
    monkeypatch.delenv("DHC_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "x"))
    assert state_dir() == tmp_path / "x" / "dhc"


def test_an_agent_without_the_service_resumes_where_a_clean_session_ended(monkeypatch, tmp_path: Path
                                                                          ) -> None:
    monkeypatch.setenv("DHC_STATE_DIR", str(tmp_path))
    with Agent(EP, 2) as first:
        assert first.transport.next_chunk == 0
        first.transport.next_chunk = 5 * 2 * EP.window       # as if it had run 5 laps
    with Agent(EP, 2) as second:
        assert second.transport.next_chunk == 40
    # a session that fails does not move the position (the job needs a reset: a new epoch)
    failed = Agent(EP, 2)
    failed.transport.next_chunk = 48
    failed.fail("test")
    failed.close()
    assert Agent(EP, 2).transport.next_chunk == 40


def test_dhc_agent_names_a_bad_state_file(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setenv("DHC_STATE_DIR", str(tmp_path / "state"))
    manifest = tmp_path / "jobs.json"
    write_manifest(manifest, [{"job_id": 7, "window": 4, "lanes": 4, "epoch": 3, "workers": {
        "h1": {"ip": "127.0.0.1", "child_id": 0, "switch_ip": "127.0.0.1"},
        "h2": {"ip": "127.0.0.2", "child_id": 1, "switch_ip": "127.0.0.1"}}}])
    (tmp_path / "state").mkdir()
    position_for(load_endpoint(manifest, "h1")[0]).path.write_text("not json")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros(8, dtype=np.float32))
    rc = agent_main(["--manifest", str(manifest), "--host", "h1", "--input", str(x)])
    err = capsys.readouterr().err
    assert rc == 2 and "not a chunk position file" in err and "dhc-ctl jobs reset" in err, err

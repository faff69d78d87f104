"""Where a worker's chunk sequence resumes, for sessions that keep their epoch.

The switch tags every (slot, set) cell with the session (job, epoch) and the chunk of the data in
it, and drops a DATA of the same session for an *older* chunk as ``stale_chunk`` (p4src/README.md,
"Epochs and chunk tags"): that is what keeps a replayed or delayed frame of an earlier chunk out of
a reused cell.  So, within one epoch, chunk numbers must never go back.  The job service hands a
fresh epoch to every session (its sessions start at chunk 0); a session started from a manifest or
from flags keeps the job's epoch, so it continues the chunk sequence where the last clean session of
that (job, epoch) on this worker ended.  Every worker of a clean session ends on the same 2W
boundary (``ChunkTransport.finish``), so all of them resume at the same chunk.

One small JSON file per (job, epoch, first aggregator, child id) — the worker's place in the job —
and per deployment of the job as the worker sees it (a digest of its window, lanes, switch port and
peers, so a job redeployed with other workers or another window starts afresh, as all its workers
then do) under ``$DHC_STATE_DIR`` (default ``$XDG_STATE_HOME/dhc``, i.e. ``~/.local/state/dhc``), written
atomically when a session ends cleanly.  A session that fails leaves the file as it was: the job
then needs ``dhc-ctl jobs reset`` (a new epoch, whose sessions start at chunk 0), as before.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from hostagent.transport import JobEndpoint

#: chunk numbers are 32-bit serial numbers on the wire: the next session starts below this
CHUNK_SPACE = 1 << 32


class ChunkStateError(RuntimeError):
    """The saved chunk position cannot be read or written."""


def state_dir() -> Path:
    """``$DHC_STATE_DIR``, else ``$XDG_STATE_HOME/dhc``, else ``~/.local/state/dhc``."""
    explicit = os.environ.get("DHC_STATE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "dhc"


@dataclass(frozen=True)
class ChunkPosition:
    """The saved position of one worker of one (job, epoch)."""

    job_id: int
    epoch: int
    switch_ip: str
    child_id: int
    deployment: str        # digest of what else the worker knows of the job's deployment
    directory: Path

    @property
    def path(self) -> Path:
        return self.directory / (f"chunks-job{self.job_id}-epoch{self.epoch}-{self.switch_ip}-"
                                 f"child{self.child_id}-{self.deployment}.json")

    def load(self) -> int:
        """The chunk the next session starts at: where the last clean session ended, or 0."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return 0
        except OSError as err:
            raise ChunkStateError(f"{self.path}: cannot read: {err.strerror}") from err
        try:
            doc = json.loads(raw.decode("utf-8"))
            nxt = doc["next_chunk"]
        except (UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
            raise ChunkStateError(
                f"{self.path}: not a chunk position file ({err.__class__.__name__}); delete it and "
                "run `dhc-ctl jobs reset` for the job (a new epoch starts at chunk 0)") from None
        if not isinstance(nxt, int) or isinstance(nxt, bool) or not 0 <= nxt < CHUNK_SPACE:
            raise ChunkStateError(f"{self.path}: next_chunk {nxt!r} is not a chunk number")
        return nxt

    def save(self, next_chunk: int) -> None:
        """Record where a clean session ended (atomically: a crash leaves the old file)."""
        if not 0 <= next_chunk:
            raise ChunkStateError(f"next_chunk {next_chunk} is negative")
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"job_id": self.job_id, "epoch": self.epoch,
                                   "next_chunk": next_chunk % CHUNK_SPACE}) + "\n")
        os.replace(tmp, self.path)


def position_for(ep: JobEndpoint, directory: Path | None = None) -> ChunkPosition:
    """The saved position of the worker ``ep`` describes (its job, epoch and place in the job)."""
    seen = json.dumps([ep.window, ep.lanes, ep.switch_port, sorted(map(list, ep.peers))])
    digest = hashlib.sha256(seen.encode()).hexdigest()[:12]
    return ChunkPosition(ep.job_id, ep.epoch, ep.switch_ip, ep.child_id, digest,
                         directory or state_dir())

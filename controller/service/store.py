"""The job service's state in one SQLite file, so a restarted ``dhc-ctl serve`` resumes where it was.

What is kept: every job (name, token hash, world size, parameters, its numeric id and epoch, the
current session and its members), the fabric's placement (JSON, with every job's register
regions), and the counters of refused requests.  Heartbeat times are not kept (they change
every second); after a restart every member gets a fresh grace period.  Every write is one
transaction: a controller killed at any moment leaves the file as it was before or after it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    name TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL,
    world_size INTEGER NOT NULL,
    job_id INTEGER,
    lanes INTEGER NOT NULL,
    window INTEGER NOT NULL,
    bytes_per_iteration INTEGER NOT NULL,
    epoch INTEGER NOT NULL DEFAULT 0,
    session INTEGER NOT NULL DEFAULT 0,
    session_key TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'created',
    workers TEXT NOT NULL DEFAULT '[]',
    members TEXT NOT NULL DEFAULT '{}',
    last_failure TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS fabric (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, count INTEGER NOT NULL);
"""


@dataclass
class JobRecord:
    """One job as the service keeps it.  ``members``: rank -> host IP of the current session;
    ``workers``: the host IPs (rank order) of the session the job is placed for."""

    name: str
    token_hash: str
    world_size: int
    lanes: int
    window: int
    bytes_per_iteration: int
    job_id: int | None = None
    epoch: int = 0
    session: int = 0
    session_key: str = ""
    state: str = "created"      # created | forming | running | failed | idle
    workers: list[str] = field(default_factory=list)
    members: dict[int, str] = field(default_factory=dict)
    last_failure: str = ""


_COLUMNS = ("name", "token_hash", "world_size", "job_id", "lanes", "window", "bytes_per_iteration",
            "epoch", "session", "session_key", "state", "workers", "members", "last_failure")


def _row(job: JobRecord) -> tuple:
    d = dict(job.__dict__)
    d["workers"] = json.dumps(job.workers)
    d["members"] = json.dumps({str(k): v for k, v in sorted(job.members.items())})
    return tuple(d[c] for c in _COLUMNS)


def _job(row: tuple) -> JobRecord:
    d = dict(zip(_COLUMNS, row, strict=True))
    d["workers"] = json.loads(d["workers"])
    d["members"] = {int(k): v for k, v in json.loads(d["members"]).items()}
    return JobRecord(**d)


class Store:
    """The service's SQLite file (one connection, used under a lock: the service's threads share it)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(SCHEMA)
        except sqlite3.Error as err:
            raise StoreError(f"state database {self.path}: {err}") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def jobs(self) -> dict[str, JobRecord]:
        with self._lock:
            rows = self._db.execute(f"SELECT {', '.join(_COLUMNS)} FROM jobs ORDER BY name").fetchall()
        return {r[0]: _job(r) for r in rows}

    def put_jobs(self, *jobs: JobRecord, placement: str | None = None) -> None:
        """Write these jobs (and the placement, if given) in one transaction."""
        marks = ", ".join("?" * len(_COLUMNS))
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany(f"INSERT OR REPLACE INTO jobs ({', '.join(_COLUMNS)}) VALUES ({marks})",
                                 [_row(j) for j in jobs])
            if placement is not None:
                self._db.execute("INSERT OR REPLACE INTO fabric (key, value) VALUES ('placement', ?)",
                                 (placement,))

    def delete_job(self, name: str, placement: str | None = None) -> None:
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM jobs WHERE name = ?", (name,))
            if placement is not None:
                self._db.execute("INSERT OR REPLACE INTO fabric (key, value) VALUES ('placement', ?)",
                                 (placement,))

    def placement(self) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM fabric WHERE key = 'placement'").fetchone()
        return row[0] if row else None

    def count(self, name: str, by: int = 1) -> None:
        with self._lock:
            self._db.execute("INSERT INTO counters (name, count) VALUES (?, ?) ON CONFLICT(name) DO UPDATE "
                             "SET count = count + excluded.count", (name, by))

    def counters(self) -> dict[str, int]:
        with self._lock:
            return dict(self._db.execute("SELECT name, count FROM counters ORDER BY name").fetchall())


class StoreError(RuntimeError):
    """The state database cannot be opened or written."""

"""The job manifest: what a worker needs to join a deployed job.

``dhc-ctl deploy`` writes it; ``dhc-agent --manifest F --host H`` reads it::

    {"version": 1,
     "jobs": [{"job_id": 1, "window": 64, "lanes": 32, "epoch": 0,
               "workers": {"h1": {"ip": "10.0.0.1", "child_id": 0, "switch_ip": "10.0.100.1"},
                           ...}}]}

``epoch`` is the job's current session epoch (0 when absent); ``dhc-ctl jobs reset`` moves it
and rewrites it here, and agents stamp it into every frame (docs/recovery.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from dhcwire import header as wire
from dhcwire import limits
from hostagent.transport import JobEndpoint

MANIFEST_VERSION = 1


class ManifestError(ValueError):
    """A manifest or command line that does not describe a job endpoint."""


def write_manifest(path: Path, jobs: list[dict]) -> None:
    Path(path).write_text(json.dumps({"version": MANIFEST_VERSION, "jobs": jobs}, indent=2) + "\n")


def read_manifest(path: Path) -> dict:
    """The manifest document at ``path``; ManifestError naming the file and the problem."""
    try:
        doc = json.loads(Path(path).read_bytes().decode("utf-8"))
    except OSError as err:
        raise ManifestError(f"{path}: cannot read: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise ManifestError(f"{path}: not a DHC job manifest (not UTF-8 text at byte {err.start})") \
            from None
    except json.JSONDecodeError as err:
        raise ManifestError(f"{path}:{err.lineno}:{err.colno}: not JSON: {err.msg}") from err
    except RecursionError:
        raise ManifestError(f"{path}: not a DHC job manifest (nested too deeply)") from None
    if not isinstance(doc, dict) or doc.get("version") != MANIFEST_VERSION \
            or not isinstance(doc.get("jobs"), list):
        raise ManifestError(f"{path}: not a DHC job manifest (version {MANIFEST_VERSION})")
    return doc


def set_epoch(path: Path, job_id: int, epoch: int) -> None:
    """Rewrite the manifest at ``path`` with ``epoch`` for ``job_id`` (atomically: a worker
    starting meanwhile reads the old or the new file, never half of one)."""
    doc = read_manifest(path)
    jobs = [j for j in doc["jobs"] if isinstance(j, dict) and j.get("job_id") == job_id]
    if not jobs:
        raise ManifestError(f"{path}: job {job_id} is not in the manifest")
    for j in jobs:
        j["epoch"] = epoch
    tmp = Path(path).with_name(Path(path).name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)


def find_job(path: Path, host: str, job_id: int | None = None) -> tuple[int, dict]:
    """(index, job) of the one job in the manifest at ``path`` that ``host`` works for."""
    doc = read_manifest(path)
    matches = []
    for i, job in enumerate(doc["jobs"]):
        try:
            if host in job["workers"] and (job_id is None or job["job_id"] == job_id):
                matches.append((i, job))
        except (KeyError, TypeError) as err:
            raise ManifestError(f"{path}: jobs[{i}]: missing or bad field {err}") from err
    if not matches:
        raise ManifestError(f"{path}: host {host!r} is not a worker of "
                            + (f"job {job_id}" if job_id is not None else "any job"))
    if len(matches) > 1:
        ids = [j["job_id"] for _, j in matches]
        raise ManifestError(f"{path}: host {host!r} is in jobs {ids}; choose one with --job")
    return matches[0]


def _field(path: Path, where: str, value: object, check: Callable[[object], object]):
    try:
        return check(value)
    except ValueError as err:
        raise ManifestError(f"{path}: {where}: {err}") from None


def load_endpoint(path: Path, host: str, job_id: int | None = None,
                  bind_ip: str = "0.0.0.0", epoch: int | None = None) -> tuple[JobEndpoint, int]:
    """(endpoint, number of workers) of ``host`` in the manifest at ``path``; ``epoch``
    overrides the manifest's.  Every value passes the checks a topology file's do
    (``dhcwire.limits``), so a manifest cannot make an agent send what a topology could not."""
    i, job = find_job(path, host, job_id)
    if epoch is None:
        epoch = job.get("epoch", 0)
    where = f"jobs[{i}]"
    epoch = _field(path, f"{where}.epoch", epoch, limits.epoch)
    try:
        me = job["workers"][host]
        raw = {"job_id": job["job_id"], "window": job["window"],
               "lanes": job.get("lanes", wire.DEFAULT_LANES),
               "child_id": me["child_id"], "switch_ip": me["switch_ip"]}
        peer_ips = {name: w["ip"] for name, w in job["workers"].items() if name != host}
    except (KeyError, TypeError) as err:
        raise ManifestError(f"{path}: {where}.workers.{host}: missing or bad field {err}") from err
    mine = f"{where}.workers.{host}"
    peers = tuple(sorted((name, _field(path, f"{where}.workers.{name}.ip", ip, limits.endpoint_ip))
                         for name, ip in peer_ips.items()))
    ep = JobEndpoint(job_id=_field(path, f"{where}.job_id", raw["job_id"], limits.job_id),
                     child_id=_field(path, f"{mine}.child_id", raw["child_id"], limits.child_id),
                     switch_ip=_field(path, f"{mine}.switch_ip", raw["switch_ip"], limits.endpoint_ip),
                     window=_field(path, f"{where}.window", raw["window"], limits.window),
                     lanes=_field(path, f"{where}.lanes", raw["lanes"], limits.lanes), bind_ip=bind_ip,
                     peers=peers, epoch=epoch)
    return ep, len(job["workers"])

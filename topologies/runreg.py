"""What this checkout started, on disk, so ``make stop`` ends exactly that and nothing else.

Every running network (``topologies.net.running_net``) writes one record under the checkout's run
directory (``<checkout>/.run/``, or ``$DHC_RUN_DIR``): the process that owns it, each Mininet node
shell, each target process, the network namespace of each host (agents and workers run there) and
the switch-side interfaces with their ifindex.  Every process is identified by PID *and* start
time (``/proc/PID/stat`` field 22), so a PID reused by someone else's process is never signalled;
an interface is deleted only if the name still has the recorded ifindex.  A clean teardown removes
the record; an interrupted run leaves it for ``make stop`` (``topologies.cleanup``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def run_dir() -> Path:
    """This checkout's run directory (``$DHC_RUN_DIR`` overrides, e.g. for tests)."""
    return Path(os.environ.get("DHC_RUN_DIR") or REPO_ROOT / ".run")


@dataclass(frozen=True)
class ProcRef:
    """A process as it was when recorded: PID plus kernel start time (clock ticks since boot)."""

    pid: int
    start: int

    @staticmethod
    def of(pid: int) -> ProcRef | None:
        start = start_time(pid)
        return None if start is None else ProcRef(pid, start)

    def alive(self) -> bool:
        return start_time(self.pid) == self.start


def start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (after the parenthesised command name), or None if gone or a
    zombie (dead, waiting for a parent that may never reap it, e.g. a container's PID 1)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return None if fields[0] in ("Z", "X") else int(fields[19])


def netns_inode(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def ifindex(name: str) -> int | None:
    try:
        return int(Path(f"/sys/class/net/{name}/ifindex").read_text())
    except (OSError, ValueError):
        return None


@dataclass
class RunRecord:
    """One running network of this checkout."""

    owner: ProcRef
    processes: list[ProcRef] = field(default_factory=list)      # node shells, targets
    namespaces: list[int] = field(default_factory=list)         # netns inodes of hosts
    interfaces: list[tuple[str, int]] = field(default_factory=list)  # (name, ifindex), root ns
    started: float = field(default_factory=time.time)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> RunRecord:
        d = json.loads(text)
        return RunRecord(owner=ProcRef(**d["owner"]), processes=[ProcRef(**p) for p in d["processes"]],
                         namespaces=list(d["namespaces"]),
                         interfaces=[(str(n), int(i)) for n, i in d["interfaces"]],
                         started=float(d["started"]))


def write_record(rec: RunRecord, directory: Path | None = None) -> Path:
    d = directory or run_dir()
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"net-{rec.owner.pid}-{int(rec.started * 1000)}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(rec.to_json())
    tmp.replace(path)
    return path


def record_net(net) -> RunRecord:
    """A record of a started Mininet network (duck-typed: ``hosts``, ``switches``, ``links``)."""
    me = ProcRef.of(os.getpid())
    assert me is not None
    rec = RunRecord(owner=me)
    for node in list(net.hosts) + list(net.switches):
        ref = ProcRef.of(node.pid) if getattr(node, "pid", None) else None
        if ref:
            rec.processes.append(ref)
        proc = getattr(node, "proc", None)
        ref = ProcRef.of(proc.pid) if proc is not None else None
        if ref:
            rec.processes.append(ref)
    for host in net.hosts:
        ino = netns_inode(host.pid)
        if ino is not None and ino != netns_inode(os.getpid()):
            rec.namespaces.append(ino)
    for link in net.links:
        for intf in (link.intf1, link.intf2):
            if not getattr(intf.node, "inNamespace", True):
                idx = ifindex(intf.name)
                if idx is not None:
                    rec.interfaces.append((intf.name, idx))
    return rec


def _processes_in(namespaces: set[int]) -> list[ProcRef]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and netns_inode(int(entry.name)) in namespaces:
            ref = ProcRef.of(int(entry.name))
            if ref:
                out.append(ref)
    return out


def _terminate(refs: list[ProcRef], grace: float = 3.0) -> int:
    """SIGTERM every live ref, SIGKILL what is left after ``grace`` s; how many were signalled."""
    live = [r for r in refs if r.alive() and r.pid != os.getpid()]
    for r in live:
        try:
            os.kill(r.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(r.alive() for r in live):
        time.sleep(0.05)
    for r in live:
        if r.alive():
            try:
                os.kill(r.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return len(live)


@dataclass
class StopReport:
    records: int = 0
    processes: int = 0
    interfaces: int = 0


def stop_recorded(directory: Path | None = None) -> StopReport:
    """End everything the records under ``directory`` name, then delete the records."""
    rep = StopReport()
    d = directory or run_dir()
    for path in sorted(d.glob("net-*.json")) if d.is_dir() else []:
        try:
            rec = RunRecord.from_json(path.read_text())
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)   # a torn record names nothing we can trust
            continue
        rep.records += 1
        # the owner first (it tears down cleanly on SIGTERM when it can), then what remains
        rep.processes += _terminate([rec.owner], grace=10.0)
        inside = _processes_in(set(rec.namespaces)) if rec.namespaces else []
        rep.processes += _terminate(inside + rec.processes)
        for name, idx in rec.interfaces:
            if ifindex(name) == idx:
                subprocess.run(["ip", "link", "del", name], check=False,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                rep.interfaces += 1
        path.unlink(missing_ok=True)
    return rep

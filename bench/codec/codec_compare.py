"""Two checkouts of the codec timed side by side: this one against a previous revision.

A change to the kernels is only worth keeping if it is faster than the code it replaces, and on
a machine shared with other jobs absolute times move by tens of percent between runs.  So both
versions run in one benchmark, in two child processes that take turns: the parent asks each in
rotation for one allreduce on the same inputs (saved once to a temporary ``.npy``), so a load
spike hits both alike, and reports per version the best and median of worker 0's encode +
decode time, the median of the per-turn time ratios new / previous, and the load average.

The previous version is a directory holding its ``dhc`` and ``dhcwire`` packages, or a git
revision of this repository, exported with ``git archive`` into a temporary directory.  The
child processes use only the codec's public round API, which both versions share.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
#: seconds one reply may take (the first includes compiling a previous version's kernels)
REPLY_TIMEOUT = 600.0

#: the child: loads the inputs, then per line of stdin runs one allreduce with worker 0 timed
_CHILD = r"""
import json, sys, numpy as np
from dhc import HGSketchWorker, parallel
from dhc.protocol import aggregate_round
xs = list(np.load(sys.argv[1]))
parallel.set_threads(int(sys.argv[2]))
out = np.empty(xs[0].size, np.float32)
def once():
    ws = [HGSketchWorker(x, len(xs), backend="numba") for x in xs]
    segs = [w.first_round() for w in ws]
    while not ws[0].done:
        agg = aggregate_round(segs)
        segs = [w.feed(agg) for w in ws]
    ws[0].result(out=out)
    s = ws[0].stats
    return s.encode_seconds, s.decode_seconds, int(s.union_nnz)
once()
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    enc, dec, union = once()
    print(json.dumps({"encode": enc, "decode": dec, "union": union}), flush=True)
"""


class CompareError(RuntimeError):
    """The previous version could not be exported or its child process failed."""


@dataclass
class _Child:
    """One version's child process."""

    name: str
    proc: subprocess.Popen
    stderr: Path                 # a file, not a pipe: a chatty child cannot block on it

    def request(self) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        return self._reply()

    def _reply(self) -> dict:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], REPLY_TIMEOUT)
        if not ready:
            self.proc.kill()
            raise CompareError(f"the {self.name} version's process did not answer within "
                               f"{REPLY_TIMEOUT:.0f} s")
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            err = self.stderr.read_text(errors="replace")
            raise CompareError(f"the {self.name} version's process ended: {err.strip()[-500:]}")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def export_revision(rev: str, dest: Path) -> Path:
    """``dhc`` and ``dhcwire`` of git revision ``rev`` of this repository, under ``dest``."""
    try:
        tar = subprocess.run(["git", "-C", str(REPO), "archive", rev, "dhc", "dhcwire"],
                             check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        raise CompareError(f"cannot export revision {rev!r} of {REPO}: "
                           f"{detail.decode(errors='replace').strip() or exc}") from exc
    return dest


def _spawn(name: str, path: Path, data: Path, threads: int) -> _Child:
    env = dict(os.environ, PYTHONPATH=str(path))
    stderr = data.with_name(f"{name}.stderr")
    with stderr.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(data), str(threads)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                text=True, env=env, cwd=str(path))
    child = _Child(name, proc, stderr)
    child._reply()                         # inputs loaded, kernels compiled or loaded, warm
    return child


def compare(xs: list[np.ndarray], previous: str, repeats: int, threads: int) -> dict:
    """Worker 0's encode + decode time, this checkout vs ``previous`` (a directory with the
    previous ``dhc`` or a git revision), in alternating turns on the same inputs."""
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="dhc-compare-") as tmp:
        prev_path = Path(previous)
        if not (prev_path / "dhc").is_dir():
            prev_path = export_revision(previous, Path(tmp))
        data = Path(tmp) / "inputs.npy"
        np.save(data, np.stack(xs))
        children = []
        try:
            children.append(_spawn("current", REPO, data, threads))
            children.append(_spawn("previous", prev_path, data, threads))
            runs: dict[str, list[dict]] = {c.name: [] for c in children}
            for turn in range(repeats):
                # alternate which version goes first, so neither always follows the other
                for c in (children if turn % 2 == 0 else children[::-1]):
                    runs[c.name].append(c.request())
        finally:
            for c in children:
                c.close()
    return _summary(runs, previous, threads, load_before)


def _summary(runs: dict[str, list[dict]], previous: str, threads: int,
             load_before: float) -> dict:
    total = {name: np.array([r["encode"] + r["decode"] for r in rs]) * 1e3
             for name, rs in runs.items()}
    out: dict = {"previous": previous, "threads": threads, "turns": len(total["current"]),
                 "union_nnz": runs["current"][0]["union"] if runs["current"] else 0,
                 "loadavg_1m_before_after": [round(load_before, 2),
                                             round(os.getloadavg()[0], 2)]}
    for name, rs in runs.items():
        out[name] = {"encode_decode_ms": round(float(total[name].min()), 3),
                     "encode_decode_ms_median": round(float(np.median(total[name])), 3),
                     "encode_ms_median": round(float(np.median([r["encode"] for r in rs])) * 1e3,
                                               3),
                     "decode_ms_median": round(float(np.median([r["decode"] for r in rs])) * 1e3,
                                               3)}
    out["ratio_best"] = round(float(total["current"].min() / total["previous"].min()), 3)
    out["ratio_median_per_turn"] = round(float(np.median(total["current"] /
                                                         total["previous"])), 3)
    return out

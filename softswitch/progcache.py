"""A disk cache of the front end's work: preprocessed text and compiled programs.

Every switch start, every P4Runtime pipeline push and every controller that wants P4Info runs
the same pure-Python front end (preprocess, LALR parse, checks) on the same program; for
``p4src/dhc.p4`` at 256 lanes that is ~5 s on this project's machines, most of a switch's
start-up.  Both stages are deterministic functions of their inputs, so their results are kept
on disk, next to the native backend's compiled modules (``$SOFTSWITCH_CACHE``, default
``~/.cache/softswitch``), in ``programs/``:

* **preprocessed text**, keyed by the source text, its file name and the working directory,
  the defines, the include path and whether ``#include`` is allowed.  An entry also records the
  SHA-256 of every file the text came from (the ``#line`` markers name them) and the names in
  every directory of the include path, so an edited header or a new file that would shadow one
  makes it stale;
* **compiled programs** (``compiler.CompiledProgram``: checked declarations, typed IR, P4Info,
  warnings; no run-time state), keyed by the preprocessed text and the file name.

Every key also holds a hash of this package's own sources, lark's and pcpp's versions: a changed
front end never reads an old entry.  A missing, stale or unreadable entry is rebuilt; a failed
write loses nothing but the saving.  ``SOFTSWITCH_PROGRAM_CACHE=0`` turns the cache off.  The
directory is created private (0700): pickles are only read from a directory this user owns.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TypeVar

from .cachedir import cache_dir

T = TypeVar("T")

_PACKAGE = Path(__file__).parent
#: what the directory may hold; the entries used least recently go first (dhc.p4 at 256 lanes
#: pickles to ~16 MB, a test program to ~0.1 MB)
MAX_ENTRIES = 2000
MAX_BYTES = 1 << 30
_MARKER_PREFIXES = ("#line ", "# ")


def enabled() -> bool:
    return os.environ.get("SOFTSWITCH_PROGRAM_CACHE", "1") not in ("0", "no", "off", "")


@cache
def code_version() -> str:
    """Hash of everything that decides the front end's output: this package's sources, lark, pcpp."""
    h = hashlib.sha256()
    for p in sorted(_PACKAGE.rglob("*")):
        if p.suffix in (".py", ".lark", ".p4") and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(_PACKAGE)).encode() + b"\0" + p.read_bytes() + b"\0")
    for dist in ("lark", "pcpp"):
        try:
            h.update(f"{dist}={metadata.version(dist)}".encode())
        except metadata.PackageNotFoundError:
            h.update(dist.encode())
    h.update(sys.version.encode())
    return h.hexdigest()


def _dir() -> Path | None:
    """The cache directory, private to this user, or None when it cannot be made or trusted."""
    d = cache_dir() / "programs"
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = d.stat()
    except OSError:
        return None
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    return d


def _key(*parts: str) -> str:
    h = hashlib.sha256(code_version().encode())
    for p in parts:
        h.update(b"\0" + p.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:40]


def _write(path: Path, data: bytes) -> None:
    """Atomic: a concurrent reader sees the old entry or the new one, never half of one."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        return
    _prune(path.parent)


def _prune(d: Path) -> None:
    try:
        stats = [(p, p.stat()) for p in d.iterdir() if not p.name.startswith(".")
                 and p.suffix != ".lock"]
    except OSError:
        return
    stats.sort(key=lambda ps: ps[1].st_mtime, reverse=True)
    total = 0
    for i, (p, st) in enumerate(stats):
        total += st.st_size
        if i >= MAX_ENTRIES or total > MAX_BYTES:
            try:
                p.unlink()
                p.with_suffix(".lock").unlink(missing_ok=True)
            except OSError:
                pass


@contextmanager
def _building(path: Path) -> Iterator[None]:
    """One builder per entry: concurrent starts of the same program (every switch of a topology)
    wait for the first one's result instead of all running the front end at once.

    The builder removes its lock file on the way out, as long as the file is still the one it
    locked: no lock file outlives its build, so failed compiles (of hostile device configs, say),
    which leave no entry for pruning to find, cannot pile lock files up in the cache for ever.
    A waiter that had opened the removed file then finds the entry (or, after a failed build,
    builds once more itself)."""
    lock = path.with_suffix(".lock")
    try:
        fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        try:
            if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                lock.unlink()
        except OSError:
            pass
        os.close(fd)


def _read(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
        os.utime(path)  # last use, for pruning
        return data
    except OSError:
        return None


# ------------------------------------------------------------------ preprocessed text
def _file_hash(path: str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _listing(d: str) -> list[str]:
    try:
        return sorted(os.listdir(d))
    except OSError:
        return []


def marker_files(text: str) -> list[str]:
    """The files a preprocessed text names in its ``#line``/``# N "file"`` markers, in order."""
    seen: dict[str, None] = {}
    for line in text.split("\n"):
        if line.startswith(_MARKER_PREFIXES) and '"' in line:
            name = line[line.index('"') + 1:line.rindex('"')]
            if name and os.path.isfile(name):
                seen.setdefault(os.path.abspath(name))
    return list(seen)


def _deps(text: str, search: Sequence[str]) -> dict:
    return {"files": {f: _file_hash(f) for f in marker_files(text)},
            "dirs": {d: _listing(d) for d in search}}


def _still_valid(deps: dict) -> bool:
    return (all(_file_hash(f) == h for f, h in deps["files"].items())
            and all(_listing(d) == names for d, names in deps["dirs"].items()))


def preprocessed(text: str, filename: str, defines: dict[str, str] | None, search: Sequence[str],
                 allow_include: bool, run: Callable[[], str]) -> str:
    """``run()``'s preprocessed text, from the cache when none of its inputs changed.

    ``search`` is the include path in the order the preprocessor searches it."""
    d = _dir() if enabled() else None
    if d is None:
        return run()
    key = _key("pre", text, filename, os.getcwd(),
               json.dumps(sorted((defines or {}).items())), "\0".join(search), str(allow_include))
    def dump(out: str) -> bytes:
        deps = _deps(out, search if allow_include else ())
        return json.dumps({"deps": deps, "text": out}).encode()

    return _through(d / f"{key}.pre.json", _cached_text, run, dump)


def _cached_text(path: Path) -> str | None:
    raw = _read(path)
    if raw is None:
        return None
    try:
        entry = json.loads(raw)
        return entry["text"] if _still_valid(entry["deps"]) else None
    except (ValueError, KeyError, TypeError):
        return None


# ------------------------------------------------------------------ compiled programs
def compiled(text: str, filename: str, build: Callable[[], T]) -> T:
    """``build()``'s compiled program (``compiler.CompiledProgram``) for this preprocessed
    text, unpickled when cached.

    Only programs that compile are cached; a compile error is raised by ``build()`` every time."""
    d = _dir() if enabled() else None
    if d is None:
        return build()
    def dump(prog: T) -> bytes | None:
        try:
            return pickle.dumps(prog, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return None  # a program that does not pickle is simply not cached

    return _through(d / f"{_key('prog', text, filename)}.prog.pickle", _unpickled, build, dump)


def _through(path: Path, load: Callable[[Path], T | None], build: Callable[[], T],
             dump: Callable[[T], bytes | None]) -> T:
    """The entry at ``path`` if ``load`` can use it, else ``build()``'s result, stored by one
    builder while any other waits for it."""
    found = load(path)
    if found is not None:
        return found
    with _building(path):
        found = load(path)
        if found is not None:
            return found
        made = build()
        data = dump(made)
        if data is not None:
            _write(path, data)
    return made


def _unpickled(path: Path):
    raw = _read(path)
    if raw is None:
        return None
    try:
        return pickle.loads(raw)
    except Exception:  # noqa: BLE001 - any unreadable entry is rebuilt, never a crash
        return None


def clear(kinds: Iterable[str] = (".pre.json", ".prog.pickle")) -> int:
    """Remove every cached entry; returns how many."""
    d = _dir()
    n = 0
    if d is not None:
        for suffix in kinds:
            for p in d.glob(f"*{suffix}"):
                p.with_suffix(".lock").unlink(missing_ok=True)
                p.unlink(missing_ok=True)
                n += 1
    return n

"""Which implementation of the codec's hot loops runs: compiled (numba) or the numpy reference.

``DHC_CODEC_BACKEND=numpy`` (or ``numba``) in the environment picks the process default;
``HGSketchWorker(..., backend="numpy")`` picks it per worker; :func:`set_default` changes the
default at run time (benchmarks, tests).  Without a choice the compiled backend is used when
numba is installed, else numpy.  Both give bit-identical lanes, sums and stuck sets
(``tests/codec/test_backends.py``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from .errors import InputError

BACKENDS = ("numba", "numpy")
ENV = "DHC_CODEC_BACKEND"


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            return True
    except OSError:
        return False


def _prepare_numba_cache() -> None:
    """The kernels are compiled with ``cache=True``, and numba refuses to even define such a
    function when it finds no writable cache directory (next to the source, then the user's
    cache directory).  For a read-only install without a writable home, point
    ``NUMBA_CACHE_DIR`` at a per-user temporary directory before numba reads its
    configuration."""
    if os.environ.get("NUMBA_CACHE_DIR") or "numba" in sys.modules:
        return
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    if _writable(Path(__file__).parent / "__pycache__") or _writable(Path(xdg) / "numba"):
        return
    fallback = Path(tempfile.gettempdir()) / f"dhc-numba-cache-{os.getuid()}"
    if _writable(fallback):
        os.environ["NUMBA_CACHE_DIR"] = str(fallback)


_prepare_numba_cache()

try:
    from . import native
except (ImportError, RuntimeError) as exc:   # numba missing or unusable: numpy still works
    native = None                   # type: ignore[assignment]
    _why_missing = str(exc)
else:
    _why_missing = ""


def available() -> tuple[str, ...]:
    """Backends that can run here."""
    return BACKENDS if native is not None else ("numpy",)


def _check(name: str, where: str) -> str:
    if name not in BACKENDS:
        raise InputError(f"{where}: unknown codec backend {name!r}; choose one of {BACKENDS}")
    if name == "numba" and native is None:
        raise InputError(f"{where}: codec backend 'numba' needs numba ({_why_missing}); "
                         "pip install numba, or use DHC_CODEC_BACKEND=numpy")
    return name


def _initial() -> str:
    env = os.environ.get(ENV, "").strip().lower()
    if env:
        return _check(env, f"environment variable {ENV}")
    return "numba" if native is not None else "numpy"


_default = _initial()


def default() -> str:
    """The backend workers use when none is given."""
    return _default


def set_default(name: str) -> None:
    """Change the process-wide default backend."""
    global _default
    _default = _check(name, "set_default")


def resolve(name: str | None) -> str:
    """``name`` validated, or the default when None."""
    return _default if name is None else _check(name, "backend")

"""Choice of backend: ``native`` (P4 compiled to C, see ``softswitch/native``) or ``python``
(P4 compiled to Python closures).  The default is ``auto``: native when a C compiler is present
and the program is within what the native backend builds, else python with one warning."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from .compiler import CompiledProgram, compile_errors
from .native.build import NativeBuildError, compiler
from .native.switch import NativeSwitch
from .target.switch import Switch

BACKENDS = ("auto", "native", "python")
log = logging.getLogger("softswitch")
_default = os.environ.get("SOFTSWITCH_BACKEND", "auto")
_warned: set[str] = set()


def set_default(name: str) -> None:
    """Backend used when a caller does not name one (the CLI's --backend)."""
    global _default
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    _default = name


def default() -> str:
    return _default


def _warn(msg: str) -> None:
    if msg not in _warned:
        _warned.add(msg)
        log.warning("%s", msg)


def _choose(make: Callable[[type], Switch], backend: str | None, trace: bool) -> Switch:
    b = backend or _default
    if b not in BACKENDS:
        raise ValueError(f"unknown backend {b!r}; choose one of {', '.join(BACKENDS)}")
    if b == "python":
        return make(Switch)
    if b == "native":
        if trace:
            raise NativeBuildError("native backend: packet traces (trace=True) need the python backend")
        return make(NativeSwitch)
    if trace:
        return make(Switch)
    if compiler() is None:
        _warn("softswitch: no C compiler (cc) found; using the python backend (slower). "
              "Install gcc or pass --backend python to silence this.")
        return make(Switch)
    try:
        return make(NativeSwitch)
    except NativeBuildError as err:
        _warn(f"softswitch: {err}; using the python backend for this program")
        return make(Switch)


def build(compiled: CompiledProgram, backend: str | None = None, cpu_port: int | None = None,
          trace: bool = False) -> Switch:
    """A switch of the chosen backend running ``compiled`` (``softswitch.compile``'s result)."""
    with compile_errors(compiled.filename):
        return _choose(lambda cls: cls(compiled, cpu_port, trace), backend, trace)


def load(path: str | Path, backend: str | None = None, **kw) -> Switch:
    """``Switch.load`` with a backend choice."""
    return _choose(lambda cls: cls.load(path, **kw), backend, kw.get("trace", False))


def from_source(text: str, filename: str = "<source>", backend: str | None = None, **kw) -> Switch:
    """``Switch.from_source`` with a backend choice."""
    return _choose(lambda cls: cls.from_source(text, filename, **kw), backend, kw.get("trace", False))

"""Make Debian's Mininet (a system-Python package) importable from the project's venv.

Debian installs Mininet 2.3 for /usr/bin/python3 only; the venv has its own
Python build and does not see /usr/lib/python3/dist-packages.  Putting that
whole directory on sys.path would leak Debian's numpy & co. into the venv, so we
expose just the ``mininet`` package: a symlink in site-packages at setup time
(``python -m topologies.mininet_env``), or an on-the-fly import by path.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

DEBIAN_MININET = Path("/usr/lib/python3/dist-packages/mininet")


def ensure_mininet() -> ModuleType:
    """Import ``mininet``, from the venv if linked there, else straight from Debian's directory."""
    if "mininet" in sys.modules:
        return sys.modules["mininet"]
    spec = importlib.util.find_spec("mininet")
    if spec is None:
        init = DEBIAN_MININET / "__init__.py"
        if not init.exists():
            raise ImportError(
                f"Mininet not found: install Debian's 'mininet' package ({DEBIAN_MININET} is missing)"
            )
        spec = importlib.util.spec_from_file_location("mininet", init,
                                                      submodule_search_locations=[str(DEBIAN_MININET)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["mininet"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["mininet"]
        raise
    if shutil.which("mnexec") is None:
        raise ImportError("Mininet's 'mnexec' helper is not on PATH (Debian package 'mininet')")
    return module


def link_into_venv() -> Path:
    """Symlink Debian's mininet package into this interpreter's site-packages (idempotent)."""
    target = Path(sysconfig.get_paths()["purelib"]) / "mininet"
    if target.is_symlink() and target.resolve() == DEBIAN_MININET.resolve():
        return target
    if target.exists() or target.is_symlink():
        raise SystemExit(
            f"mininet_env: {target} exists and is not a link to {DEBIAN_MININET}; remove it first"
        )
    if not DEBIAN_MININET.is_dir():
        raise SystemExit(f"mininet_env: {DEBIAN_MININET} is missing: apt-get install mininet")
    target.symlink_to(DEBIAN_MININET)
    return target


def main() -> int:
    path = link_into_venv()
    import mininet.net  # noqa: F401 - proves the link works under this interpreter

    print(f"mininet_env: {path} -> {DEBIAN_MININET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

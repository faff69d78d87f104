"""The project's import graph runs one way.

Every ``import`` statement of every module of the project's packages (at the top level and inside
functions, found with ``ast``) is an arrow.  The test asserts that

* every arrow between packages is in ``ALLOWED`` (the table in docs/ARCHITECTURE.md), and the
  narrower rules in ``NARROW`` hold (who may import which module of another package);
* no module of the softswitch's compiler imports its target or backends (``COMPILER``);
* the packages form no cycle;
* inside each package the modules form no cycle, except the ones listed in ``KNOWN_CYCLES``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: package -> the project packages its modules may import (docs/ARCHITECTURE.md, "Dependencies").
ALLOWED: dict[str, set[str]] = {
    "dhcwire": set(),
    "p4rt": set(),
    "softswitch": {"p4rt"},
    "dhc": {"dhcwire"},
    "hostagent": {"dhcwire", "dhc"},
    "controller": {"dhcwire", "hostagent", "softswitch", "p4rt"},
    "topologies": {"dhcwire", "dhc", "hostagent", "controller", "softswitch"},
    "sim": {"dhcwire", "dhc", "controller"},
    "bench": {"dhcwire", "dhc", "hostagent", "controller", "softswitch", "p4rt", "topologies", "sim"},
    "tests": {"dhcwire", "dhc", "hostagent", "controller", "softswitch", "p4rt", "topologies", "sim",
              "bench"},
}

#: (importing package, imported package) -> (modules of the importer allowed to, modules of the
#: imported package they may import); None = any.  These arrows are allowed only that narrowly.
NARROW: dict[tuple[str, str], tuple[set[str] | None, set[str] | None]] = {
    # the codec shares levels/ops and the lane layout, nothing that carries packets
    ("dhc", "dhcwire"): (None, {"dhcwire.lanes"}),
    # the controller knows the target only through its compiler: P4Info and a device config
    ("controller", "softswitch"): ({"controller.pipeline"}, {"softswitch.compiler"}),
    # the controller writes the job manifest the agents read, nothing else of the agent
    ("controller", "hostagent"): (None, {"hostagent.manifest"}),
}

#: The compiler's modules (front end, checker, warnings, IR) and what they may not import: the
#: target, the backends and the P4Runtime server build on the compiled program, never the reverse.
COMPILER = ("softswitch.frontend", "softswitch.check", "softswitch.warn", "softswitch.ir")
NOT_FROM_COMPILER = ("softswitch.target", "softswitch.pygen", "softswitch.native", "softswitch.server",
                     "softswitch.stf", "softswitch.backend", "softswitch.cli")

#: Module cycles inside a package that are known and owned elsewhere (none left).  A cycle not
#: listed here fails; a listed one that is gone fails too, so the list cannot go stale.
KNOWN_CYCLES: set[frozenset[str]] = set()

PACKAGES = tuple(ALLOWED)


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            if "__pycache__" not in path.parts:
                out[_module_name(path)] = path
    return out


MODULES = _modules()


def _imports(mod: str, path: Path) -> Iterator[str]:
    """Every project module ``mod`` imports, anywhere in its body.  A module that is not in the
    repository (e.g. generated stubs tried first) is no arrow."""
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names if a.name in MODULES]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module not in MODULES:
                continue
            # ``from pkg import mod`` imports the module pkg.mod; ``from mod import name``, mod
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module
                       for a in node.names]
        else:
            continue
        yield from (t for t in targets if t != mod)


GRAPH: dict[str, set[str]] = {m: set(_imports(m, p)) for m, p in MODULES.items()}


def _package(mod: str) -> str:
    return mod.split(".")[0]


def _cycles(nodes: set[str], edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, set()) & nodes)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, set()) & nodes))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(frozenset(comp))
    return out


def test_the_walk_sees_the_project() -> None:
    """The walk finds modules of every package and arrows of every kind (guards the test itself)."""
    assert {_package(m) for m in MODULES} == set(PACKAGES)
    assert "dhcwire.lanes" in GRAPH["dhc.protocol"]            # from dhcwire.lanes import ...
    assert "dhcwire.header" in GRAPH["hostagent.scapy_layer"]  # from dhcwire import header
    assert "controller.intent" in GRAPH["controller.deploy.state_diff"]  # top-level import
    assert "softswitch.compiler" in GRAPH["controller.pipeline"]  # from softswitch.compiler import
    assert "softswitch" in GRAPH["bench.softswitch.inprocess"]            # package __init__
    assert _cycles({"a", "b", "c"}, {"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [frozenset("abc")]


@pytest.mark.parametrize("pkg", PACKAGES)
def test_package_imports_only_what_the_table_allows(pkg: str) -> None:
    bad = sorted(f"{m} imports {t}" for m, ts in GRAPH.items() if _package(m) == pkg for t in ts
                 if _package(t) != pkg and _package(t) not in ALLOWED[pkg])
    assert not bad, "arrows not in ALLOWED:\n" + "\n".join(bad)


@pytest.mark.parametrize("arrow", sorted(NARROW))
def test_narrow_arrows(arrow: tuple[str, str]) -> None:
    importers, imported = NARROW[arrow]
    bad = sorted(f"{m} imports {t}" for m, ts in GRAPH.items() if _package(m) == arrow[0] for t in ts
                 if _package(t) == arrow[1] and ((importers is not None and m not in importers)
                                                 or (imported is not None and t not in imported)))
    assert not bad, f"{arrow[0]} -> {arrow[1]} is allowed only as {NARROW[arrow]}:\n" + "\n".join(bad)


def _under(mod: str, prefixes: tuple[str, ...]) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


def test_the_compiler_does_not_import_the_target() -> None:
    """Nothing in ``softswitch/frontend|check|warn|ir`` imports the target or a backend."""
    assert any(_under(m, COMPILER) for m in GRAPH) and any(_under(m, NOT_FROM_COMPILER) for m in GRAPH)
    bad = sorted(f"{m} imports {t}" for m, ts in GRAPH.items() if _under(m, COMPILER) for t in ts
                 if _under(t, NOT_FROM_COMPILER))
    assert not bad, "the compiler imports the target:\n" + "\n".join(bad)


def test_no_cycle_between_packages() -> None:
    edges: dict[str, set[str]] = {p: set() for p in PACKAGES}
    for m, ts in GRAPH.items():
        edges[_package(m)] |= {_package(t) for t in ts if _package(t) != _package(m)}
    assert _cycles(set(PACKAGES), edges) == []


@pytest.mark.parametrize("pkg", PACKAGES)
def test_no_cycle_between_modules_of_a_package(pkg: str) -> None:
    nodes = {m for m in GRAPH if _package(m) == pkg}
    found = set(_cycles(nodes, GRAPH))
    known = {c for c in KNOWN_CYCLES if _package(next(iter(c))) == pkg}
    assert found - known == set(), f"import cycles in {pkg}: {[sorted(c) for c in found - known]}"
    assert known - found == set(), f"listed in KNOWN_CYCLES but gone: {[sorted(c) for c in known - found]}"


@pytest.mark.parametrize(("module", "absent"), [
    ("controller.entries", "dhc"),        # the controller never loads the codec
    ("controller.deploy.cli", "dhc"),
    ("controller.deploy.state_diff", "grpc"),  # the diff is pure: no P4Runtime session
    ("controller.deploy.errors", "grpc"),      # nor do the errors most of the controller imports
    ("dhc", "dhcwire.header"),            # the codec loads nothing that carries packets
])
def test_importing_does_not_load(module: str, absent: str) -> None:
    """What the arrows promise at run time too (package ``__init__`` files included)."""
    code = f"import sys, {module}; print({absent!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", f"import {module} loads {absent}"

"""Regenerate the P4Runtime Python stubs so they import under protobuf >= 4.

The ``p4runtime`` wheel ships old-style ``*_pb2.py`` files ("Descriptors cannot be
created directly" under protobuf 7) and no ``.proto`` sources.  Each old file
still embeds its serialized ``FileDescriptorProto``, so we collect those into a
``FileDescriptorSet`` and hand it to the venv's own ``grpc_tools.protoc``
(``--descriptor_set_in``), which writes current-style modules.  By default the
output replaces the wheel's modules in place (the installed ``p4`` package), so
``p4.v1.p4runtime_pb2`` works for our code and for ``p4runtime-shell`` alike.

Usage (run once at setup, idempotent)::

    python scripts/gen_p4runtime_stubs.py          # rewrite the installed p4/ package
    python scripts/gen_p4runtime_stubs.py --out DIR # write a p4/ tree under DIR instead
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

from google.protobuf import descriptor_pb2

#: The proto files the p4runtime wheel provides, as protoc names them.
P4_PROTOS: tuple[str, ...] = (
    "p4/v1/p4data.proto",
    "p4/config/v1/p4types.proto",
    "p4/config/v1/p4info.proto",
    "p4/v1/p4runtime.proto",
)


def _installed_p4_dir() -> Path:
    """Directory of the installed ``p4`` package, found without importing its stubs."""
    spec = importlib.util.find_spec("p4")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("gen_stubs: the 'p4runtime' package is not installed (no 'p4' package found)")
    return Path(list(spec.submodule_search_locations)[0])


def _embedded_descriptor(py_file: Path, proto_name: str) -> descriptor_pb2.FileDescriptorProto:
    """Find the serialized FileDescriptorProto for ``proto_name`` among a module's bytes literals.

    Works on both the wheel's old-style modules (``serialized_pb=b'...'``) and on
    modules this script generated before (``AddSerializedFile(b'...')``), which
    makes the script idempotent.
    """
    tree = ast.parse(py_file.read_text(encoding="utf-8"), filename=str(py_file))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, bytes) and len(node.value) > 16:
            fdp = descriptor_pb2.FileDescriptorProto()
            try:
                fdp.ParseFromString(node.value)
            except Exception:  # noqa: BLE001 - not a descriptor, keep looking
                continue
            if fdp.name == proto_name:
                return fdp
    raise SystemExit(f"gen_stubs: no embedded descriptor for {proto_name} in {py_file}")


def _dependency_descriptor(proto_name: str) -> descriptor_pb2.FileDescriptorProto:
    """Descriptor of a non-P4 dependency (google/protobuf/*, google/rpc/*) from the runtime pool."""
    from google.protobuf import descriptor_pool

    if not proto_name.startswith(("google/protobuf/", "google/rpc/")):
        raise SystemExit(f"gen_stubs: unexpected dependency {proto_name}")
    importlib.import_module(proto_name[: -len(".proto")].replace("/", ".") + "_pb2")
    fd = descriptor_pool.Default().FindFileByName(proto_name)
    fdp = descriptor_pb2.FileDescriptorProto()
    fd.CopyToProto(fdp)
    return fdp


def build_descriptor_set(p4_dir: Path) -> descriptor_pb2.FileDescriptorSet:
    """All P4Runtime files plus their dependencies, dependencies first (protoc requires it)."""
    p4_files = {name: _embedded_descriptor(p4_dir.parent / name.replace(".proto", "_pb2.py"), name)
                for name in P4_PROTOS}
    ordered: list[descriptor_pb2.FileDescriptorProto] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        fdp = p4_files[name] if name in p4_files else _dependency_descriptor(name)
        for dep in fdp.dependency:
            visit(dep)
        ordered.append(fdp)

    for name in P4_PROTOS:
        visit(name)
    fds = descriptor_pb2.FileDescriptorSet()
    fds.file.extend(ordered)
    return fds


def generate(out_root: Path, p4_dir: Path | None = None) -> list[Path]:
    """Write ``p4/**/*_pb2.py`` and ``*_pb2_grpc.py`` under ``out_root``; return the files written."""
    from grpc_tools import protoc

    p4_dir = p4_dir or _installed_p4_dir()
    fds = build_descriptor_set(p4_dir)
    out_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        desc = Path(tmp) / "p4runtime.desc"
        desc.write_bytes(fds.SerializeToString())
        gen = Path(tmp) / "gen"
        gen.mkdir()
        args = ["grpc_tools.protoc", f"--descriptor_set_in={desc}", f"--python_out={gen}",
                f"--grpc_python_out={gen}", *P4_PROTOS]
        rc = protoc.main(args)
        if rc != 0:
            raise SystemExit(f"gen_stubs: protoc failed with exit code {rc}")
        written: list[Path] = []
        for src in sorted(gen.rglob("*.py")):
            rel = src.relative_to(gen)
            dst = out_root / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            for pkg in rel.parents:
                if str(pkg) != "." and not (out_root / pkg / "__init__.py").exists():
                    (out_root / pkg / "__init__.py").write_text("")
            tmp_dst = dst.with_suffix(".py.tmp")
            tmp_dst.write_bytes(src.read_bytes())
            os.replace(tmp_dst, dst)
            written.append(dst)
    for stale in out_root.rglob("__pycache__"):
        for pyc in stale.glob("*_pb2*.pyc"):
            pyc.unlink()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/gen_p4runtime_stubs.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="root directory to write the p4/ tree into (default: the installed package's parent)",
    )
    args = parser.parse_args(argv)
    p4_dir = _installed_p4_dir()
    out_root = args.out if args.out is not None else p4_dir.parent
    files = generate(out_root, p4_dir)
    print(f"gen_stubs: wrote {len(files)} modules under {out_root / 'p4'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

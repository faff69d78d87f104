"""The job service's wire protocol (``jobservice.proto``): messages and the gRPC stub.

The Python modules are generated from the proto with grpcio-tools the first time they are
needed (and by ``scripts/setup_python.sh``), into ``dhcwire/jobservice/_gen/`` (not committed),
so they always match the installed protobuf runtime.  ``pb`` is the messages module, ``rpc`` the
grpc module (``JobServiceStub``, ``JobServiceServicer``, ``add_JobServiceServicer_to_server``).
"""

from __future__ import annotations

import importlib
import os
import tempfile
from pathlib import Path
from types import ModuleType

import grpc

HERE = Path(__file__).resolve().parent
PROTO = HERE / "jobservice.proto"
GEN = HERE / "_gen"


def generate(out: Path = GEN) -> None:
    """Compile ``jobservice.proto`` into ``out`` (atomically: another process importing meanwhile
    sees the old modules or the new ones)."""
    from grpc_tools import protoc

    out.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        rc = protoc.main(["protoc", f"-I{HERE}", f"--python_out={tmp}", f"--grpc_python_out={tmp}",
                          str(PROTO)])
        if rc != 0:
            raise RuntimeError(f"protoc failed on {PROTO} (exit {rc})")
        grpc_mod = Path(tmp) / "jobservice_pb2_grpc.py"
        # the generated grpc module imports its messages as a top-level module; make it relative
        text = grpc_mod.read_text().replace("import jobservice_pb2 as", "from . import jobservice_pb2 as")
        grpc_mod.write_text(text)
        (Path(tmp) / "__init__.py").write_text("")
        for name in ("__init__.py", "jobservice_pb2.py", "jobservice_pb2_grpc.py"):
            os.replace(Path(tmp) / name, out / name)


def open_channel(addr: str, ca_file: str | Path | None = None, server_name: str | None = None):
    """A gRPC channel to the job service at ``addr`` (``HOST:PORT`` or ``unix:/path``); with
    ``ca_file`` over TLS, checking the service's certificate against that CA."""

    # reconnect within a second of a restarted service (gRPC's default backoff grows to minutes,
    # and heartbeats sent meanwhile fail at once)
    opts = [("grpc.max_receive_message_length", 4 << 20), ("grpc.initial_reconnect_backoff_ms", 200),
            ("grpc.min_reconnect_backoff_ms", 200), ("grpc.max_reconnect_backoff_ms", 1000)]
    if ca_file:
        creds = grpc.ssl_channel_credentials(root_certificates=Path(ca_file).read_bytes())
        if server_name:
            opts.append(("grpc.ssl_target_name_override", server_name))
        return grpc.secure_channel(addr, creds, options=opts)
    return grpc.insecure_channel(addr, options=opts)


def _load() -> tuple[ModuleType, ModuleType]:
    made = [GEN / "jobservice_pb2.py", GEN / "jobservice_pb2_grpc.py"]
    stale = not all(p.is_file() for p in made) or min(p.stat().st_mtime for p in made) < PROTO.stat().st_mtime
    if stale:
        generate()
    return (importlib.import_module(f"{__name__}._gen.jobservice_pb2"),
            importlib.import_module(f"{__name__}._gen.jobservice_pb2_grpc"))


pb, rpc = _load()

__all__ = ["generate", "open_channel", "pb", "rpc"]

"""P4Runtime server of the softswitch: a gRPC front for one ``Device``."""

try:
    from p4.v1 import p4runtime_pb2 as _p4runtime_pb2  # noqa: F401 - import check only
except TypeError as _err:  # protobuf >= 4 refusing the p4runtime wheel's old generated code
    raise ImportError("the p4runtime stubs do not import under this protobuf; regenerate them once with "
                      "'python scripts/gen_p4runtime_stubs.py'") from _err

from .device import Device, InstalledProgram, compile_pipeline, pipeline_config  # noqa: E402
from .errors import P4RuntimeError  # noqa: E402
from .service import P4RuntimeService, serve  # noqa: E402

__all__ = ["Device", "InstalledProgram", "P4RuntimeError", "P4RuntimeService", "compile_pipeline",
           "pipeline_config", "serve"]

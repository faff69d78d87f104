"""DHC codec: HG-Sketch and the dense baseline (numpy, with numba kernels; no I/O, no packets)."""

from .codec import SimulationResult, allreduce, make_worker, simulate_allreduce
from .dense import DenseWorker
from .errors import CodecError, DecodeError, InputError, MismatchError, OverflowRisk, ProtocolError
from .hgsketch import HGParams, HGSketchWorker
from .protocol import Reducer, Segment, ThreadGroup

__all__ = [
    "CodecError", "DecodeError", "DenseWorker", "HGParams", "HGSketchWorker", "InputError",
    "MismatchError", "OverflowRisk", "ProtocolError", "Reducer", "Segment", "SimulationResult",
    "ThreadGroup", "allreduce", "make_worker", "simulate_allreduce",
]

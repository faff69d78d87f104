"""Typed IR of a checked v1model program (``nodes``) and the lowering that builds it."""

from .common import Unsupported
from .lower import Lowering

__all__ = ["Lowering", "Unsupported"]

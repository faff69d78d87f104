"""DHC softswitch: a P4_16 v1model software target (front end, executor, runtime API)."""

from .api import P4CompileError, RuntimeAPIError
from .runtime import Switch, load_program

__all__ = ["Switch", "P4CompileError", "RuntimeAPIError", "load_program"]

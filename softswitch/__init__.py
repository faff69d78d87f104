"""DHC softswitch: a P4_16 v1model compiler (``compile``) and software target (``Switch``)."""

from .api import P4CompileError, RuntimeAPIError
from .compiler import CompiledProgram, compile  # noqa: A004 - the package's entry point, as re.compile
from .target.switch import Switch, load_program

__all__ = ["CompiledProgram", "P4CompileError", "RuntimeAPIError", "Switch", "compile", "load_program"]

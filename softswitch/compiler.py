"""The compiler's one entry point: P4_16 source in, a ``CompiledProgram`` out.

As p4c's front and mid end hand a back end a description of the program, ``compile`` runs the
preprocessor, the parser, the front-end passes and checks (``program.Program``), lowers the
checked program to the typed IR (``softswitch/ir``) and writes P4Info.  A ``CompiledProgram``
holds no run-time state (no tables, registers, clocks or random sources): a target builds those
when a switch is made from it (``softswitch.Switch``), so a controller or a P4Runtime server gets
P4Info and a device config without building a switch, and the program cache
(``progcache.py``) stores compiled programs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from p4.config.v1 import p4info_pb2

from . import frontend, progcache
from .api import P4CompileError, RuntimeAPIError
from .check.program import Program
from .frontend.passes import run as run_passes
from .ir import Lowering, Unsupported
from .ir import nodes as ir
from .p4info import build_p4info


@dataclass(frozen=True)
class CompiledProgram:
    """A checked P4 program, as every backend and target takes it.

    Attributes
    ----------
    program : program.Program
        The checked declarations: types, tables, actions, extern and value-set declarations,
        block parameters.
    ir : softswitch.ir.nodes.Program
        The typed IR both backends generate code from.
    p4info : p4.config.v1.p4info_pb2.P4Info
        The program's P4Info, as p4c writes it.
    warnings : tuple of str
        The warnings p4c gives for this program (``file:line:col: warning: ...``).
    source : str
        The preprocessed text (the device config a P4Runtime server takes).
    filename : str
        The name errors and warnings give for the source.
    """

    program: Program
    ir: ir.Program
    p4info: p4info_pb2.P4Info
    warnings: tuple[str, ...]
    source: str
    filename: str


def compile(source: str | os.PathLike, defines: dict[str, str] | None = None,  # noqa: A001
            include_dirs: Sequence[str] = (), *, filename: str | None = None,
            allow_include: bool = True) -> CompiledProgram:
    """Compile a P4_16 v1model program.

    Parameters
    ----------
    source : str or os.PathLike
        The program's text, or the path of its file (a ``pathlib.Path``).
    defines : dict of str to str, optional
        Preprocessor macros (``-D NAME=VALUE``).
    include_dirs : sequence of str
        Directories searched by ``#include`` before the bundled ``core.p4``/``v1model.p4``.
    filename : str, optional
        The name errors give for a text ``source`` (default ``<source>``).
    allow_include : bool
        False refuses ``#include`` of anything but the bundled headers (untrusted text).

    Returns
    -------
    CompiledProgram
        Declarations, typed IR, P4Info and warnings; no run-time state.  Results are cached on
        disk (``progcache.py``), so a second compile of the same program is fast.

    Raises
    ------
    P4CompileError
        The program is not valid P4_16 for v1model, or uses what this target does not
        implement; ``file``, ``line`` and ``col`` locate it.

    Examples
    --------
    >>> from pathlib import Path
    >>> import softswitch
    >>> prog = softswitch.compile(Path("tests/softswitch/programs/basic_ipv4.p4"))
    >>> [t.preamble.name for t in prog.p4info.tables]
    ['MyIngress.ipv4_lpm']
    >>> try:
    ...     softswitch.compile("const bit<8> X = 1 +;", filename="bad.p4")
    ... except softswitch.P4CompileError as err:
    ...     print(err.file, err.line, err.reason)
    bad.p4 1 syntax error: unexpected ';'
    """
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        return compile_preprocessed(frontend.preprocess(path, defines, include_dirs), path)
    name = filename or "<source>"
    return compile_preprocessed(frontend.preprocess_text(source, name, defines, include_dirs, allow_include),
                                name)


def compile_preprocessed(text: str, filename: str) -> CompiledProgram:
    """``compile`` of an already preprocessed text (``frontend.preprocess``'s output)."""
    with compile_errors(filename):
        return progcache.compiled(text, filename, lambda: _compile(text, filename))


@contextmanager
def compile_errors(filename: str) -> Iterator[None]:
    """A Python error while compiling (or generating code for) ``filename`` is a construct the
    checks did not anticipate: still a compile error naming the file, never a crash."""
    try:
        yield
    except RecursionError:
        raise P4CompileError("program nesting too deep", filename, 0, 0) from None
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RuntimeAPIError) as e:
        raise P4CompileError(f"unsupported program construct ({type(e).__name__}: {e})",
                             filename, 0, 0) from e


def _compile(text: str, filename: str) -> CompiledProgram:
    prog = run_passes(frontend.parse(text, filename))
    try:
        irp = Lowering(prog).run()
    except Unsupported as err:
        raise P4CompileError(f"{err} is not supported by this target", filename) from None
    return CompiledProgram(prog, irp, build_p4info(prog), tuple(prog.warnings), text, filename)


__all__ = ["CompiledProgram", "P4CompileError", "compile", "compile_errors", "compile_preprocessed"]

"""Every pass of the front end, in the order it runs (in the spirit of p4c's
``frontends/p4/frontend.cpp``): the checks and warnings p4c gives on the program as written, the
syntax-tree rewrites p4c's front end makes, then the type and semantic checks that fill the
checked program (``check/program.py``).  Each pass lives in a module named for what it does;
``PASSES`` is the one list.

The order matters where p4c's does: the warnings read the program before any rewrite (as p4c
reports them on the source), generic structs and headers are specialised again after each pass
that can make a new use of one (generic blocks, generic functions), sub-parsers are inlined
before the statements are rewritten, arguments are bound to parameters (``bind_arguments.py``:
named arguments and defaults) before ``desugar.py`` (compound assignment, loops, don't-care
arguments and side effects in p4c's order) runs, last among the rewrites.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lark import Tree

from ..check import declarations, program
from ..check.abstract_methods import check_abstract_methods
from ..warn import (
    collect,
    deprecated,
    invalid_header,
    ordering,
    parser_reach,
    shadowing,
    uninitialized,
    unused,
)
from .bind_arguments import bind_arguments
from .defaults import check_default_uses
from .desugar import Desugar
from .extern_params import bind_extern_parameters
from .generic_blocks import specialize_generic_blocks
from .generic_types import GenericTypes
from .lists import rewrite_list_values
from .mark_to_drop import deprecated_mark_to_drop
from .parser import ParsedProgram
from .specialize import specialize
from .subparsers import (
    hoist_extern_arguments,
    inline_subparsers,
    instantiate_direct_applies,
    specialize_constructors,
)


@dataclass
class FrontEnd:
    """What the passes share: the syntax tree they read and rewrite, the checked program they
    fill (its ``decls`` carry errors and warnings), the generic structs and headers taken out so
    far and the declarations the unused-declaration pass kept."""

    tree: Tree
    prog: program.Program
    gtypes: GenericTypes
    kept: set | None = None

    @property
    def err(self):
        return self.prog.decls.err


def _generic_types(fe: FrontEnd) -> None:
    fe.gtypes.run(fe.tree)


def _unused(fe: FrontEnd) -> None:
    fe.kept = unused.check(fe.tree, fe.prog.decls)


def _collect_declarations(fe: FrontEnd) -> None:
    fe.prog.decls.generic_structs = set(fe.gtypes.generic)
    fe.prog.decls.collect(fe.tree)


def _warnings(fe: FrontEnd) -> None:
    fe.prog.warnings = collect.collect(fe.tree, fe.prog.decls)


Pass = Callable[[FrontEnd], None]

#: (name, pass) in the order they run
PASSES: tuple[tuple[str, Pass], ...] = (
    # the program as written: p4c's checks and warnings before any rewrite
    ("generic structs and headers", _generic_types),
    ("abstract methods", lambda fe: check_abstract_methods(fe.tree, fe.err)),
    ("declarations", lambda fe: declarations.declarations(fe.prog.decls, fe.tree)),
    ("shadowing", lambda fe: shadowing.check(fe.tree, fe.prog.decls)),
    ("deprecated", lambda fe: deprecated.check(fe.tree, fe.prog.decls)),
    ("unused", _unused),
    ("parser reach", lambda fe: parser_reach.check(fe.tree, fe.prog.decls, fe.kept)),
    ("uninitialized", lambda fe: uninitialized.check(fe.tree, fe.prog.decls, fe.kept)),
    ("ordering", lambda fe: ordering.check(fe.tree, fe.prog.decls, fe.kept)),
    ("invalid header", lambda fe: invalid_header.check(fe.tree, fe.prog.decls, fe.kept)),
    # the rewrites p4c's front end makes
    ("generic structs and headers", _generic_types),
    ("default values", lambda fe: check_default_uses(fe.tree, fe.err)),
    ("mark_to_drop", lambda fe: deprecated_mark_to_drop(fe.tree)),
    ("list values", lambda fe: rewrite_list_values(fe.tree, fe.err)),
    ("generic blocks", lambda fe: specialize_generic_blocks(fe.tree, fe.err)),
    ("generic structs and headers", _generic_types),
    ("direct applies", lambda fe: instantiate_direct_applies(fe.tree)),
    ("extern arguments", lambda fe: hoist_extern_arguments(fe.tree)),
    ("constructor arguments", lambda fe: specialize_constructors(fe.tree)),
    ("sub-parsers", lambda fe: inline_subparsers(fe.tree, fe.err)),
    ("generic functions and constants", lambda fe: specialize(fe.tree, fe.err, fe.gtypes.origins)),
    ("generic structs and headers", _generic_types),
    ("extern parameters", lambda fe: bind_extern_parameters(fe.tree, fe.err)),
    ("argument binding", lambda fe: bind_arguments(fe.tree, fe.err)),
    ("desugar", lambda fe: Desugar(fe.tree, fe.err).run()),
    # the checks that fill the checked program
    ("void variables", lambda fe: declarations.no_void_variables(fe.prog.decls, fe.tree)),
    ("collect declarations", _collect_declarations),
    ("global declarations", lambda fe: fe.prog.declare()),
    ("functions", lambda fe: fe.prog.check_functions()),
    ("V1Switch blocks", lambda fe: fe.prog.check_pipeline(fe.tree)),
    ("v1model rules", lambda fe: fe.prog.check_v1model()),
    ("unused blocks", lambda fe: fe.prog.check_unused_blocks()),
    ("warnings", _warnings),
)


def run(parsed: ParsedProgram) -> program.Program:
    """The checked program of ``parsed`` (whose tree the passes rewrite in place)."""
    prog = program.Program(parsed)
    fe = FrontEnd(parsed.tree, prog, GenericTypes(prog.decls.err))
    for _name, run_pass in PASSES:
        run_pass(fe)
    return prog


__all__ = ["PASSES", "FrontEnd", "run"]

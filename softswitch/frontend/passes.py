"""The syntax-tree rewrites p4c's front end makes, run once before the checks, in their order
(after the places p4c refuses default values are checked, defaults.py, and list<T> values
become tuples, lists.py): generic structs and headers (generictypes.py, again after each
generic specialisation), generic blocks
(genericblocks.py), direct applies, extern instances
passed to sub-blocks and constructor arguments (subparsers.py), sub-parser inlining,
generic functions and constants (specialize.py), functions' extern parameters bound to the
instances passed (externparams.py), then statements and expressions
(desugar.py: compound assignment, loops, arguments, side effects in p4c's order)."""

from __future__ import annotations

from lark import Tree

from .defaults import check_default_uses
from .desugar import Desugar, Err
from .extern_params import bind_extern_parameters
from .generic_blocks import specialize_generic_blocks
from .generic_types import GenericTypes
from .lists import rewrite_list_values
from .mark_to_drop import deprecated_mark_to_drop
from .specialize import specialize
from .subparsers import (
    hoist_extern_arguments,
    inline_subparsers,
    instantiate_direct_applies,
    specialize_constructors,
)


def desugar(tree: Tree, err: Err, generic_types: GenericTypes | None = None) -> None:
    """Rewrite ``tree`` in place; errors are ``err(node, message)``.  ``generic_types`` holds
    the generic structs and headers taken out before the checks (its uses inside generic
    blocks and functions become concrete here)."""
    gtypes = generic_types or GenericTypes(err)
    gtypes.run(tree)
    check_default_uses(tree, err)
    deprecated_mark_to_drop(tree)
    rewrite_list_values(tree, err)
    specialize_generic_blocks(tree, err)
    gtypes.run(tree)
    instantiate_direct_applies(tree)
    hoist_extern_arguments(tree)
    specialize_constructors(tree)
    inline_subparsers(tree, err)
    specialize(tree, err, gtypes.origins)
    gtypes.run(tree)
    bind_extern_parameters(tree, err)
    Desugar(tree, err).run()


__all__ = ["desugar"]

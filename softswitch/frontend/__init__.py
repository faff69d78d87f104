"""The front end: preprocessing and parsing (``parser.py``, ``grammar.lark``), the syntax-tree
rewrites p4c's front end makes (``passes.py`` lists them in order) and what they share
(``treenav.py``, ``declared_types.py``, ``storage.py``, ``literals.py``).

The package exports the preprocess-and-parse API of ``parser.py``."""

from .parser import (
    INCLUDE_DIR,
    MAX_SOURCE_BYTES,
    LineMap,
    ParsedProgram,
    parse,
    preprocess,
    preprocess_text,
    strip_line_markers,
)

__all__ = ["INCLUDE_DIR", "MAX_SOURCE_BYTES", "LineMap", "ParsedProgram", "parse", "preprocess",
           "preprocess_text", "strip_line_markers"]

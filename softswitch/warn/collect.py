"""Warnings p4c (1.2.5, BMv2 back end) gives for a program it accepts, for the cases that matter here.

- ``[--Wwarn=unused]`` ``'K' is unused`` (at its name; ``K`` its ``@name`` if it has one) on
  every top-level constant without ``@noWarn("unused")``: p4c 1.2.5 folds a constant into each
  use and then reports the declaration itself as unused;
- ``[--Wwarn=mismatch]`` "size N specified for table with constant entries": the table's
  ``size`` is ignored, its entries are all it will ever hold;
- the warnings the checks found on the way (``Decls.warn``): a literal that does not fit its
  type (``[--Wwarn=mismatch]``/``[--Wwarn=overflow]``; p4c truncates it, and so does the
  softswitch), duplicate const entries and ternary entries covered by an earlier one
  (``[--Wwarn=table-keys]``, p4c's CheckTableEntries).

Nothing is reported inside the system headers, nor inside a declaration or block annotated
``@noWarn("kind")`` for that kind (p4c's ``Visitor::warn`` looks for it on the node it warns
about and on every node around it).  Each warning is
``file:line:col: [--Wwarn=kind] warning: text``; the program still loads.
"""

from __future__ import annotations

from pathlib import Path

from lark import Token, Tree

from ..check.decls import ann_dict
from ..frontend.parser import INCLUDE_DIR

_SYSTEM = Path(INCLUDE_DIR).resolve()


def collect(tree: Tree, decls) -> list[str]:
    """The warnings of one parsed program, in source order."""
    out: list[tuple[int, str]] = []
    for node in tree.children:
        if isinstance(node, Tree) and node.data == "const_decl":
            ann = ann_dict(node.children[0], decls)
            if "unused" not in ann.get("noWarn", []):
                name = (ann.get("name") or [str(node.children[2].children[0])])[0]
                out.append(_at(decls, node.children[2], "unused", f"'{name}' is unused"))
    for table in tree.find_data("table_decl"):
        props = table.children[2:]
        const = any(p.data == "tp_entries" and p.children[1] is not None for p in props)
        for p in props:
            if const and p.data == "tp_generic" and str(p.children[1].children[0]) == "size":
                size = p.children[2]
                text = "".join(str(t) for t in size.scan_values(lambda v: isinstance(v, Token))) \
                    if isinstance(size, Tree) else str(size)
                msg = f"size {text} specified for table with constant entries"
                out.append(_at(decls, p, "mismatch", msg))
    quiet = _silenced(tree)
    for (line, col, kind, text), node in decls.found_warnings.items():
        if not any(kind == k and start <= (line, col) <= end for start, end, k in quiet):
            out.append(_at(decls, node, kind, text))
    # as p4c, nothing is reported about its own system headers (core.p4, v1model.p4)
    return [w for _line, w in sorted(out, key=lambda x: x[0]) if w]


def _silenced(tree: Tree) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """(start, end, kind) of each declaration or block annotated ``@noWarn("kind")``."""
    out = []
    for t in tree.iter_subtrees():
        anns = t.children[0] if t.children else None
        if not (isinstance(anns, Tree) and anns.data == "annotations") or t.meta.empty:
            continue
        for a in anns.children:
            body = a.children[1] if len(a.children) > 1 else None
            if str(a.children[0]) != "@noWarn" or not isinstance(body, Tree):
                continue
            for v in body.children:
                if isinstance(v, Tree) and v.data == "string_lit":
                    out.append(((t.meta.line, t.meta.column), (t.meta.end_line, t.meta.end_column),
                                str(v.children[0])[1:-1]))
    return out


def _at(decls, node: Tree, kind: str, text: str) -> tuple[int, str]:
    f, ln = decls.lines.where(node.meta.line)
    if Path(f).resolve().is_relative_to(_SYSTEM):
        return node.meta.line, ""
    return node.meta.line, f"{f}:{ln}:{node.meta.column}: [--Wwarn={kind}] warning: {text}"

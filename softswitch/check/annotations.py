"""p4c's checks on annotations, on the syntax tree: what its parser and ``ParseAnnotations``
reject whether or not the annotated declaration is used.

- a structured annotation (``@a[...]``) appears at most once on one declaration, and no
  unstructured annotation there has its name (P4_16 spec, "Structured annotations");
- a structured annotation's values are compile-time known values: literals, names and
  arithmetic on them, not list or structure expressions;
- ``@name``, ``@noWarn`` and ``@deprecated`` take one string (a literal or a ``++`` of
  literals; p4c parses their bodies).
"""

from __future__ import annotations

from lark import Tree

#: annotations whose body p4c parses as exactly one string literal
_ONE_STRING = frozenset({"name", "noWarn", "deprecated"})
_NOT_A_VALUE = frozenset({"list_expr", "struct_expr", "annot_type"})  # a type: p4c's parse error


def string_value(e) -> str | None:
    """The text of a string literal or of a ``++`` concatenation of them (P4_16 1.2.4), else
    None."""
    if isinstance(e, Tree) and e.data == "string_lit":
        return str(e.children[0])[1:-1]
    if isinstance(e, Tree) and e.data == "binop" and str(e.children[1]) == "++":
        a, b = string_value(e.children[0]), string_value(e.children[2])
        return None if a is None or b is None else a + b
    return None


def _values(body) -> list:
    """The expressions of an annotation body (key-value pairs give their value)."""
    if not isinstance(body, Tree):
        return []
    return [c.children[-1] if isinstance(c, Tree) and c.data == "annot_kv" else c
            for c in body.children if c is not None]


def _one_node(ctx, anns: Tree) -> None:
    seen: set[str] = set()
    plain = {str(a.children[0])[1:] for a in anns.children
             if isinstance(a, Tree) and a.data == "annotation"}
    for a in anns.children:
        if not isinstance(a, Tree):
            continue
        name = str(a.children[0])[1:]
        body = a.children[1] if len(a.children) > 1 else None
        if a.data == "structured_annotation":
            if name in seen:
                raise ctx.err(a, f"@{name}: duplicate structured annotation (a structured "
                                 "annotation may appear only once on a declaration)")
            seen.add(name)
            if name in plain:
                raise ctx.err(a, f"@{name}: a structured annotation cannot share its name with "
                                 "an unstructured one on one declaration")
            for v in _values(body):
                subtrees = v.iter_subtrees_topdown() if isinstance(v, Tree) else ()
                bad = next((t for t in subtrees if t.data in _NOT_A_VALUE), None)
                if bad is not None:
                    raise ctx.err(bad, f"@{name}: illegal structured annotation value: not a "
                                       "compile-time known value (literals, names and "
                                       "arithmetic only)")
        elif name in _ONE_STRING and body is not None:
            vals = _values(body)
            if len(vals) != 1 or string_value(vals[0]) is None:
                raise ctx.err(a, f"@{name}: expected one string literal argument")


_TYPE_DECLS = {"struct_decl", "header_decl", "header_union_decl", "typedef_decl", "enum_decl",
               "serenum_decl", "extern_decl"}


def _names_of_types(tree: Tree) -> set[str]:
    """Top-level type names: an identifier naming one is a type, not a value."""
    out = set()
    for d in tree.children:
        if isinstance(d, Tree) and d.data in _TYPE_DECLS:
            nm = next((c for c in d.children if isinstance(c, Tree) and c.data == "name"), None)
            if nm is not None:
                out.add(str(nm.children[0]))
    return out


def _no_types_as_values(ctx, anns: Tree, decl: Tree, types: set[str]) -> None:
    """p4c: a type (a declared one, or a type parameter of the annotated declaration) in a
    structured annotation's value is "Type cannot be used here, expecting an expression"."""
    tps = next((c for c in decl.children if isinstance(c, Tree) and c.data == "type_params"), None)
    here = types | ({str(n.children[0]) for n in tps.children if isinstance(n, Tree)} if tps else set())
    for a in anns.children:
        if not (isinstance(a, Tree) and a.data == "structured_annotation"):
            continue
        for v in _values(a.children[1] if len(a.children) > 1 else None):
            for t in v.iter_subtrees_topdown() if isinstance(v, Tree) else ():
                if t.data == "ident" and str(t.children[-1]) in here:
                    raise ctx.err(t, f"{t.children[-1]}: Type cannot be used here, expecting an "
                                     "expression.")


def annotations(ctx, tree: Tree) -> None:
    """Run the checks of the module docstring on every annotation list of the program."""
    types = _names_of_types(tree)
    for decl in tree.iter_subtrees():
        anns = decl.children[0] if decl.children else None
        if isinstance(anns, Tree) and anns.data == "annotations":
            _no_types_as_values(ctx, anns, decl, types)
    for anns in tree.find_data("annotations"):
        _one_node(ctx, anns)

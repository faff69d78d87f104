"""Just enough of a program's types for the data-flow warnings (``uninit.py``, ``validity.py``):
which values are headers, structs (with the types of their fields), stacks and unions -- the
shape of p4c's storage locations.  Read from the syntax tree as written; a type this module
cannot resolve (a type variable, a generic struct) is None and the callers follow nothing of it.
"""

from __future__ import annotations

from lark import Tree

from .treenav import name_of

Type = tuple  # ("h", name) header, ("st", name) struct, ("u", name) union, ("stack", elem), ("s",)


class Types:
    """Just enough of the program's types: which values are headers, structs (and their fields),
    stacks and unions."""

    def __init__(self, tree: Tree):
        self.decls: dict[str, Tree] = {}
        for d in tree.children:
            if isinstance(d, Tree) and d.data in ("header_decl", "struct_decl", "header_union_decl"):
                self.decls[name_of(d.children[1])] = d
            elif isinstance(d, Tree) and d.data in ("typedef_decl", "enum_decl", "ser_enum_decl",
                                                    "extern_decl", "parser_type_decl",
                                                    "control_type_decl", "parser_decl", "control_decl"):
                nm = d.children[-1] if d.data == "typedef_decl" else \
                    d.children[2] if d.data == "ser_enum_decl" else d.children[1]
                self.decls[name_of(nm)] = d

    def of(self, t, depth: int = 0) -> Type | None:
        if not isinstance(t, Tree) or depth > 32:
            return None
        if t.data.startswith("t_"):
            return ("s",)
        if t.data == "stack_type":
            elem = self.of(t.children[0], depth + 1)
            return ("stack", elem) if elem is not None else None
        if t.data == "specialized_type":
            base = self.decls.get(str(t.children[0].children[-1]))
            return ("s",) if base is not None and base.data == "extern_decl" else None
        if t.data != "type_name":
            return None
        d = self.decls.get(str(t.children[-1]))
        if d is None:
            return None
        if d.data == "typedef_decl":
            return self.of(d.children[2], depth + 1)
        kind = {"header_decl": "h", "struct_decl": "st", "header_union_decl": "u"}.get(d.data)
        if kind is None:
            return ("s",)
        if kind == "st" and any(isinstance(c, Tree) and c.data == "type_params" for c in d.children):
            return None
        return (kind, name_of(d.children[1]))

    def fields(self, t: Type) -> dict[str, Type | None]:
        d = self.decls[t[1]]
        out: dict[str, Type | None] = {}
        for f in d.children[2:]:
            if isinstance(f, Tree) and f.data == "field":
                out[name_of(f.children[2])] = self.of(f.children[1])
            elif isinstance(f, Tree) and f.data == "field_arr":
                elem = self.of(f.children[1])
                out[name_of(f.children[2])] = ("stack", elem) if elem is not None else None
        return out


__all__ = ["Type", "Types"]

"""Generic structs, headers and header unions (P4_16 1.2.2: ``struct S<T> { T f; }``)
specialised per use, as p4c's SpecializeGenericTypes does, so no later stage sees a type
parameter on a struct-like type:

- every use ``S<bit<8>>`` whose type arguments hold no type variable becomes a plain struct
  (header, union) ``S_0`` -- a copy of ``S`` with ``T`` replaced, named as p4c names it (the
  base name and a counter per base, skipping names the program uses), declared before the
  top-level declaration of its first use; uses with the same arguments (through typedefs too)
  share one copy; nested uses (``S<S<bit<4>>>``, a field ``G<T>`` of a generic type) are
  specialised inner first;
- a use whose arguments hold a type variable (``S<T>`` in a generic function or control) is
  left for a later run, after those are specialised (``passes.py`` runs this again);
- the generic declarations go away; naming one without type arguments, with the wrong number
  of them, or recursively is an error.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from lark import Token, Tree

from ..api import P4CompileError
from .declared_types import type_text
from .treenav import name_of

Err = Callable[[object, str], P4CompileError]
_GENERIC = {"generic_struct_decl": "struct_decl", "generic_header_decl": "header_decl",
            "generic_header_union_decl": "header_union_decl"}
_KIND = {"generic_struct_decl": "struct", "generic_header_decl": "header",
         "generic_header_union_decl": "header_union"}


def _tparams(node: Tree) -> list[str]:
    """Names of the type parameters a declaration introduces (none when not generic)."""
    for c in node.children:
        if isinstance(c, Tree) and c.data == "type_params":
            return [name_of(x) for x in c.children if isinstance(x, Tree)]
    return []


def _subst(node, values: dict[str, Tree]):
    if not isinstance(node, Tree):
        return node
    if node.data == "type_name" and str(node.children[-1]) in values:
        return copy.deepcopy(values[str(node.children[-1])])
    node.children = [_subst(c, values) for c in node.children]
    return node


class GenericTypes:
    """The generic struct-like declarations of one program and their specialisations."""

    def __init__(self, err: Err):
        self.err = err
        self.generic: dict[str, Tree] = {}
        self.specs: dict[tuple[str, str], str] = {}
        self.counters: dict[str, int] = {}
        self.taken: set[str] = set()
        self.typedefs: dict[str, Tree] = {}
        self.pending: list[Tree] = []
        self.busy: list[tuple[str, str]] = []
        self.origins: dict[str, Tree] = {}  # S_0 -> S<bit<8>> (for generic-function inference)

    def run(self, tree: Tree) -> None:
        """Specialise every use in ``tree`` that is concrete now (see the module docstring)."""
        if not self.generic and not any(isinstance(d, Tree) and d.data in _GENERIC
                                        for d in tree.children):
            return
        self.taken |= {str(t) for t in tree.scan_values(lambda v: isinstance(v, Token))}
        out: list = []
        for d in tree.children:
            if isinstance(d, Tree) and d.data in _GENERIC:
                name = name_of(d.children[1])
                if name in self.generic:
                    raise self.err(d.children[1], f"{name}: duplicate declaration")
                tps = _tparams(d)
                dup = next((t for i, t in enumerate(tps) if t in tps[:i]), None)
                if dup is not None:
                    raise self.err(d.children[2], f"duplicate type parameter {dup}")
                self.generic[name] = d
                continue
            self.pending = []
            d = self.walk(d, frozenset())
            out += self.pending + [d]
            if isinstance(d, Tree) and d.data == "typedef_decl" and str(d.children[1]) == "typedef":
                self.typedefs[name_of(d.children[3])] = d.children[2]
        tree.children = out

    def walk(self, node, tvars: frozenset[str]):
        if not isinstance(node, Tree):
            return node
        own = _tparams(node)
        if own:
            tvars = tvars | set(own)
        if node.data == "specialized_type" and name_of(node.children[0]) in self.generic \
                and name_of(node.children[0]) not in tvars:
            args = node.children[-1]
            args.children = [self.walk(a, tvars) for a in args.children]
            if self._open(args, tvars):
                return node
            return Tree("type_name", [Token("TYPE_IDENTIFIER", self.specialise(node))], node.meta)
        if node.data == "type_name" and str(node.children[-1]) in self.generic \
                and str(node.children[-1]) not in tvars:
            name = str(node.children[-1])
            n = len(_tparams(self.generic[name]))
            raise self.err(node, f"{name} is generic: it needs {n} type argument{'s' * (n > 1)} "
                                 f"({name}<...>)")
        node.children = [self.walk(c, tvars) for c in node.children]
        return node

    @staticmethod
    def _open(args: Tree, tvars: frozenset[str]) -> bool:
        """Does a type argument still hold a type variable or an unspecialised generic use?"""
        return any(isinstance(t, Tree) and (t.data == "type_name" and str(t.children[-1]) in tvars
                                            or t.data == "specialized_type")
                   for a in args.children if isinstance(a, Tree) for t in a.iter_subtrees())

    def _key(self, t, depth: int = 0) -> str:
        """Canonical text of a type argument, typedefs resolved (p4c: equivalent types)."""
        return type_text(self._resolved(t, depth))

    def _resolved(self, t, depth: int = 0):
        if not isinstance(t, Tree) or depth > 64:
            return t
        if t.data == "type_name" and str(t.children[-1]) in self.typedefs:
            return self._resolved(self.typedefs[str(t.children[-1])], depth + 1)
        return Tree(t.data, [self._resolved(c, depth) for c in t.children], t.meta)

    def _copy_of(self, t: Tree) -> str | None:
        """The generic type a type node uses: ``S<...>`` itself or a copy made of it."""
        if t.data == "specialized_type":
            return name_of(t.children[0])
        origin = self.origins.get(str(t.children[-1])) if t.data == "type_name" else None
        return name_of(origin.children[0]) if origin is not None else None

    def specialise(self, use: Tree) -> str:
        """The name of the copy of a generic type for a concrete use (made when new)."""
        base = name_of(use.children[0])
        decl = self.generic[base]
        tps = _tparams(decl)
        args = [a for a in use.children[-1].children if a is not None]
        if len(args) != len(tps):
            raise self.err(use, f"{base} has {len(tps)} type parameter{'s' * (len(tps) > 1)}, "
                                f"{len(args)} type argument{'s' * (len(args) > 1)} given")
        for a in args:
            if a.data == "t_dontcare":
                raise self.err(a, f"{base}: a type argument of a generic type cannot be _")
        for a in args:  # p4c's TypeInference: a generic type is not its own type argument
            r = self._resolved(a)
            if isinstance(r, Tree) and self._copy_of(r) == base:
                raise self.err(use, f"{base}: contains self '{_KIND.get(decl.data, 'type')} {base}' "
                                    "as type argument")
        key = (base, ", ".join(self._key(a) for a in args))
        if key in self.specs:
            return self.specs[key]
        if key in self.busy:
            raise self.err(use, f"{base}: recursive type {base}<{key[1]}>")
        k = self.counters.get(base, 0)
        while f"{base}_{k}" in self.taken:
            k += 1
        self.counters[base] = k + 1
        name = f"{base}_{k}"
        self.taken.add(name)
        new = copy.deepcopy(decl)
        new.data = _GENERIC[decl.data]
        new.children = [new.children[0], Tree("name", [Token("TYPE_IDENTIFIER", name)], decl.meta)] + [
            _subst(c, dict(zip(tps, args, strict=True))) for c in new.children[3:]]
        self.busy.append(key)
        new = self.walk(new, frozenset())
        self.busy.pop()
        self.specs[key] = name
        self.origins[name] = Tree("specialized_type", [use.children[0], Tree("type_args", args)], use.meta)
        self.pending.append(new)
        return name


__all__ = ["GenericTypes"]

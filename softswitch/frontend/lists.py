"""Values of type ``list<T>`` (P4_16 1.2.5) besides a for-in collection, rewritten on the syntax
tree before the other passes.

A variable or constant of type ``list<T>`` gets its length from its initialiser (a list
expression, cast to ``list<T>`` or not, or another such list): it becomes a ``tuple<T, ..., T>``
of that length (a struct to every later stage, as tuples are), so assignment of a list of the
same length and ``==`` work as on tuples, and ``for (T x in l)`` iterates over ``l``'s elements
(read once, before the first iteration, as for a list expression).  A ``(list<T>){...}`` cast
outside a for-in collection becomes the cast to that tuple.  What has no length known where it
is declared -- a parameter or function result of type ``list<T>``, a variable without an
initialiser -- is refused (p4c accepts them), and so are what p4c refuses: indexing a list (a
list has no ``[i]``; a tuple does) and casting anything but a list expression to ``list<T>``."""

from __future__ import annotations

import copy

from lark import Token, Tree

#: declarations: (child index of the type, child index of the name, child index of the value)
_DECLS = {"var_decl": (1, 2, 3), "const_decl": (1, 2, 3), "param": (2, 3, None)}


def _mk(data: str, children: list, like) -> Tree:
    return Tree(data, children, like.meta if isinstance(like, Tree) else None)


def _is_list_type(t) -> bool:
    return isinstance(t, Tree) and t.data == "list_type"


def _name(n) -> str:
    return str(n.children[0]) if isinstance(n, Tree) else str(n)


class _Lists:
    def __init__(self, err):
        self.err = err

    def walk(self, node, env: dict[str, tuple[Tree, int]]) -> None:
        """Rewrite ``node``'s children in order; ``env`` maps list variables in scope to their
        element type and length (a declaration adds to it for the siblings after it)."""
        if not isinstance(node, Tree):
            return
        if node.data == "for_each_stmt":
            self._for_each(node, env)
        if node.data == "function_decl" and _is_list_type(node.children[1]):
            raise self.err(node.children[2], "a function result of type list<T> is not supported "
                                             "by this target (its length is not known)")
        inner = dict(env)
        for i, c in enumerate(node.children):
            if not isinstance(c, Tree):
                continue
            if c.data == "index" and self._list_of(c.children[0], inner) is not None \
                    and not getattr(c, "list_element", False):
                raise self.err(c, "a value of type list<T> cannot be indexed (a tuple can)")
            if c.data == "cast" and _is_list_type(c.children[0]) and node.data != "for_each_stmt":
                node.children[i] = c = self._cast(c, inner)
            if c.data in _DECLS:
                self._declare(c, inner)
            elif c.data == "params":
                for p in c.children:
                    if isinstance(p, Tree):
                        self._declare(p, inner)
            self.walk(c, inner)
            if c.data in _DECLS:  # its value was walked with the name not yet declared
                self._bind(c, inner)

    def _declare(self, d: Tree, env: dict) -> None:
        ti, ni, vi = _DECLS[d.data]
        t = d.children[ti]
        if not _is_list_type(t):
            env.pop(_name(d.children[ni]), None)  # a declaration of another type shadows a list
            return
        if vi is None:
            raise self.err(d, f"parameter {_name(d.children[ni])} of type list<T> is not supported "
                              "by this target (its length is not known where it is declared)")
        value = d.children[vi]
        n = self._length(value, env)
        if n is None:
            raise self.err(d, f"{_name(d.children[ni])}: a variable of type list<T> needs a list "
                              "expression (or a list) as its initialiser on this target")
        d.children[ti] = self._tuple(t.children[0], n, t)
        d.list_elem = (t.children[0], n)  # type: ignore[attr-defined]

    def _bind(self, d: Tree, env: dict) -> None:
        ni = _DECLS[d.data][1]
        if hasattr(d, "list_elem"):
            env[_name(d.children[ni])] = d.list_elem

    def _length(self, value, env) -> int | None:
        if isinstance(value, Tree) and value.data == "cast" and _is_list_type(value.children[0]):
            value = value.children[1]
        if isinstance(value, Tree) and value.data == "list_expr":
            return len([x for x in value.children[0].children if x is not None])
        known = self._list_of(value, env)
        return known[1] if known is not None else None

    def _list_of(self, e, env) -> tuple[Tree, int] | None:
        if isinstance(e, Tree) and e.data == "ident":
            return env.get(str(e.children[-1]))
        return None

    def _tuple(self, elem: Tree, n: int, like) -> Tree:
        return _mk("tuple_type", [Tree("type_args", [copy.deepcopy(elem) for _ in range(n)])], like)

    def _cast(self, c: Tree, env) -> Tree:
        value = c.children[1]
        if not (isinstance(value, Tree) and value.data == "list_expr"):
            raise self.err(c, "casts to list not supported (only a list expression may be cast to "
                              "list<T>)")
        n = self._length(value, env)
        return _mk("cast", [self._tuple(c.children[0].children[0], n, c), value], c)

    def _for_each(self, s: Tree, env) -> None:
        """``for (T x in l)`` over a list variable: over the list expression of its elements."""
        coll = s.children[3]
        if isinstance(coll, Tree) and coll.data == "cast" and _is_list_type(coll.children[0]):
            self._cast(coll, env)  # checks that it casts a list expression (left as it is)
            return
        known = self._list_of(coll, env)
        if known is None:
            return
        elem, n = known
        items = [_mk("index", [copy.deepcopy(coll), Tree("int_lit", [Token("INTEGER", str(i))])], coll)
                 for i in range(n)]
        for it in items:
            it.list_element = True  # type: ignore[attr-defined]  # not the user's indexing
        s.children[3] = _mk("cast", [_mk("list_type", [copy.deepcopy(elem)], coll),
                                     _mk("list_expr", [Tree("expr_list", items)], coll)], coll)


def rewrite_list_values(tree: Tree, err) -> None:
    """Rewrite the ``list<T>`` values of ``tree`` in place (errors are ``err(node, message)``)."""
    _Lists(err).walk(tree, {})

"""``select`` on a value of type ``error`` or ``bool``, rewritten before both generators (they
compare select keys as bit strings, a ``bool`` key as ``bit<1>``).

The labels ``true``/``false`` become ``1w1``/``1w0`` (only a ``bool`` key can be matched by
them, and both generators turn a ``bool`` key into ``bit<1>``).

A key ``e`` matched by the labels ``error.A``, ``error.B`` (in any case) becomes the keys
``(bit<1>) (e == error.A)``, ``(bit<1>) (e == error.B)``; a case labelled ``error.A`` there
matches ``(1w1, _)``, a ``default``/``_`` label ``(_, _)``.  At most one of the new keys is
true, so the first case that matched before is the first that matches after.  Error values
can only be matched exactly (P4_16: ``error`` supports only ``==`` and ``!=``), so a mask or
range on them is an error.
The key expression is repeated once per label; it is free of side effects by then (desugar.py
hoists calls out of select keys first).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from lark import Token, Tree

from ..api import P4CompileError

Err = Callable[[object, str], P4CompileError]
#: the token type of a ``1w1``/``1w0`` label that was ``true``/``false`` (the parser's checks
#: tell it from a ``bit<1>`` label, which a ``bool`` key does not match)
BOOL_LABEL = "BOOL_LABEL"


def _items(ks: Tree) -> list[Tree] | None:
    """The per-key labels of one case, or None for a case that matches everything."""
    if ks.data == "ks_default":
        return None
    return list(ks.children) if ks.data == "ks_tuple" else [ks]


def _error_label(item: Tree) -> str | None:
    if item.data == "ks_value" and isinstance(item.children[0], Tree) \
            and item.children[0].data == "error_member":
        return str(item.children[0].children[-1].children[0])
    return None


def rewrite_select(sel: Tree, err: Err) -> None:
    """Rewrite one ``select_expr`` in place: bool labels, keys matched by ``error.X`` labels."""
    for ks in sel.find_data("ks_value"):
        v = ks.children[0]
        if isinstance(v, Tree) and v.data in ("true_lit", "false_lit"):
            ks.children[0] = _bit1("1w1" if v.data == "true_lit" else "1w0", v, BOOL_LABEL)
    keys = list(sel.children[0].children)
    cases = [c for c in sel.children[1:] if isinstance(c, Tree)]
    rows = [_items(c.children[0]) for c in cases]
    if not any(r is not None and any(_error_label(i) for i in r) for r in rows):
        return
    new_keys: list = []
    new_rows: list[list | None] = [None if r is None else [] for r in rows]
    for k, key in enumerate(keys):
        labels: list[str] = []
        for r in rows:
            name = _error_label(r[k]) if r is not None and k < len(r) else None
            if name is not None and name not in labels:
                labels.append(name)
        if not labels:
            new_keys.append(key)
            for r, nr in zip(rows, new_rows, strict=True):
                if r is not None and nr is not None and k < len(r):
                    nr.append(r[k])
            continue
        for lab in labels:
            eq = _mk("binop", [copy.deepcopy(key), Token("EQ", "=="), _error_member(lab, key)], key)
            new_keys.append(_mk("cast", [Tree("t_bit", [Token("INTEGER", "1")]), eq], key))
        for r, nr in zip(rows, new_rows, strict=True):
            if r is None or nr is None or k >= len(r):
                continue
            item = r[k]
            name = _error_label(item)
            if item.data == "ks_default":
                nr += [_mk("ks_default", [], item) for _ in labels]
            elif name is None:
                raise err(item, "a select key of type error takes only exact values (error.X "
                                "labels) or default")
            else:
                nr += [_mk("ks_value", [_bit1("1w1", item)], item) if lab == name
                       else _mk("ks_default", [], item) for lab in labels]
    sel.children[0].children = new_keys
    for case, nr in zip(cases, new_rows, strict=True):
        if nr is not None:
            case.children[0] = nr[0] if len(nr) == 1 else _mk("ks_tuple", nr, case.children[0])


def _error_member(name: str, like) -> Tree:
    return _mk("error_member", [Token("ERROR", "error"), Tree("name", [Token("IDENTIFIER", name)])], like)


def _bit1(text: str, like, kind: str = "INTEGER") -> Tree:
    return _mk("int_lit", [Token(kind, text)], like)


def _mk(data: str, children: list, like) -> Tree:
    return Tree(data, children, like.meta if isinstance(like, Tree) else None)

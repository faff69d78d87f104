"""P4_16 1.2.5 ``for`` loops rewritten to one loop form before the checks (p4c's BMv2 back end
runs them at run time with jumps; bounds need not be constants).

Every form becomes ``{ init; loop_stmt(cond, body, update) }``: the loop tests ``cond`` (absent:
always true) before every iteration, runs ``body``, then the ``update`` statements; ``continue``
goes to ``update``, ``break`` leaves the loop.  ``for (T x in a .. b)`` evaluates ``a`` and ``b``
once and visits ``a``, ``a + 1``, ... ``b`` (none when ``a > b``) through a hidden counter, so
``b`` at the largest value of ``T`` ends the loop instead of wrapping, and assigning ``x`` in the
body does not change the iteration.  ``for (T x in {a, b})`` over a list expression (cast to
``list<T>`` or not) evaluates the items once, before the first iteration; ``for (T x in stack)``
gives ``x`` each element of a header stack in index order (a copy: writes to ``x`` do not change
the stack).  Condition calls with out/inout arguments are hoisted inside the loop, before the
test, so they run once per test as written.
"""

from __future__ import annotations

from lark import Token, Tree


def _mk(data: str, children: list, like) -> Tree:
    meta = like.meta if isinstance(like, Tree) else None
    return Tree(data, children, meta)


def _ident(name: str, like) -> Tree:
    return _mk("ident", [Token("IDENTIFIER", name)], like)


def _var(name: str, t, init, like) -> Tree:
    return _mk("var_decl", [None, t, Tree("name", [Token("IDENTIFIER", name)]), init], like)


def _binop(a, tok: str, op: str, b, like) -> Tree:
    return _mk("binop", [a, Token(tok, op), b], like)


def _simple(s: Tree) -> Tree:
    """An init/update item of a three-clause ``for`` as the statement it stands for."""
    if s.data == "for_var":
        t, nm, init = s.children
        return _mk("var_decl", [None, t, nm, init], s)
    return s


def three_clause(ds, s: Tree) -> list:
    """``for (init; cond; update) body`` -> ``{ init; loop_stmt }`` (desugared by ``ds``)."""
    _ann, inits, cond, updates, body = s.children
    items = [_simple(c) for c in (inits.children if inits is not None else []) if c is not None]
    ups = [_simple(c) for c in (updates.children if updates is not None else []) if c is not None]
    return [_mk("block", items + [_mk("loop_stmt", [cond, body, _mk("block", ups, s)], s)], s)]


def range_loop(ds, s: Tree) -> list:
    """``for (T x in a .. b) body`` -> a three-clause loop over a hidden counter."""
    _ann, t, nm, lo_e, hi_e, body = s.children
    lo, hi, go, i = ds.fresh(), ds.fresh(), ds.fresh(), ds.fresh()
    decls = [_var(lo, t, lo_e, s), _var(hi, t, hi_e, s),
             _var(go, _mk("t_bool", [], s), _binop(_ident(lo, s), "LE", "<=", _ident(hi, s), s), s),
             _var(i, t, _ident(lo, s), s)]
    inner = _mk("block", [_mk("var_decl", [None, t, nm, _ident(i, s)], s), body], s)
    step = _mk("if_stmt", [
        _binop(_ident(i, s), "EQ", "==", _ident(hi, s), s),
        _mk("block", [_mk("assign_stmt", [_ident(go, s), _mk("false_lit", [], s)], s)], s),
        _mk("block", [_mk("assign_stmt", [_ident(i, s), _binop(
            _ident(i, s), "PLUS", "+", _mk("int_lit", [Token("INTEGER", "1")], s), s)], s)], s)], s)
    loop = _mk("loop_stmt", [_ident(go, s), inner, _mk("block", [step], s)], s)
    return [_mk("block", decls + [loop], s)]


def _int(v: int, like) -> Tree:
    return _mk("int_lit", [Token("INTEGER", str(v))], like)


def _bit32(like) -> Tree:
    return _mk("t_bit", [Token("INTEGER", "32")], like)


def _counted(s: Tree, k: str, decls: list, bound, pick: list, body) -> list:
    """``{ decls; for (bit<32> k = 0; k < bound; k = k + 1) { pick; body } }``."""
    inner = _mk("block", pick + [body], s)
    step = _binop(_ident(k, s), "PLUS", "+", _int(1, s), s)
    loop = _mk("loop_stmt", [_mk("lt", [_ident(k, s), bound], s), inner,
                             _mk("block", [_mk("assign_stmt", [_ident(k, s), step], s)], s)], s)
    return [_mk("block", decls + [_var(k, _bit32(s), _int(0, s), s), loop], s)]


def _list_items(coll) -> list | None:
    """The items of a list expression (under a ``(list<T>)`` cast or not), else None."""
    if isinstance(coll, Tree) and coll.data == "cast" and isinstance(coll.children[0], Tree) \
            and coll.children[0].data == "list_type":
        coll = coll.children[1]
    if not (isinstance(coll, Tree) and coll.data == "list_expr"):
        return None
    kids = coll.children
    if kids and isinstance(kids[0], Tree) and kids[0].data == "expr_list":
        kids = kids[0].children
    return [c for c in kids if c is not None]


def each_loop(ds, s: Tree) -> list:
    """``for (T x in {a, b, ...})`` (a list expression, cast to ``list<T>`` or not): the items
    evaluated once, in order, before the first iteration; ``for (T x in stack)``: ``x`` a copy
    of each element in index order."""
    _ann, t, nm, coll, body = s.children
    k = ds.fresh()
    items = _list_items(coll)
    if items is None:  # a header stack: its size and a run-time index
        size = _mk("member", [coll, Tree("name", [Token("IDENTIFIER", "size")])], s)
        pick = [_mk("var_decl", [None, t, nm, _mk("index", [coll, _ident(k, s)], s)], s)]
        return _counted(s, k, [], size, pick, body)
    temps = [ds.fresh() for _ in items]
    decls = [_var(tmp, t, item, s) for tmp, item in zip(temps, items, strict=True)]
    chain = None
    for i in reversed(range(len(items))):
        x = _ident(str(nm.children[0]), s)
        asg = _mk("block", [_mk("assign_stmt", [x, _ident(temps[i], s)], s)], s)
        test = _binop(_ident(k, s), "EQ", "==", _int(i, s), s)
        chain = asg if chain is None else _mk("if_stmt", [test, asg, chain], s)
    pick = [_mk("var_decl", [None, t, nm, None], s)] + ([chain] if chain is not None else [])
    return _counted(s, k, decls, _int(len(items), s), pick, body)


def desugar_loop(ds, s: Tree) -> Tree:
    """Desugar the parts of a ``loop_stmt`` with ``ds`` (a ``desugar.Desugar``); a condition
    with hoisted calls moves into the body as ``if (!cond) break;`` after them."""
    cond, body, update = s.children
    ds.block(update)
    body = ds.sub(body)
    if cond is None:
        s.children = [None, body, update]
        return s
    pre: list = []
    cond = ds.expr(cond, pre)
    if not pre:
        s.children = [cond, body, update]
        return s
    test = _mk("if_stmt", [_mk("lnot", [cond], cond), _mk("break_stmt", [], s), None], s)
    s.children = [None, _mk("block", pre + [test, body], s), update]
    return s


__all__ = ["desugar_loop", "each_loop", "range_loop", "three_clause"]

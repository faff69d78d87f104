"""Source rewrites p4c's front end makes before code generation, done once on the syntax tree
so that both generators (python and IR -> C) see only plain statements:

- compound assignment ``x op= e`` becomes ``x = x op e`` (p4c's RemoveOpAssign; an lvalue has
  no side effects, so evaluating it twice is safe);
- ``for`` loops of both forms become one ``loop_stmt`` (loops.py);
- a don't-care ``_`` for an ``out`` parameter becomes a fresh temporary (p4c's DontcareArgs;
  named arguments and defaults were made positional before, by ``bind_arguments.py``);
- a call of a function with ``out``/``inout`` parameters inside an expression is hoisted into
  a temporary before the statement, left to right, with the operands evaluated before it
  saved first and ``&&``/``||``/``?:`` short-circuits kept (p4c's SideEffectOrdering); so is
  ``t.apply().hit``/``.miss`` of a table; control/parser variable initialisers with effects
  move to the start of ``apply``/the start state; ``select`` keysets go to selects.py.

passes.py runs this after the other tree rewrites (sub-parsers, generic blocks, constants).

Temporaries are ``var_decl`` nodes with the callee's declared type, ``hoist_decl`` nodes (a
local whose type is the type of its initial value) for saved operands, or ``typed_decl`` nodes
(a local typed like an expression that is not evaluated) for the value of a ``?:``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from lark import Token, Tree

from ..api import P4CompileError
from ..check.statements import text_of
from .literals import parse_int
from .loops import desugar_loop, each_loop, range_loop, three_clause
from .named_args import (
    CONSTANT_KINDS,
    EXPR_KINDS,
    ArgumentBinding,
    Callee,
    mk_node,
    param_direction,
    param_nodes,
)
from .selects import rewrite_select
from .treenav import name_of

_OP_ASSIGN = {"*=": ("binop", "STAR"), "/=": ("binop", "SLASH"), "%=": ("binop", "PERCENT"),
              "+=": ("binop", "PLUS"), "-=": ("binop", "MINUS"), "|+|=": ("binop", "SPLUS"),
              "|-|=": ("binop", "SMINUS"), "<<=": ("shl", ""), ">>=": ("shr", ""),
              "&=": ("band", ""), "^=": ("bxor", ""), "|=": ("bor", "")}

Err = Callable[[object, str], P4CompileError]


def _type_params(node: Tree | None) -> set[str]:
    return set(_type_param_list(node))


def _type_param_list(node: Tree | None) -> tuple[str, ...]:
    return tuple(str(c.children[0]) for c in (node.children if node is not None else [])
                 if isinstance(c, Tree))


def _text(e) -> str:
    """Source text of a key expression, with call arguments (its control-plane name)."""
    if isinstance(e, Tree) and e.data == "call":
        args = [a for a in (e.children[1].children if e.children[1] is not None else []) if a is not None]
        return f"{text_of(e.children[0])}({', '.join(_text(a) for a in args)})"
    return text_of(e)


class Desugar(ArgumentBinding):
    """Rewrites one program's syntax tree in place (see the module docstring)."""

    def __init__(self, tree: Tree, err: Err):
        self.tree = tree
        self.err = err
        self.n = 0
        self.top: dict[str, Callee] = {}
        self.externs: dict[str, dict[str, list[Callee]]] = {}
        self.blocks: dict[str, Callee] = {}
        self.local: dict[str, Callee] = {}
        self.objects: dict[str, str] = {}  # instance/parameter name -> type name (this block)
        self.tables: set[str] = set()       # tables of this control
        self.keys: dict[str, list] = {}     # table -> (temporary, key expression) with effects
        self._collect()

    # ------------------------------------------------------------ declarations
    def _collect(self) -> None:
        for d in self.tree.children:
            if not isinstance(d, Tree):
                continue
            if d.data == "function_decl":
                _ann, ret, nm, tps, params, _body = d.children
                ps = param_nodes(params)
                self.top[name_of(nm)] = Callee(ps, _type_params(tps), ret,
                                              any(param_direction(p) in ("out", "inout") for p in ps))
            elif d.data == "action_decl":
                self.top[name_of(d.children[1])] = Callee(param_nodes(d.children[2]))
            elif d.data == "extern_func_decl":
                tps = d.children[3]
                self.top[name_of(d.children[2])] = Callee(param_nodes(d.children[4]), _type_params(tps),
                                                          own_type_params=_type_param_list(tps))
            elif d.data == "extern_decl":
                outer = _type_params(d.children[2])
                methods: dict[str, list[Callee]] = {}
                for m in d.children[3:]:
                    if isinstance(m, Tree) and m.data == "method_proto":
                        _ret, nm, tps, params = m.children[1].children
                        methods.setdefault(name_of(nm), []).append(
                            Callee(param_nodes(params), outer | _type_params(tps),
                                    own_type_params=_type_param_list(tps)))
                self.externs[name_of(d.children[1])] = methods
            elif d.data in ("control_decl", "parser_decl"):
                self.blocks[name_of(d.children[1])] = Callee(param_nodes(d.children[3]))

    def run(self) -> None:
        for d in self.tree.children:
            if not isinstance(d, Tree):
                continue
            self.local, self.objects, self.tables, self.keys = {}, {}, set(), {}
            if d.data == "function_decl":
                self._objects(d.children[4])
                self.block(d.children[5])
            elif d.data == "action_decl":
                self._objects(d.children[2])
                self.block(d.children[3])
            elif d.data == "control_decl":
                self._control(d)
            elif d.data == "parser_decl":
                self._parser(d)

    def _objects(self, params: Tree | None) -> None:
        for p in param_nodes(params):
            t = p.children[2]
            if isinstance(t, Tree) and t.data in ("type_name", "specialized_type"):
                self.objects[name_of(p.children[3])] = self._type_name(t)

    @staticmethod
    def _type_name(t) -> str:
        if isinstance(t, Tree) and t.data == "specialized_type":
            t = t.children[0]
        return str(t.children[-1]) if isinstance(t, Tree) else str(t)

    def _locals(self, items) -> None:
        for loc in items:
            if not isinstance(loc, Tree):
                continue
            if loc.data == "instantiation":
                self.objects[name_of(loc.children[3])] = self._type_name(loc.children[1])
            elif loc.data == "action_decl":
                self.local[name_of(loc.children[1])] = Callee(param_nodes(loc.children[2]))
            elif loc.data == "table_decl":
                self.tables.add(name_of(loc.children[1]))

    def _control(self, d: Tree) -> None:
        self._objects(d.children[3])
        locs = [c for c in d.children[5:-2]]
        self._locals(locs)
        self.keys = {}
        new_locs: list = []
        for loc in locs:
            if isinstance(loc, Tree) and loc.data == "table_decl":
                new_locs += self._table_keys(loc)
        d.children[5:5] = new_locs
        for loc in locs:
            if isinstance(loc, Tree) and loc.data == "action_decl":
                self.block(loc.children[3])
        moved = self._moved_initialisers([c for c in locs if isinstance(c, Tree) and c.data == "var_decl"])
        d.children[-1].children[0:0] = moved
        self.block(d.children[-1])

    def _moved_initialisers(self, var_decls: list[Tree]) -> list:
        """p4c runs the initialisers of control- and parser-level variables at the start of
        ``apply`` / the start state, in order: from the first one with side effects on, they
        become assignments there (the others stay initialisers, checked to be pure)."""
        moved: list = []
        for loc in var_decls:
            init = loc.children[3]
            if init is not None and (moved or self.effects(init)):
                moved.append(mk_node("assign_stmt", [self.ident(name_of(loc.children[2]), init), init], init))
                loc.children[3] = None
            else:
                loc.children[3] = self.pure(init)
        return moved

    def _table_keys(self, table: Tree) -> list:
        """Key expressions with side effects become control variables assigned before every apply
        of the table (p4c's SideEffectOrdering); the key keeps its name for the control plane."""
        decls = []
        for prop in table.children[2:]:
            if isinstance(prop, Tree):
                for ar in prop.find_data("action_ref"):
                    self._action_ref(ar)
            if not (isinstance(prop, Tree) and prop.data == "tp_key"):
                continue
            for k in prop.children[1:]:
                kexpr, _kind, kann = k.children
                if not self.effects(kexpr):
                    continue
                t = self.type_of(kexpr)
                if t is None or t.data == "typed_decl":
                    raise self.err(kexpr, "cannot infer the type of this key expression with side effects")
                tmp = self.fresh()
                decls.append(self.var(tmp, t, None, kexpr))
                self.keys.setdefault(name_of(table.children[1]), []).append((tmp, kexpr))
                k.children[0] = self.ident(tmp, kexpr)
                if not any(name_of(a.children[0])[1:] == "name" for a in (kann.children if kann else [])):
                    name = Tree("annotation", [Token("ANNOT", "@name"), Tree("annot_body", [
                        Tree("string_lit", [Token("STRING_LIT", f'"{_text(kexpr)}"')])])])
                    k.children[2] = Tree("annotations", (kann.children if kann else []) + [name])
        return decls

    def _action_ref(self, ar: Tree) -> None:
        """Named arguments of an action in a table (actions list, default action, entries): the
        given ones in parameter order."""
        args = [a for a in (ar.children[2].children if ar.children[2] is not None else []) if a is not None]
        if not any(isinstance(a, Tree) and a.data == "named_arg" for a in args):
            return
        if not all(isinstance(a, Tree) and a.data == "named_arg" for a in args):
            raise self.err(ar, "either all or none of the arguments must be named")
        c = self.local.get(name_of(ar.children[1])) or self.top.get(name_of(ar.children[1]))
        if c is None:
            raise self.err(ar, f"named arguments for an unknown action {name_of(ar.children[1])}")
        given = {str(a.children[0]): a for a in args}
        if len(given) != len(args):
            raise self.err(ar, "an argument is named twice")
        pnames = [name_of(p.children[3]) for p in c.params]
        for nm, a in given.items():
            if nm not in pnames:
                raise self.err(a, f"no parameter named {nm}")
        ar.children[2] = mk_node("args", [given[n].children[1] for n in pnames if n in given], ar)

    def key_updates(self, table: str, pre: list) -> None:
        """The key temporaries of ``table``, computed just before it is applied."""
        for tmp, kexpr in self.keys.get(table, []):
            v = self.expr(copy.deepcopy(kexpr), pre)
            pre.append(mk_node("assign_stmt", [self.ident(tmp, kexpr), v], kexpr))

    def applied(self, e) -> str | None:
        """The table of ``t.apply()`` (or a member of it), if ``e`` is one."""
        if isinstance(e, Tree) and e.data == "member":
            e = e.children[0]
        if not (isinstance(e, Tree) and e.data == "call" and isinstance(e.children[0], Tree)
                and e.children[0].data == "member" and name_of(e.children[0].children[1]) == "apply"):
            return None
        base = e.children[0].children[0]
        if isinstance(base, Tree) and base.data == "ident" and str(base.children[-1]) in self.tables:
            return str(base.children[-1])
        return None

    def _parser(self, d: Tree) -> None:
        self._objects(d.children[3])
        self._locals(d.children[5:])
        kids = [c for c in d.children[5:] if isinstance(c, Tree)]
        moved = self._moved_initialisers([c for c in kids if c.data == "var_decl"])
        for st in (c for c in kids if c.data == "parser_state" and name_of(c.children[2]) == "start"):
            st.children[3:3] = moved
        for st in d.children[5:]:
            if not (isinstance(st, Tree) and st.data == "parser_state"):
                continue
            body = [c for c in st.children[3:] if isinstance(c, Tree) and c.data not in
                    ("trans_direct", "trans_select")]
            trans = st.children[-1] if isinstance(st.children[-1], Tree) and \
                st.children[-1].data in ("trans_direct", "trans_select") else None
            new = self.stmts(body)
            if trans is not None and trans.data == "trans_select":
                sel = trans.children[0]
                pre: list = []
                sel.children[0].children = self.ordered(sel.children[0].children, pre)
                rewrite_select(sel, self.err)
                new += pre
            st.children[3:] = new + [trans]

    # ------------------------------------------------------------ statements
    def fresh(self) -> str:
        self.n += 1
        return f"__tmp{self.n}"

    def block(self, b: Tree) -> None:
        b.children = self.stmts(b.children)

    def stmts(self, items: list) -> list:
        out: list = []
        for s in items:
            out += self.stmt(s) if isinstance(s, Tree) else [s]
        return out

    def sub(self, s):
        """A statement in a branch position: several statements become one block."""
        if s is None:
            return None
        r = self.stmt(s)
        return r[0] if len(r) == 1 else mk_node("block", r, s)

    def stmt(self, s: Tree) -> list:
        d = s.data
        pre: list = []
        if d == "block":
            self.block(s)
        elif d == "annotated_block":
            self.block(s.children[1])
        elif d == "op_assign_stmt":
            lhs, op, rhs = s.children
            if self.effects(lhs):  # the target is evaluated once: its indexes into temporaries
                lhs = self.lvalue(lhs, pre, save=True)
            kind, tok = _OP_ASSIGN[str(op)]
            kids = [copy.deepcopy(lhs), Token(tok, str(op)[:-1]), rhs] if tok else [copy.deepcopy(lhs), rhs]
            return pre + self.stmt(mk_node("assign_stmt", [lhs, mk_node(kind, kids, s)], s))
        elif d == "assign_stmt":
            s.children[0] = self.lvalue(s.children[0], pre)
            rhs_pre: list = []
            s.children[1] = self.expr(s.children[1], rhs_pre)
            if rhs_pre:  # p4c evaluates the left side first: its indexes are read before
                s.children[0] = self.lvalue(s.children[0], pre, save=True)
            pre += rhs_pre
        elif d == "call_stmt" and isinstance(s.children[0], Tree) and s.children[0].data in ("call", "tcall"):
            if self.applied(s.children[0]):
                self.key_updates(self.applied(s.children[0]), pre)
            s.children[0] = self.call(s.children[0], pre, top=True)
        elif d == "var_decl":
            if s.children[3] is not None:
                s.children[3] = self.expr(s.children[3], pre)
        elif d == "if_stmt":
            if not self.table_hit(s.children[0]):
                s.children[0] = self.expr(s.children[0], pre)
            else:
                self.key_updates(self.applied(s.children[0]), pre)
            s.children[1] = self.sub(s.children[1])
            s.children[2] = self.sub(s.children[2])
        elif d == "switch_stmt":
            if self.applied(s.children[0]):
                self.key_updates(self.applied(s.children[0]), pre)
            s.children[0] = self.expr(s.children[0], pre)
            for c in s.children[1:]:
                if c.children[1] is not None:
                    self.block(c.children[1])
        elif d == "return_stmt":
            if s.children[0] is not None:
                s.children[0] = self.expr(s.children[0], pre)
        elif d in ("for_stmt", "for_in_stmt", "for_each_stmt"):
            rewrite = {"for_stmt": three_clause, "for_in_stmt": range_loop, "for_each_stmt": each_loop}[d]
            return self.stmts(rewrite(self, s))
        elif d == "loop_stmt":
            desugar_loop(self, s)
        return pre + [s]

    # ------------------------------------------------------------ expressions
    def pure(self, e):
        """An expression where no statement can be placed before it (table keys, control locals)."""
        if e is None:
            return None
        pre: list = []
        r = self.expr(e, pre)
        if pre:
            raise self.err(e, "calls with out/inout parameters are not allowed here")
        return r

    def expr(self, e, pre: list):
        if isinstance(e, Tree) and e.data == "struct_expr" and self.effects(e):
            kvs = [k for k in e.children if isinstance(k, Tree) and k.data == "kv"]
            for kv, v in zip(kvs, self.ordered([kv.children[1] for kv in kvs], pre), strict=True):
                kv.children[1] = v
            return e
        if not isinstance(e, Tree) or e.data not in EXPR_KINDS:
            return e
        if not self.effects(e):
            return self._named(e)
        d = e.data
        if d == "list_expr" and isinstance(e.children[0], Tree) and e.children[0].data == "expr_list":
            items = e.children[0]  # {a, f(a), b}: items in order, as the arguments of a call
            items.children = self.ordered([c for c in items.children if c is not None], pre)
            return e
        if d in ("land", "lor"):
            a = self.expr(e.children[0], pre)
            tmp = self.fresh()
            pre.append(self.var(tmp, mk_node("t_bool", [], e), a, e))
            inner: list = []
            b = self.expr(e.children[1], inner)
            inner.append(mk_node("assign_stmt", [self.ident(tmp, e), b], e))
            cond = self.ident(tmp, e) if d == "land" else mk_node("lnot", [self.ident(tmp, e)], e)
            pre.append(mk_node("if_stmt", [cond, mk_node("block", inner, e), None], e))
            return self.ident(tmp, e)
        if self.table_hit(e):
            self.key_updates(self.applied(e), pre)
            tmp = self.fresh()
            pre.append(self.var(tmp, mk_node("t_bool", [], e), e, e))
            return self.ident(tmp, e)
        if d == "ternary" and (self.effects(e.children[1]) or self.effects(e.children[2])):
            return self.ternary(e, pre)
        if d in ("call", "tcall"):
            return self.call(e, pre, top=False)
        e.children = self.ordered(e.children, pre)
        return e

    def lvalue(self, e, pre: list, save: bool = False):
        """The target of an assignment: calls in its stack indexes are hoisted; ``save`` also
        copies every non-constant index to a temporary (the right side has effects)."""
        if not isinstance(e, Tree) or e.data not in ("member", "index", "slice"):
            return e
        e.children[0] = self.lvalue(e.children[0], pre, save)
        if e.data == "index":
            idx = self.expr(e.children[1], pre)
            e.children[1] = self.save(idx, pre) if save else idx
        return e

    def ternary(self, e: Tree, pre: list):
        """``c ? a : b`` with effects in a branch: only the chosen branch runs."""
        c = self.save(self.expr(e.children[0], pre), pre, force=True)
        res = self.fresh()
        pre.append(self.result_decl(res, e))
        branches = []
        for b in e.children[1:]:
            inner: list = []
            v = self.expr(b, inner)
            branches.append(mk_node("block", inner + [mk_node("assign_stmt", [self.ident(res, b), v], b)], b))
        pre.append(mk_node("if_stmt", [c, branches[0], branches[1]], e))
        return self.ident(res, e)

    def result_decl(self, name: str, e: Tree) -> Tree:
        """The declaration of a temporary holding the value of ``e`` (a ?: with effects)."""
        t = self.type_of(e)
        if t is None:
            raise self.err(e, "cannot infer the type of this ?: whose branches have side effects")
        if t.data == "typed_decl":
            t.children[0] = Token("IDENTIFIER", name)
            return t
        return self.var(name, t, None, e)

    def type_of(self, e) -> Tree | None:
        """A type tree for ``e`` (a ``typed_decl`` when the generators must infer it)."""
        if not isinstance(e, Tree):
            return None
        d = e.data
        if d == "call" and self.callee(e) is not None and self.callee(e).ret is not None:
            return copy.deepcopy(self.callee(e).ret)
        if self.table_hit(e) or d in ("lnot", "land", "lor", "lt", "gt") or \
                d == "binop" and str(e.children[1]) in ("==", "!=", "<=", ">="):
            return mk_node("t_bool", [], e)
        if d == "cast":
            return copy.deepcopy(e.children[0])
        if d == "int_lit" and parse_int(str(e.children[0]))[1] is None:
            return None  # an untyped literal: the other branch decides
        if not self.effects(e):
            return mk_node("typed_decl", [None, copy.deepcopy(e)], e)
        kids = e.children[1:] if d == "ternary" else e.children[:1] if d in ("shl", "shr") else e.children
        for k in kids:
            t = self.type_of(k)
            if t is not None:
                return t
        return None

    def table_hit(self, e) -> bool:
        """``t.apply().hit`` / ``.miss`` of a table of this control (applying it is an effect)."""
        if not (isinstance(e, Tree) and e.data == "member" and name_of(e.children[1]) in ("hit", "miss")):
            return False
        c = e.children[0]
        if not (isinstance(c, Tree) and c.data == "call" and isinstance(c.children[0], Tree)
                and c.children[0].data == "member" and name_of(c.children[0].children[1]) == "apply"):
            return False
        base = c.children[0].children[0]
        return isinstance(base, Tree) and base.data == "ident" and str(base.children[-1]) in self.tables

    def ordered(self, kids: list, pre: list, lvalues: frozenset[int] = frozenset()) -> list:
        """Children evaluated left to right: values read before a hoisted call are saved first
        (``lvalues``, the positions of out/inout arguments, stay references: their indexes are
        saved)."""
        out: list = []
        for c in kids:
            mine: list = []
            c2 = self.expr(c, mine)
            if mine:
                out = [self.lvalue(x, pre, save=True) if i in lvalues else self.save(x, pre)
                       for i, x in enumerate(out)]
                pre += mine
            out.append(c2)
        return out

    def save(self, x, pre: list, force: bool = False):
        if not isinstance(x, Tree) or x.data not in EXPR_KINDS or x.data in CONSTANT_KINDS and not force:
            return x
        tmp = self.fresh()
        pre.append(mk_node("hoist_decl", [Token("IDENTIFIER", tmp), x], x))
        return self.ident(tmp, x)

    @staticmethod
    def var(name: str, t: Tree, init, like) -> Tree:
        return mk_node("var_decl", [None, t, Tree("name", [Token("IDENTIFIER", name)]), init], like)

    def ident(self, name: str, like) -> Tree:
        return mk_node("ident", [Token("IDENTIFIER", name)], like)

    def effects(self, e) -> bool:
        if not isinstance(e, Tree):
            return False
        if e.data == "call":
            c = self.callee(e)
            if c is not None and c.effects:
                return True
        if self.table_hit(e):
            return True
        return any(self.effects(c) for c in e.children)

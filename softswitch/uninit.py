"""Reads of scalars that may not be initialised, as p4c's ``SimplifyDefUse`` reports them
(``FindUninitialized``), for the cases it surely reports -- the analysis never warns where p4c
would not, and may stay silent where p4c warns.

Tracked: ``bit``/``int``/``bool`` variables declared without an initialiser (locals of actions,
functions, apply blocks and parser states; control- and parser-level variables) and ``out``
scalar parameters of functions and controls.  A read on some path from the declaration without
a write is ``[--Wwarn=uninitialized_use] warning: x may be uninitialized``; a function or
control that can end without writing an ``out`` scalar is ``[--Wwarn=uninitialized_out_param]
warning: out parameter 'x' may be uninitialized when 'f' terminates``.  Conservatively, a
variable passed to any call as ``x`` or a slice of it counts as written, and in a control any
call (an action, a table, a sub-control...) counts as writing its control-level variables and
parameters.  Only what p4c keeps is analysed (``unused.py``); unreachable code is not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lark import Tree

Defs = frozenset | None   # the definitely written variables; None: unreachable
Warn = Callable[[Tree, str, str], None]
_SCALARS = {"t_bool", "t_bit", "t_bit1", "t_int"}


def _name(node) -> str:
    return str(node.children[0]) if isinstance(node, Tree) else str(node)


def _meet(a: Defs, b: Defs) -> Defs:
    return b if a is None else a if b is None else a & b


@dataclass
class Body:
    """The analysis of one action, function, control or parser."""

    warn: Warn
    scalar: Callable[[object], bool]
    call_writes: Callable[[object], frozenset] = lambda _callee: frozenset()  # in a control:
    # the control-level names an action call or table apply may write
    names: dict[tuple, str] = field(default_factory=dict)
    returns: list[Defs] = field(default_factory=list)  # at each `return` (functions)
    quiet: bool = False                             # a parser's fixpoint runs

    # ------------------------------------------------------------ variables
    def declare(self, env: list[dict], name_node, tracked: bool) -> tuple | None:
        key = (name_node.meta.line, name_node.meta.column) if tracked else None
        env[-1][_name(name_node)] = key
        if key is not None:
            self.names[key] = _name(name_node)
        return key

    @staticmethod
    def lookup(env: list[dict], name: str) -> tuple | None:
        for scope in reversed(env):
            if name in scope:
                return scope[name]
        return None

    # ------------------------------------------------------------ statements
    def stmts(self, stmts, env: list[dict], d: Defs) -> Defs:
        env.append({})
        for st in stmts:
            d = self.stmt(st, env, d)
        env.pop()
        return d

    def stmt(self, st, env: list[dict], d: Defs) -> Defs:
        if d is None or not isinstance(st, Tree):
            return d
        k = st.data
        if k == "var_decl":
            _ann, t, nm, init = st.children
            if init is not None:
                d = self.expr(init, env, d)
            key = self.declare(env, nm, self.scalar(t))
            return d | {key} if key is not None and init is not None else d
        if k == "const_decl":
            self.declare(env, st.children[2], False)
            return d
        if k == "assign_stmt":
            d = self.expr(st.children[1], env, d)
            return self.write(st.children[0], env, d)
        if k == "op_assign_stmt":
            d = self.expr(st.children[0], env, d)
            d = self.expr(st.children[-1], env, d)
            return self.write(st.children[0], env, d)
        if k == "call_stmt":
            return self.expr(st.children[0], env, d)
        if k == "if_stmt":
            d = self.expr(st.children[0], env, d)
            return _meet(self.stmts([st.children[1]], env, d), self.stmts([st.children[2]], env, d))
        if k == "switch_stmt":
            return self.switch(st, env, d)
        if k in ("block", "annotated_block"):
            body = st if k == "block" else st.children[-1]
            return self.stmts(body.children, env, d)
        if k == "return_stmt":
            if st.children and st.children[0] is not None:
                d = self.expr(st.children[0], env, d)
            self.returns.append(d)
            return None
        if k == "exit_stmt":
            return None
        return d

    def switch(self, st: Tree, env: list[dict], d: Defs) -> Defs:
        d = self.expr(st.children[0], env, d)
        out: Defs = None
        default = False
        for case in st.children[1:]:
            if not isinstance(case, Tree):
                continue
            label, body = case.children
            default |= isinstance(label, Tree) and label.data == "label_default"
            if body is not None:
                out = _meet(out, self.stmts(body.children, env, d))
        return out if default else _meet(out, d)

    def write(self, lhs, env: list[dict], d: Defs) -> Defs:
        """An assignment's target: the variable it names whole or by a slice becomes written;
        the index expressions of a field or element target are read."""
        key = self.root(lhs, env)
        if key is not None:
            return d | {key}
        while isinstance(lhs, Tree) and lhs.data in ("member", "index", "slice"):
            if lhs.data == "index":
                d = self.expr(lhs.children[1], env, d)
            lhs = lhs.children[0]
        return d

    def root(self, e, env: list[dict]) -> tuple | None:
        """The tracked variable ``e`` names whole or by a slice, if any."""
        if isinstance(e, Tree) and e.data == "slice":
            e = e.children[0]
        if isinstance(e, Tree) and e.data == "ident":
            return self.lookup(env, str(e.children[-1]))
        return None

    # ------------------------------------------------------------ expressions
    def expr(self, e, env: list[dict], d: Defs) -> Defs:
        if d is None or not isinstance(e, Tree):
            return d
        k = e.data
        if k == "ident":
            key = self.lookup(env, str(e.children[-1]))
            if key is not None and key not in d and not self.quiet:
                self.warn(e, "uninitialized_use", f"{self.names[key]} may be uninitialized")
            return d
        if k in ("type_member", "error_member", "int_lit", "string_lit", "true_lit", "false_lit",
                 "dots_expr"):
            return d
        if k == "member":
            return self.expr(e.children[0], env, d)
        if k in ("call", "tcall"):
            return self.call(e, env, d)
        if k == "cast":
            return self.expr(e.children[-1], env, d)
        for c in e.children:
            d = self.expr(c, env, d)
        return d

    def call(self, e: Tree, env: list[dict], d: Defs) -> Defs:
        """Arguments are read, except a tracked variable passed whole or by a slice, which may
        be an ``out`` argument: written; in a control, what the called action or the applied
        table's actions may write counts as written."""
        callee, args = e.children[0], e.children[-1]
        d = self.expr(callee.children[0], env, d) if isinstance(callee, Tree) and callee.data == "member" \
            else d
        written = set()
        for a in (args.children if isinstance(args, Tree) else []):
            if isinstance(a, Tree) and a.data == "named_arg":
                a = a.children[-1]
            key = self.root(a, env)
            if key is not None:
                written.add(key)
            else:
                d = self.expr(a, env, d)
        return d | written | self.call_writes(callee)


def _scalar_checker(tree: Tree) -> Callable[[object], bool]:
    """Whether a type node is a base scalar (``bit``, ``int``, ``bool``, through typedefs)."""
    typedefs = {_name(n.children[-1]): n.children[2] for n in tree.children
                if isinstance(n, Tree) and n.data == "typedef_decl" and str(n.children[1]) == "typedef"}

    def scalar(t, depth: int = 0) -> bool:
        if not isinstance(t, Tree) or depth > 32:
            return False
        if t.data == "type_name":
            inner = typedefs.get(str(t.children[-1]))
            return inner is not None and scalar(inner, depth + 1)
        return t.data in _SCALARS

    return scalar


def _params(params) -> list[Tree]:
    return [p for p in (params.children if isinstance(params, Tree) else []) if isinstance(p, Tree)]


def _direction(p: Tree) -> str:
    return str(p.children[1].children[0]) if isinstance(p.children[1], Tree) else ""


class Analysis:
    """Runs ``Body`` over what p4c keeps of one program."""

    def __init__(self, tree: Tree, warn: Warn, live: set[tuple[str | None, str]]):
        self.tree = tree
        self.warn = warn
        self.live = live
        self.scalar = _scalar_checker(tree)

    def run(self) -> None:
        for node in self.tree.children:
            if not isinstance(node, Tree) \
                    or node.data not in ("control_decl", "parser_decl", "function_decl", "action_decl"):
                continue
            if node.data not in ("control_decl", "parser_decl", "function_decl", "action_decl"):
                continue
            nm = node.children[2 if node.data == "function_decl" else 1]
            if (None, _name(nm)) not in self.live:
                continue
            if node.data == "control_decl":
                self.control(node)
            elif node.data == "parser_decl":
                self.parser(node)
            elif node.data == "function_decl":
                self.function(node)
            else:
                self.action(node, [{}])

    def body(self) -> Body:
        return Body(self.warn, self.scalar)

    def action(self, node: Tree, env: list[dict]) -> None:
        b = self.body()
        scope = {_name(p.children[3]): None for p in _params(node.children[2])}
        b.stmts(node.children[3].children, [*env, scope], frozenset())

    def _outs(self, b: Body, params: list[Tree], env: list[dict]) -> list[tuple[Tree, tuple]]:
        """Declare the parameters; returns the tracked ``out`` scalars (name node, key)."""
        outs = []
        for p in params:
            tracked = _direction(p) == "out" and self.scalar(p.children[2])
            key = b.declare(env, p.children[3], tracked)
            if key is not None:
                outs.append((p.children[3], key))
        return outs

    def _check_outs(self, outs, ends: list[Defs], where: str) -> None:
        for nm, key in outs:
            if any(d is not None and key not in d for d in ends):
                self.warn(nm, "uninitialized_out_param",
                          f"out parameter '{_name(nm)}' may be uninitialized when '{where}' terminates")

    def function(self, node: Tree) -> None:
        b = self.body()
        env: list[dict] = [{}]
        outs = self._outs(b, _params(node.children[4]), env)
        end = b.stmts(node.children[5].children, env, frozenset())
        self._check_outs(outs, [*b.returns, end], _name(node.children[2]))

    def control(self, node: Tree) -> None:
        name = _name(node.children[1])
        locals_ = [c for c in node.children[5:-2] if isinstance(c, Tree)]
        probe = self.body()
        env: list[dict] = [{}]
        outs = self._outs(probe, _params(node.children[3]), env)
        d = frozenset()
        for c in locals_:
            if c.data == "var_decl":
                d = probe.stmt(c, env, d)
            elif c.data in ("const_decl", "instantiation", "action_decl", "table_decl"):
                env[-1][_name(c.children[2 if c.data == "const_decl" else 3 if c.data == "instantiation"
                                          else 1])] = None
        b = self.body()
        b.names = probe.names
        b.call_writes = _ControlWrites(locals_, env[-1]).of
        for c in locals_:
            if c.data == "action_decl" and (name, _name(c.children[1])) in self.live:
                self.action(c, [{n: None for n in env[-1]}])
        end = b.stmts(node.children[-1].children, env, d)
        self._check_outs(outs, [end], name)

    def parser(self, node: Tree) -> None:
        items = [c for c in node.children[5:] if isinstance(c, Tree)]
        states = {_name(c.children[2]): c for c in items if c.data == "parser_state"}
        probe = self.body()
        env: list[dict] = [{}]
        for p in _params(node.children[3]):
            probe.declare(env, p.children[3], False)
        d = frozenset()
        for c in items:
            if c.data == "var_decl":
                d = probe.stmt(c, env, d)
            elif c.data in ("const_decl", "instantiation", "value_set_decl"):
                env[-1][_name(c.children[2] if c.data == "const_decl" else c.children[-1])] = None
        ins: dict[str, Defs] = {"start": d}
        work = ["start"]
        probe.quiet = True
        while work:  # p4c's worklist over the states: what is written on every path in
            s = work.pop()
            out = self._state(probe, states.get(s), env, ins[s])
            for t in _targets(states.get(s)):
                new = out if t not in ins else _meet(ins[t], out) if out is not None else ins[t]
                if t in states and (t not in ins or new != ins[t]):
                    ins[t] = new
                    work.append(t)
        probe.quiet = False
        for s, d_in in ins.items():
            self._state(probe, states.get(s), env, d_in)

    def _state(self, b: Body, st: Tree | None, env: list[dict], d: Defs) -> Defs:
        if st is None or d is None:
            return d
        stmts = [c for c in st.children[3:] if not (isinstance(c, Tree) and c.data in ("trans_direct",
                                                                                      "trans_select"))]
        env.append({})
        for c in stmts:
            d = b.stmt(c, env, d)
        trans = st.children[-1]
        if isinstance(trans, Tree) and trans.data == "trans_select":
            d = b.expr(trans.children[0].children[0], env, d)
        env.pop()
        return d


class _ControlWrites:
    """What calls in a control's apply block may write among the control's own names: an
    action what it assigns or passes on (through the actions it calls), a table what its
    actions may write; other calls nothing but their arguments."""

    def __init__(self, locals_: list[Tree], scope: dict):
        self.scope = scope
        self.actions = {_name(c.children[1]): c for c in locals_ if c.data == "action_decl"}
        self.tables = {_name(c.children[1]): c for c in locals_ if c.data == "table_decl"}
        self.memo: dict[str, frozenset] = {}

    def action(self, name: str, depth: int = 0) -> frozenset:
        if name not in self.actions or depth > 64:
            return frozenset()
        if name not in self.memo:
            node = self.actions[name]
            hidden = {_name(p.children[3]) for p in node.find_data("param")}
            hidden |= {_name(v.children[2]) for v in node.iter_subtrees()
                       if v.data in ("var_decl", "const_decl")}
            out: set = set()
            for t in node.iter_subtrees():
                targets = [t.children[0]] if t.data in ("assign_stmt", "op_assign_stmt") else \
                    list(t.children[-1].children) if t.data in ("call", "tcall") and isinstance(
                        t.children[-1], Tree) else []
                for x in targets:
                    x = x.children[-1] if isinstance(x, Tree) and x.data == "named_arg" else x
                    while isinstance(x, Tree) and x.data in ("slice", "member", "index"):
                        x = x.children[0]
                    if isinstance(x, Tree) and x.data == "ident" and str(x.children[-1]) not in hidden:
                        key = self.scope.get(str(x.children[-1]))
                        if key is not None:
                            out.add(key)
                if t.data == "call" and isinstance(t.children[0], Tree) and t.children[0].data == "ident":
                    out |= self.action(str(t.children[0].children[-1]), depth + 1)
            self.memo[name] = frozenset(out)
        return self.memo[name]

    def of(self, callee) -> frozenset:
        if isinstance(callee, Tree) and callee.data == "ident":
            return self.action(str(callee.children[-1]))
        if isinstance(callee, Tree) and callee.data == "member" and _name(callee.children[1]) == "apply":
            base = callee.children[0]
            is_name = isinstance(base, Tree) and base.data == "ident"
            table = self.tables.get(str(base.children[-1])) if is_name else None
            if table is not None:
                refs = table.find_data("action_ref")
                return frozenset().union(*(self.action(_name(r.children[1])) for r in refs))
        return frozenset()


def _targets(state: Tree | None) -> list[str]:
    if state is None:
        return []
    out = []
    for t in state.iter_subtrees():
        if t.data == "trans_direct":
            out.append(_name(t.children[0]))
        elif t.data == "select_case":
            out.append(_name(t.children[1]))
    return out


def check(tree: Tree, decls, live: set[tuple[str | None, str]]) -> None:
    """Record p4c's uninitialised-read warnings (``decls.warn``) for the blocks, actions and
    functions p4c keeps (``live``, from ``unused.check``)."""
    Analysis(tree, decls.warn, live).run()


__all__ = ["check"]

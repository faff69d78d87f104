"""Reads of scalars that may not be initialised, as p4c's ``SimplifyDefUse`` reports them
(``FindUninitialized``), for the cases it surely reports -- the analysis never warns where p4c
would not, and may stay silent where p4c warns.

Tracked: variables declared without an initialiser (locals of actions, functions, apply blocks
and parser states; control- and parser-level variables) and ``out`` parameters of functions,
controls and parsers, of ``bit``/``int``/``bool`` types or headers and structs of them, field by
field (p4c's storage locations; stacks, unions and a header's validity are not followed).  A
read on some path from the declaration without a write is ``[--Wwarn=uninitialized_use]
warning: x may be uninitialized`` (a scalar: ``x``, ``h.f``, ``s.h.f``) or ``... s may not be
completely initialized`` (a header or struct read whole with a field never written); a
function, control or action that can end without writing an ``out`` scalar (or a scalar of an
``out`` struct: headers may stay invalid) is
``[--Wwarn=uninitialized_out_param] warning: out parameter 'x' may be uninitialized when 'f'
terminates``.  Arguments of a call whose parameters are known (``ordering.py`` binds them) are
read unless ``out`` and written if ``out``/``inout``; conservatively, a variable (or field)
passed to any other call as itself or a slice of it counts as written and is not checked, and
in a control any call (an action, a table, a sub-control...) counts as writing the whole of
the control-level variables and parameters it may write.  Only what p4c keeps is analysed
(``unused.py``); unreachable code is not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lark import Tree

from ..check.statements import text_of
from ..frontend.storage import Type, Types
from ..frontend.treenav import direction_of, name_of, params_of
from .ordering import Ordering, Scope

Defs = frozenset | None   # the definitely written locations (variable key, field...); None: unreachable
Warn = Callable[[Tree, str, str], None]
_SCALARS = {"t_bool", "t_bit", "t_bit1", "t_int"}
Loc = tuple   # (declaration key, field name, ...)



def _meet(a: Defs, b: Defs) -> Defs:
    """What is written on both paths: a location one side writes whole and the other field by
    field is written (as those fields)."""
    if a is None or b is None:
        return b if a is None else a
    return frozenset({x for x in a if _covered(x, b)} | {y for y in b if _covered(y, a)})


def _covered(loc: Loc, d: frozenset) -> bool:
    """Whether ``loc`` is written: it or a location holding it is."""
    return any(loc[:i] in d for i in range(1, len(loc) + 1))


@dataclass
class Body:
    """The analysis of one action, function, control or parser."""

    warn: Warn
    scalar: Callable[[object], bool]
    types: Types | None = None
    bind: Callable[[Tree], object] = lambda _e: None  # a call's (parameter, argument) pairs, if known
    call_writes: Callable[[object], frozenset] = lambda _callee: frozenset()  # in a control:
    # the control-level names an action call or table apply may write
    names: dict[tuple, str] = field(default_factory=dict)
    vtypes: dict[tuple, Type] = field(default_factory=dict)   # tracked variable -> its type
    returns: list[Defs] = field(default_factory=list)  # at each `return` (functions)
    quiet: bool = False                             # a parser's fixpoint runs

    # ------------------------------------------------------------ variables
    def declare(self, env: list[dict], name_node, tracked: bool, t=None) -> tuple | None:
        """Declare a name; ``tracked`` (or a ``t`` of a followed type): its reads are checked."""
        vt = self.types.of(t) if self.types is not None and t is not None else None
        follow = tracked or vt is not None and vt[0] in ("h", "st")
        key = (name_node.meta.line, name_node.meta.column) if follow else None
        env[-1][name_of(name_node)] = key
        if key is not None:
            self.names[key] = name_of(name_node)
            self.vtypes[key] = vt if vt is not None else ("s",)
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
            key = self.declare(env, nm, self.scalar(t), t)
            return d | {(key,)} if key is not None and init is not None else d
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
        """An assignment's target: the location it names whole or by a slice becomes written
        (an element of a stack: the whole variable); its index expressions are read."""
        loc = self.root(lhs, env)
        e = lhs
        while isinstance(e, Tree) and e.data in ("member", "index", "slice"):
            if e.data in ("index", "slice"):
                for i in e.children[1:]:
                    d = self.expr(i, env, d)
            e = e.children[0]
        return d | {loc} if loc is not None else d

    def root(self, e, env: list[dict]) -> Loc | None:
        """The tracked location ``e`` names whole or by a slice, if any."""
        if isinstance(e, Tree) and e.data == "slice":
            e = e.children[0]
        loc, _t = self.path(e, env)
        return loc

    def path(self, e, env: list[dict]) -> tuple[Loc | None, Type | None]:
        """(location, type) of a variable or a field of one: None for what is not followed
        (an untracked variable; through a stack element, the whole variable, type unknown)."""
        if isinstance(e, Tree) and e.data == "ident":
            key = self.lookup(env, str(e.children[-1]))
            return ((key,), self.vtypes.get(key)) if key is not None else (None, None)
        if isinstance(e, Tree) and e.data == "member" and self.types is not None:
            loc, t = self.path(e.children[0], env)
            if loc is None or t is None or t[0] not in ("h", "st"):
                return (loc[:1], None) if loc is not None else (None, None)
            fs = self.types.fields(t)
            m = name_of(e.children[1])
            return (loc + (m,), fs.get(m)) if m in fs else (None, None)
        if isinstance(e, Tree) and e.data == "index":
            loc, _t = self.path(e.children[0], env)
            return (loc[:1], None) if loc is not None else (None, None)
        return None, None

    def complete(self, loc: Loc, t: Type | None, d: frozenset) -> bool:
        """Whether every followed field of ``loc`` is written."""
        if _covered(loc, d) or t is None or self.types is None or t[0] not in ("s", "h", "st"):
            return True  # written, or not followed (a stack, a union, an unknown type)
        if t == ("s",):
            return False
        return all(self.complete(loc + (f,), ft, d) for f, ft in self.types.fields(t).items())

    # ------------------------------------------------------------ expressions
    def expr(self, e, env: list[dict], d: Defs) -> Defs:
        if d is None or not isinstance(e, Tree):
            return d
        k = e.data
        if k in ("ident", "member", "index"):
            loc, t = self.path(e, env)
            if loc is not None:
                x = e
                while isinstance(x, Tree) and x.data in ("member", "index"):
                    d = self.expr(x.children[1], env, d) if x.data == "index" else d
                    x = x.children[0]
                if not self.quiet:
                    self.read(e, loc, t, d)
                return d
            if k == "ident":
                return d
        if k in ("type_member", "error_member", "int_lit", "string_lit", "true_lit", "false_lit",
                 "dots_expr"):
            return d
        if k in ("call", "tcall"):
            return self.call(e, env, d)
        if k == "cast":
            return self.expr(e.children[-1], env, d)
        for c in e.children:
            d = self.expr(c, env, d)
        return d

    def read(self, e: Tree, loc: Loc, t: Type | None, d: frozenset) -> None:
        """p4c's report of a read: a scalar not written, or a header/struct not all written."""
        if t is None:
            return
        if t == ("s",):
            if not _covered(loc, d):
                self.warn(e, "uninitialized_use", f"{text_of(e)} may be uninitialized")
        elif t[0] in ("h", "st") and not self.complete(loc, t, d):
            self.warn(e, "uninitialized_use", f"{text_of(e)} may not be completely initialized")

    def call(self, e: Tree, env: list[dict], d: Defs) -> Defs:
        """Arguments are read (``in``, ``inout``, directionless) and written (``out``,
        ``inout``) when the callee's parameters are known; otherwise a tracked variable passed
        whole or by a slice counts as written and others are read.  In a control, what the
        called action or the applied table's actions may write counts as written."""
        callee, args = e.children[0], e.children[-1]
        if isinstance(callee, Tree) and callee.data == "member":
            base = callee.children[0]   # a method's object is not read (isValid reads no field)
            if self.root(base, env) is None:
                d = self.expr(base, env, d)
        written = set()
        pairs = self.bind(e)
        if isinstance(pairs, list):
            for p, a in pairs:
                direction = direction_of(p)
                if direction != "out" and not (isinstance(a, Tree) and a.data == "dontcare_arg"):
                    d = self.expr(a, env, d)
                if direction in ("out", "inout"):
                    key = self.root(a, env)
                    if key is not None:
                        written.add(key)
            return d | written | {(k,) for k in self.call_writes(callee)}
        for a in (args.children if isinstance(args, Tree) else []):
            if isinstance(a, Tree) and a.data == "named_arg":
                a = a.children[-1]
            key = self.root(a, env)
            if key is not None:
                written.add(key)
            else:
                d = self.expr(a, env, d)
        return d | written | {(k,) for k in self.call_writes(callee)}


def _scalar_checker(tree: Tree) -> Callable[[object], bool]:
    """Whether a type node is a base scalar (``bit``, ``int``, ``bool``, through typedefs)."""
    typedefs = {name_of(n.children[-1]): n.children[2] for n in tree.children
                if isinstance(n, Tree) and n.data == "typedef_decl" and str(n.children[1]) == "typedef"}

    def scalar(t, depth: int = 0) -> bool:
        if not isinstance(t, Tree) or depth > 32:
            return False
        if t.data == "type_name":
            inner = typedefs.get(str(t.children[-1]))
            return inner is not None and scalar(inner, depth + 1)
        return t.data in _SCALARS

    return scalar



class Analysis:
    """Runs ``Body`` over what p4c keeps of one program."""

    def __init__(self, tree: Tree, warn: Warn, live: set[tuple[str | None, str]]):
        self.tree = tree
        self.warn = warn
        self.live = live
        self.scalar = _scalar_checker(tree)
        self.types = Types(tree)
        self.calls = Ordering(tree, warn, live)   # only its binding of calls to parameters

    def run(self) -> None:
        for node in self.tree.children:
            if not isinstance(node, Tree) \
                    or node.data not in ("control_decl", "parser_decl", "function_decl", "action_decl"):
                continue
            nm = node.children[2 if node.data == "function_decl" else 1]
            if (None, name_of(nm)) not in self.live:
                continue
            if node.data == "control_decl":
                self.control(node)
            elif node.data == "parser_decl":
                self.parser(node)
            elif node.data == "function_decl":
                self.function(node)
            else:
                self.action(node, [{}])

    def body(self, scope: Scope | None = None) -> Body:
        """A ``Body`` binding calls in ``scope`` (what names mean in its block)."""
        b = Body(self.warn, self.scalar, self.types)
        if scope is not None:
            b.bind = lambda e: self._bind(e, scope)
        return b

    def _bind(self, e: Tree, scope: Scope):
        try:
            return self.calls.bound(e, scope)
        except (LookupError, TypeError, AttributeError, ValueError):
            return None  # malformed: the checks after this one report it

    def action(self, node: Tree, env: list[dict], scope: Scope | None = None) -> None:
        b = self.body(scope if scope is not None else self.calls.scope(node.children[2], []))
        inner = [*env, {}]
        outs = self._outs(b, params_of(node.children[2]), inner)
        end = b.stmts(node.children[3].children, inner, frozenset())
        self._check_outs(outs, [*b.returns, end], name_of(node.children[1]))

    def _outs(self, b: Body, params: list[Tree], env: list[dict]) -> list[tuple[Tree, tuple, Type]]:
        """Declare the parameters; returns the followed ``out`` ones (name node, key, type)."""
        outs = []
        for p in params:
            out = direction_of(p) == "out"
            tracked = out and self.scalar(p.children[2])
            key = b.declare(env, p.children[3], tracked, p.children[2] if out else None)
            if key is not None:
                outs.append((p.children[3], key, b.vtypes[key]))
        return outs

    def _check_outs(self, outs, ends: list[Defs], where: str) -> None:
        """p4c's check at the end of a block: an ``out`` parameter with a scalar (not inside a
        header: headers may stay invalid) that some path leaves unwritten."""
        for nm, key, t in outs:
            if any(d is not None and self._missing((key,), t, d) for d in ends):
                self.warn(nm, "uninitialized_out_param",
                          f"out parameter '{name_of(nm)}' may be uninitialized when '{where}' terminates")

    def _missing(self, loc: Loc, t: Type | None, d: frozenset) -> bool:
        if _covered(loc, d) or t is None:
            return False
        if t == ("s",):
            return True
        fields = self.types.fields(t).items() if t[0] == "st" else []
        return any(self._missing(loc + (f,), ft, d) for f, ft in fields)

    def function(self, node: Tree) -> None:
        b = self.body(self.calls.scope(node.children[4], []))
        env: list[dict] = [{}]
        outs = self._outs(b, params_of(node.children[4]), env)
        end = b.stmts(node.children[5].children, env, frozenset())
        self._check_outs(outs, [*b.returns, end], name_of(node.children[2]))

    def control(self, node: Tree) -> None:
        name = name_of(node.children[1])
        locals_ = [c for c in node.children[5:-2] if isinstance(c, Tree)]
        scope = self.calls.scope(node.children[3], locals_)
        probe = self.body(scope)
        env: list[dict] = [{}]
        outs = self._outs(probe, params_of(node.children[3]), env)
        d = frozenset()
        for c in locals_:
            if c.data == "var_decl":
                d = probe.stmt(c, env, d)
            elif c.data in ("const_decl", "instantiation", "action_decl", "table_decl"):
                env[-1][name_of(c.children[2 if c.data == "const_decl" else 3 if c.data == "instantiation"
                                          else 1])] = None
        b = self.body(scope)
        b.names, b.vtypes = probe.names, probe.vtypes
        b.call_writes = _ControlWrites(locals_, env[-1]).of
        for c in locals_:
            if c.data == "action_decl" and (name, name_of(c.children[1])) in self.live:
                self.action(c, [{n: None for n in env[-1]}], scope)
        end = b.stmts(node.children[-1].children, env, d)
        self._check_outs(outs, [end], name)

    def parser(self, node: Tree) -> None:
        items = [c for c in node.children[5:] if isinstance(c, Tree)]
        states = {name_of(c.children[2]): c for c in items if c.data == "parser_state"}
        probe = self.body(self.calls.scope(node.children[3], items))
        env: list[dict] = [{}]
        self._outs(probe, params_of(node.children[3]), env)   # out parameters start unwritten
        d = frozenset()
        for c in items:
            if c.data == "var_decl":
                d = probe.stmt(c, env, d)
            elif c.data in ("const_decl", "instantiation", "value_set_decl"):
                env[-1][name_of(c.children[2] if c.data == "const_decl" else c.children[-1])] = None
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
        self.actions = {name_of(c.children[1]): c for c in locals_ if c.data == "action_decl"}
        self.tables = {name_of(c.children[1]): c for c in locals_ if c.data == "table_decl"}
        self.memo: dict[str, frozenset] = {}

    def action(self, name: str, depth: int = 0) -> frozenset:
        if name not in self.actions or depth > 64:
            return frozenset()
        if name not in self.memo:
            node = self.actions[name]
            hidden = {name_of(p.children[3]) for p in node.find_data("param")}
            hidden |= {name_of(v.children[2]) for v in node.iter_subtrees()
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
        if isinstance(callee, Tree) and callee.data == "member" and name_of(callee.children[1]) == "apply":
            base = callee.children[0]
            is_name = isinstance(base, Tree) and base.data == "ident"
            table = self.tables.get(str(base.children[-1])) if is_name else None
            if table is not None:
                refs = table.find_data("action_ref")
                return frozenset().union(*(self.action(name_of(r.children[1])) for r in refs))
        return frozenset()


def _targets(state: Tree | None) -> list[str]:
    if state is None:
        return []
    out = []
    for t in state.iter_subtrees():
        if t.data == "trans_direct":
            out.append(name_of(t.children[0]))
        elif t.data == "select_case":
            out.append(name_of(t.children[1]))
    return out


def check(tree: Tree, decls, live: set[tuple[str | None, str]]) -> None:
    """Record p4c's uninitialised-read warnings (``decls.warn``) for the blocks, actions and
    functions p4c keeps (``live``, from ``unused.check``)."""
    Analysis(tree, decls.warn, live).run()


__all__ = ["check"]

"""Checks of statements (shared by controls, actions, functions and parser states) and the
declarations the checks record for tables and actions (``ActionInfo``, ``TableInfo``).

Code is generated from the typed IR (``softswitch/pygen``, ``softswitch/native``).  The
expression checker still names every value by a Python expression string (``Sym.code``,
``ExprChecker``): constants are folded through it (keyset values, switch labels, sizes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lark import Token, Tree

from .decls import Decls, Param
from .exprs import DuplicateName, ExprChecker, Scope, Sym, is_const
from .static_assert import fold as fold_static_assert
from .static_assert import is_static_assert
from .types import BitT, BoolT, EnumT, IntLitT, NamedT, P4Type, StackT, TupleT


@dataclass
class ActionInfo:
    name: str          # P4Info name
    local: str         # declared name
    pyfn: str
    params: list[Param]
    annotations: dict[str, list]
    control: str | None
    node: Tree

    @property
    def data_params(self) -> list[Param]:
        return [p for p in self.params if not p.direction]


@dataclass
class KeyInfo:
    name: str
    match_kind: str
    width: int
    code: str
    annotations: dict[str, list] = field(default_factory=dict)
    type: P4Type | None = None  # the key expression's type (entries must match it)


@dataclass
class TableInfo:
    name: str
    local: str
    control: str
    keys: list[KeyInfo]
    actions: list[ActionInfo]
    action_annotations: list[dict[str, list]]
    default: tuple[ActionInfo, tuple[int, ...]] | None
    default_const: bool
    const_entries: list[tuple[list[Any], ActionInfo, tuple[int, ...], int | None]]
    entries_const: bool
    size: int
    direct_counter: str | None
    direct_meter: str | None
    annotations: dict[str, list]
    pyname: str
    node: Tree
    applied: bool = False
    priority_rule: Any = None      # entries.PriorityRule: how entry priorities compare
    selector_keys: list[KeyInfo] = field(default_factory=list)  # `selector` keys (hashed, not matched)
    profile: Any = None            # profiles.ProfileInfo of the `implementation` property


def text_of(node) -> str:
    """Source text of a key expression as p4c prints it in P4Info (``hdr.ipv4.dstAddr``)."""
    if isinstance(node, Token):
        return str(node)
    d = node.data
    if d == "ident":
        return str(node.children[-1])
    if d == "member":
        return f"{text_of(node.children[0])}.{node.children[1].children[0]}"
    if d == "index":
        return f"{text_of(node.children[0])}[{text_of(node.children[1])}]"
    if d == "slice":
        return f"{text_of(node.children[0])}[{text_of(node.children[1])}:{text_of(node.children[2])}]"
    if d == "call":
        callee = node.children[0]
        if isinstance(callee, Tree) and callee.data == "member" \
                and str(callee.children[1].children[0]) == "isValid":
            return f"{text_of(callee.children[0])}.$valid$"  # p4c's P4Info name for validity keys
        return f"{text_of(callee)}()"
    if d == "int_lit":
        return str(node.children[0])
    if d == "name":
        return str(node.children[0])
    return d


class BlockChecker:
    """Generates one parser or control: its locals, actions, tables and body."""

    def __init__(self, prog, name: str, tree: Tree, kind: str):
        self.prog = prog
        self.d: Decls = prog.decls
        self.name = name
        self.tree = tree
        self.kind = kind  # "parser" | "control"
        self.scope: Scope = Scope(prog.gscope)
        self.tmp = 0
        self.in_action: ActionInfo | None = None
        self.tables: dict[str, TableInfo] = {}
        self.actions: dict[str, ActionInfo] = {}
        self.params: list[Param] = []
        if tree.children:
            prog.generated.add(str(tree.children[1].children[0]))

    # ------------------------------------------------------------ helpers
    def err(self, node, msg):
        return self.d.err(node, msg)

    def fresh(self, base: str) -> str:
        self.tmp += 1
        return f"{base}_{self.tmp}"

    def ec(self) -> ExprChecker:
        return ExprChecker(self.d, self.scope, self)

    def ex(self, node, expected: P4Type | None = None) -> tuple[str, P4Type]:
        return self.ec().expr(node, expected)

    def ex_to(self, node, t: P4Type) -> str:
        ec = self.ec()
        c, et = ec.expr(node, t)
        return ec.convert(c, et, t, node)

    def qualify(self, local: str, ann: dict[str, list]) -> str:
        n = ann.get("name")
        prefix = f"{self.name}." if self.name else ""
        if n and isinstance(n[0], str):
            return n[0][1:] if n[0].startswith(".") else f"{prefix}{n[0]}"
        return f"{prefix}{local}"

    def declare_params(self, params: list[Param]) -> None:
        for p in params:
            if isinstance(p.type, NamedT) and p.type.name in ("packet_in", "packet_out"):
                self.scope.declare(p.name, Sym(p.type.name, p.type, f"L.p_{p.name}", False))
            else:
                self.scope.declare(p.name, Sym("var", p.type, f"L.p_{p.name}", p.direction != "in",
                                               info=p))

    # ------------------------------------------------------------ lvalues
    def root_sym(self, node) -> tuple[str, Sym | None]:
        while isinstance(node, Tree) and node.data in ("member", "index", "slice"):
            node = node.children[0]
        if isinstance(node, Tree) and node.data == "ident":
            nm = str(node.children[-1])
            return nm, self.scope.lookup(nm)
        return "", None

    def lvalue(self, node) -> P4Type:
        """Check that ``node`` is assignable (a writable variable, a slice of one in range, a
        tuple element, no stack ``.next``/``.last``); returns its type."""
        name, sym = self.root_sym(node)
        if sym is None:
            if name:
                raise self.err(node, f"undeclared identifier {name}")
            raise self.err(node, "expression is not assignable")
        if sym.kind != "var":
            raise self.err(node, f"cannot assign to {sym.kind} {name}")
        if not sym.writable:
            p = sym.info
            why = "in parameter" if isinstance(p, Param) and p.direction == "in" else \
                "directionless action parameter" if isinstance(p, Param) else "read-only value"
            raise self.err(node, f"cannot assign to {why} {name}")
        if isinstance(node, Tree) and node.data == "slice":
            bt = self.lvalue(node.children[0])
            if not isinstance(bt, BitT):
                raise self.err(node, f"cannot slice a value of type {bt}")
            ec = self.ec()
            hi, lo = ec._const_of(node.children[1]), ec._const_of(node.children[2])
            if not 0 <= lo <= hi < bt.width:
                raise self.err(node, f"slice [{hi}:{lo}] out of range for {bt}")
            return BitT(hi - lo + 1)
        if isinstance(node, Tree) and node.data == "index" and isinstance(self.ex(node.children[0])[1],
                                                                          TupleT):
            self.lvalue(node.children[0])
            t = self.ex(node)[1]  # checks the constant index
            self.ec()._const_of(node.children[1])
            return t
        if isinstance(node, Tree) and node.data == "member" and \
                str(node.children[1].children[0]) in ("next", "last") and \
                isinstance(self.ex(node.children[0])[1], StackT):
            raise self.err(node, "stack .next/.last can only be extracted into, not assigned")
        return self.ex(node)[1]

    def assign(self, target_node, value_node) -> None:
        t = self.lvalue(target_node)
        if self._out_function(value_node):
            # `tmp = f(x)` of desugar.py: the call (copy-out of its out/inout arguments), then the value
            self.prog.calls.call_stmt(self, value_node)
            info = self.prog.functions[str(value_node.children[0].children[-1])]
            self.ec().convert(f"{info.pyfn}()", info.ret, t, value_node)
            return
        ec = self.ec()
        vc, vt = ec.expr(value_node, t)
        ec.convert(vc, vt, t, value_node)

    def _out_function(self, node) -> bool:
        """Is ``node`` a call of a user function with out/inout parameters (copy-out, union
        membership after the call)?"""
        if not (isinstance(node, Tree) and node.data == "call" and isinstance(node.children[0], Tree)
                and node.children[0].data == "ident"):
            return False
        name = str(node.children[0].children[-1])
        info = getattr(self.prog, "functions", {}).get(name)
        return info is not None and self.scope.lookup(name) is None and \
            any(p.direction in ("out", "inout") for p in info.params)

    # ------------------------------------------------------------ statements
    def stmts(self, nodes) -> None:
        for s in nodes:
            self.stmt(s)

    def block(self, node: Tree) -> None:
        outer = self.scope
        self.scope = Scope(outer)
        try:
            self.stmts(node.children)
        finally:
            self.scope = outer

    def stmt(self, node) -> None:
        fn = getattr(self, "_s_" + node.data, None)
        if fn is None:
            raise self.err(node, f"unsupported statement {node.data}")
        try:
            fn(node)
        except DuplicateName as e:
            raise self.err(node, f"duplicate declaration of {e.args[0]}") from None

    def _s_block(self, n):
        self.block(n)

    def _s_annotated_block(self, n):
        self.block(n.children[1])  # e.g. @atomic: a single-threaded target executes blocks atomically

    def _s_empty_stmt(self, n):
        pass

    def _s_var_decl(self, n):
        _ann, tnode, nm, init = n.children
        t = self.d.resolve_type(tnode)
        name = str(nm.children[0])
        if isinstance(t, IntLitT):
            raise self.err(n, f"variable {name} cannot have type int "
                              "(infinite precision is compile-time only)")
        py = self.fresh("v_" + name)
        if init is not None:
            self.ex_to(init, t)
        self.scope.declare(name, Sym("var", t, py, True))

    def _s_hoist_decl(self, n):
        """A temporary of desugar.py: a local typed by its initial value."""
        nm, init = n.children
        c, t = self.ex(init)
        if isinstance(t, IntLitT) or c in ("True", "False"):
            self.scope.declare(str(nm), Sym("const", t, c, False))
            return
        py = self.fresh("v_" + str(nm))
        self.scope.declare(str(nm), Sym("var", t, py, False))

    def _s_typed_decl(self, n):
        """A temporary of desugar.py typed like an expression (not evaluated here)."""
        nm, like = n.children
        _c, t = self.ex(like)
        if isinstance(t, IntLitT):
            raise self.err(like, "cannot infer a width for this ?: (cast a branch)")
        py = self.fresh("v_" + str(nm))
        self.scope.declare(str(nm), Sym("var", t, py, True))

    def _s_const_decl(self, n):
        _ann, tnode, nm, init = n.children
        t = self.d.resolve_type(tnode)
        c = self.ex_to(init, t)
        if not is_const(c) and c not in ("True", "False"):
            raise self.err(n, f"constant {nm.children[0]} is not a compile-time constant")
        self.scope.declare(str(nm.children[0]), Sym("const", t, c, False))

    def _s_assign_stmt(self, n):
        self.assign(n.children[0], n.children[1])

    def _s_call_stmt(self, n):
        e = n.children[0]
        if is_static_assert(e):  # checked now, nothing left to run
            fold_static_assert(self.ec(), e)
            n.data, n.children = "empty_stmt", []
            return
        if not (isinstance(e, Tree) and e.data in ("call", "tcall")):
            raise self.err(n, "expression statement must be a call")
        self.prog.calls.call_stmt(self, e)

    def _s_if_stmt(self, n):
        self.ec().expect_bool(n.children[0])
        self.sub(n.children[1])
        if n.children[2] is not None:
            self.sub(n.children[2])

    def sub(self, node) -> None:
        outer = self.scope
        self.scope = Scope(outer)
        try:
            self.stmt(node)
        finally:
            self.scope = outer

    def _s_loop_stmt(self, n):
        """A ``for`` loop as loops.py leaves it: condition, body, update statements."""
        if self.kind == "parser":
            raise self.err(n, "for loops are not allowed in a parser")
        cond, body, update = n.children
        if cond is not None:
            self.ec().expect_bool(cond)
        self.loops = getattr(self, "loops", 0) + 1
        try:
            self.sub(body)
        finally:
            self.loops -= 1
        self.sub(update)

    def _s_break_stmt(self, n):
        if not getattr(self, "loops", 0):
            raise self.err(n, "break outside a loop")

    def _s_continue_stmt(self, n):
        if not getattr(self, "loops", 0):
            raise self.err(n, "continue outside a loop")

    def _s_exit_stmt(self, n):
        if self.kind == "parser":
            raise self.err(n, "exit is not allowed in a parser")

    def _s_return_stmt(self, n):
        if self.kind == "parser":
            raise self.err(n, "return is not allowed in a parser")
        if n.children[0] is not None:
            raise self.err(n, "return with a value is only allowed in functions")

    def _s_switch_stmt(self, n):
        if self.kind == "parser":  # not a parser statement in p4c's grammar
            raise self.err(n, "switch statements are not allowed in a parser")
        if self.in_action is not None:  # p4c's BMv2 back end (its actions are straight-line)
            raise self.err(n, "SwitchStatement: switch statements not supported in actions on "
                              "this target")
        e = n.children[0]
        if isinstance(e, Tree) and e.data == "member" and str(e.children[1].children[0]) == "action_run":
            tinfo = self.applied_table(e.children[0])
            self.prog.calls.call_expr(self, e.children[0])

            def label_key(label: Tree, c: Tree) -> int:
                x = label.children[0]
                aname = str(x.children[-1]) if isinstance(x, Tree) and x.data == "ident" else ""
                idx = next((i for i, a in enumerate(tinfo.actions) if a.local == aname and aname), None)
                if idx is None:
                    raise self.err(c, f"switch label {aname or text_of(x)} is not an action of "
                                      f"table {tinfo.local}")
                return idx
        else:
            _code, t = self.ex(e)
            if isinstance(t, BoolT) or not isinstance(t, (BitT, EnumT)):
                raise self.err(e, f"switch expression must be bit<W>, int<W> or an enum, not {t}")

            def label_key(label: Tree, c: Tree) -> int:
                k = self.ex_to(label.children[0], t)
                if not is_const(k):
                    raise self.err(c, "switch labels must be compile-time constants")
                return int(k)

        self._switch_cases(n, label_key)

    def _switch_cases(self, n, label_key) -> None:
        seen: set = set()
        for c in n.children[1:]:
            label, body = c.children
            if None in seen:
                raise self.err(c, "the default label must be the last switch label")
            key = None if label.data == "label_default" else label_key(label, c)
            if key in seen:
                raise self.err(c, "duplicate switch label")
            seen.add(key)
            if body is not None:
                self.block(body)

    # ------------------------------------------------------------ tables
    def applied_table(self, call: Tree) -> TableInfo:
        if not (isinstance(call, Tree) and call.data == "call" and isinstance(call.children[0], Tree)
                and call.children[0].data == "member"
                and str(call.children[0].children[1].children[0]) == "apply"):
            raise self.err(call, "expected table.apply()")
        base = call.children[0].children[0]
        nm = str(base.children[-1]) if isinstance(base, Tree) and base.data == "ident" else ""
        sym = self.scope.lookup(nm)
        if sym is None or sym.kind != "table":
            raise self.err(call, f"{nm or 'expression'} is not a table")
        return sym.info

    def table_apply_code(self, t: TableInfo) -> str:
        return f"{t.pyname}(L)"

    def member_value(self, code: str, t: P4Type, member: str, n):
        if isinstance(t, NamedT) and t.name.startswith("__apply_result__"):
            if member == "hit":
                return f"{code}[0]", BoolT()
            if member == "miss":
                return f"(not {code}[0])", BoolT()
            if member == "action_run":
                raise self.err(n, "action_run can only be used in a switch statement")
        return None

    def call(self, n, as_expr: bool = True):
        return self.prog.calls.call_expr(self, n)

"""Lowering of statements inside one parser, control, action or function (the statement half
of ``body._Body``; expressions, calls and types come from the other half through ``self``).

Each ``_s_<rule>`` method turns one statement of the syntax tree into IR statements, with the
temporaries, copy-in/copy-out and p4c's evaluation order the statement needs.
"""

from __future__ import annotations

from lark import Tree

from ..check.types import BitT, IntLitT, P4Type, StructT, VarbitT
from . import nodes as ir
from .calls import lower_call_stmt
from .common import (
    Unsupported,
    _Lit,
    _pos,
    _Scope,
    fresh_stmts,
    holds_stack,
    init_varbit,
    irtype,
    length_of,
    struct_assigns,
    union_siblings,
    varbit_length,
    varbit_var,
)


class _Statements:
    """Statement lowering, mixed into ``body._Body``."""

    def block(self, node) -> list[ir.Stmt]:
        outer = self.scope
        self.scope = _Scope(outer, {})
        try:
            return self.stmts(node.children)
        finally:
            self.scope = outer

    def stmts(self, nodes) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in nodes:
            out += self.stmt(s)
        return out

    def stmt(self, node) -> list[ir.Stmt]:
        fn = getattr(self, "_s_" + node.data, None)
        if fn is None:
            raise Unsupported(f"statement {node.data}{_pos(node)}")
        self._pre: list[ir.Stmt] = []
        r = fn(node)
        pre, self._pre = self._pre, []
        return pre + r

    def sub(self, node) -> list[ir.Stmt]:
        outer = self.scope
        self.scope = _Scope(outer, {})
        try:
            saved = getattr(self, "_pre", [])
            r = self.stmt(node)
            self._pre = saved
            return r
        finally:
            self.scope = outer

    def _s_block(self, n):
        saved = self._pre
        r = self.block(n)
        self._pre = saved
        return r

    def _s_annotated_block(self, n):
        saved = self._pre
        r = self.block(n.children[1])
        self._pre = saved
        return r

    def _s_empty_stmt(self, n):
        return []

    def _s_var_decl(self, n):
        _ann, tnode, nm, init = n.children
        t = self.d.resolve_type(tnode)
        if isinstance(t, VarbitT):
            return self._temporary(nm.children[0], t, self.expr_to(init, t) if init is not None else None)
        name = self.fresh("v_" + str(nm.children[0]))
        it = irtype(t, f"variable {nm.children[0]}")
        ref = ir.Ref(it, "local", name)
        ref.ptype = t
        val = self.expr_to(init, t) if init is not None else None
        self.scope.names[str(nm.children[0])] = ("val", ref)
        return [ir.VarDecl(name, it, val)]

    def _s_hoist_decl(self, n):
        """A temporary of desugar.py: a local typed by its initial value."""
        nm, init = n.children
        e, t = self.expr(init)
        if isinstance(e, _Lit) or isinstance(e, ir.Const):
            self.scope.names[str(nm)] = ("val", e)
            return []
        return self._temporary(nm, t, e)

    def _s_typed_decl(self, n):
        """A temporary of desugar.py typed like an expression (not evaluated here)."""
        nm, like = n.children
        pre, self._pre = self._pre, []
        _e, t = self.expr(like)
        self._pre = pre
        return self._temporary(nm, t, None)

    def _temporary(self, nm, t: P4Type, init) -> list[ir.Stmt]:
        """Declare local ``nm`` of P4 type ``t`` under a fresh IR name (``init`` may be None)."""
        name = self.fresh("v_" + str(nm))
        if isinstance(t, VarbitT):  # a struct of its own keeps the current length
            ref, f = varbit_var(self.low.varbit_boxes, "local", name, t)
            self.scope.names[str(nm)] = ("val", f)
            return [ir.VarDecl(name, ref.t, None)] + (init_varbit(f, init) if init is not None else [])
        it = irtype(t, f"temporary {nm}")
        ref = ir.Ref(it, "local", name)
        ref.ptype = t
        self.scope.names[str(nm)] = ("val", ref)
        return [ir.VarDecl(name, it, init)]

    def _s_const_decl(self, n):
        _ann, tnode, nm, init = n.children
        t = self.d.resolve_type(tnode)
        if isinstance(t, IntLitT):  # `const int k = 5;`: stays a literal until it meets a width
            v, _vt = self.expr(init)
            if isinstance(v, _Lit):
                self.scope.names[str(nm.children[0])] = ("val", v)
                return []
        self.scope.names[str(nm.children[0])] = ("val", self.expr_to(init, t))
        return []

    def _s_assign_stmt(self, n):
        lhs_node, rhs_node = n.children
        if isinstance(lhs_node, Tree) and lhs_node.data == "slice":
            hi = self._const_int(lhs_node.children[1])
            lo = self._const_int(lhs_node.children[2])
            rhs = self.expr_to(rhs_node, BitT(hi - lo + 1))
            inner = lhs_node.children[0]
            while isinstance(inner, Tree) and inner.data == "slice":  # x[a:b][c:d] is x[b+c:b+d]
                base_lo = self._const_int(inner.children[2])
                hi, lo = hi + base_lo, lo + base_lo
                inner = inner.children[0]
            base, bt = self.expr(inner)
            return [ir.AssignSlice(base, hi, lo, rhs)]
        if self._out_call(rhs_node):
            call = lower_call_stmt(self, rhs_node)  # `tmp = f(x)` of desugar.py: copy-out, then the value
            lhs = self.expr(lhs_node)[0]
            next(s for s in call if isinstance(s, ir.FuncCall)).ret = lhs
            sibs = union_siblings(lhs)
            if sibs:  # a union member assigned a valid header invalidates the other members
                call.append(ir.If(ir.Valid(ir.Bool(), lhs), [ir.SetValid(x, False) for x in sibs], []))
            return call
        lhs, lt = self.expr(lhs_node)
        rhs = self.expr_to(rhs_node, lt)
        if isinstance(rhs, ir.Default):  # `x = ...`: p4c assigns the default field by field and
            return fresh_stmts(lhs, lt)  # element by element (a stack keeps its nextIndex)
        if isinstance(rhs, ir.StructInit) and type(lt) is StructT and holds_stack(lt):
            split = struct_assigns(lhs, rhs, lt)  # p4c's CopyStructures (a stack keeps nextIndex)
            if split is not None:
                return split
        if isinstance(rhs, ir.StackInit):  # so is a stack expression (p4c's CopyStructures)
            return [ir.Assign(ir.StackElem(x.t, lhs, ir.Const(ir.Bits(32), i), "index"), x)
                    for i, x in enumerate(rhs.items)]
        out: list[ir.Stmt] = [ir.Assign(lhs, rhs)]
        if isinstance(lt, VarbitT) and isinstance(lhs, ir.Field):  # BMv2's assign_VL: the length too
            out.append(ir.Assign(varbit_length(lhs), length_of(out[0].rhs)))
        sibs = union_siblings(lhs)
        if sibs:  # a union member assigned a valid header invalidates the other members
            out.append(ir.If(ir.Valid(ir.Bool(), lhs), [ir.SetValid(x, False) for x in sibs], []))
        return out

    def _out_call(self, node) -> bool:
        """Is ``node`` a call of a user function with out/inout parameters (copy-out, union
        membership after the call)?"""
        if not (isinstance(node, Tree) and node.data == "call" and isinstance(node.children[0], Tree)
                and node.children[0].data == "ident"):
            return False
        name = str(node.children[0].children[-1])
        info = self.low.p.functions.get(name)
        return self.scope.lookup(name) is None and info is not None and \
            any(p.direction in ("out", "inout") for p in info.params)

    def _s_call_stmt(self, n):
        return lower_call_stmt(self, n.children[0])

    def _s_if_stmt(self, n):
        c, _ = self.expr(n.children[0])
        pre = self._pre
        self._pre = []
        then = self.sub(n.children[1])
        els = self.sub(n.children[2]) if n.children[2] is not None else []
        self._pre = pre
        return [ir.If(c, then, els)]

    def _s_exit_stmt(self, n):
        return [ir.Exit()]

    def _s_loop_stmt(self, n):
        cond, body, update = n.children
        pre = self._pre
        self._pre = []
        test: list[ir.Stmt] = []
        if cond is not None:
            c, _ = self.expr(cond)
            test = self._pre + [ir.If(ir.Unary(ir.Bool(), "!", c), [ir.Break()], [])]
            self._pre = []
        r = [ir.Loop(test + self.sub(body), self.sub(update))]
        self._pre = pre
        return r

    def _s_break_stmt(self, n):
        return [ir.Break()]

    def _s_continue_stmt(self, n):
        return [ir.Continue()]

    def _s_return_stmt(self, n):
        e = n.children[0]
        if e is None:
            return [ir.Return()]
        return [ir.Return(self.expr_to(e, self.ret))]

    def _s_switch_stmt(self, n):
        e = n.children[0]
        cases = []
        pending: list = []
        if isinstance(e, Tree) and e.data == "member" and str(e.children[1].children[0]) == "action_run":
            tname = self._applied_table(e.children[0])
            acts = self.low.p.tables[tname].actions
            sw = ir.Switch(None, tname, cases)

            def key(label):
                x = label.children[0]
                aname = str(x.children[-1])
                return next(i for i, a in enumerate(acts) if a.local == aname)
        else:
            v, t = self.expr(e)
            sw = ir.Switch(v, None, cases)

            def key(label):
                k = self.expr_to(label.children[0], t)
                return k.value
        pre = self._pre
        self._pre = []
        for c in n.children[1:]:
            label, body = c.children
            pending.append(None if label.data == "label_default" else key(label))
            if body is None:
                continue
            labels = None if None in pending else list(pending)
            cases.append((labels, self.block(body)))
            pending = []
        self._pre = pre
        return [sw]

    def _applied_table(self, call) -> str:
        base = call.children[0].children[0]
        ent = self.scope.lookup(str(base.children[-1]))
        if ent is None or ent[0] != "table":
            raise Unsupported(f"apply of something that is not a table{_pos(call)}")
        return ent[1]


"""Python generator over the typed IR: one Python function per parser state, parser, control,
action, table and function, plus the header/struct classes of ``layout.py``.

Calling convention (the runtime of ``pipeline.py`` relies on it): a parser or control gets one
``Locals`` object ``L`` holding its parameters (``L.p_x``) and block variables (``L.v_x``);
statement-local variables are Python locals; an action is ``A_x(L, args...)``, a function
``F_x(args...)``; compound values are passed by reference, scalar out/inout arguments by
copy-in/copy-out (the callee returns them after its value); ``exit`` raises ``_Exit``.
"""

from __future__ import annotations

from ..check.decls import is_fixed_width
from ..check.types import HeaderT, StructT
from ..ir import nodes as ir
from ..ir.common import fresh_out
from ..ir.textgen import Identifiers
from ..ir.walk import has_dynamic_index, instance_children
from .layout import class_source, emit_source, extract_source
from .pexpr import PyExpr, Raw, bits, default, wrap
from .pstmt import StmtGen, scalar_outs


class PyGen(Identifiers):
    def __init__(self, prog: ir.Program, trace: bool = False):
        self.prog = prog
        self.trace = trace
        Identifiers.__init__(self)
        self.tmp = 0
        self.x = PyExpr(self)
        self.err_short = prog.errors.index("PacketTooShort")
        self.err_nomatch = prog.errors.index("NoMatch")
        self.err_oob = prog.errors.index("StackOutOfBounds")
        self.fn_kind = ""
        self.pk = "None"               # the packet_in/packet_out of the current block
        self.outs: list[str] = []      # scalar out/inout parameters returned by the current callee
        self.out: list[str] = []
        self.nested = {c for b in prog.blocks.values() for c in instance_children(b)}

    # ------------------------------------------------------------ names
    def obj(self, name: str) -> str:
        """Namespace name of an extern instance (register, counter, meter)."""
        return f"O_{self.cid(name)}"

    def fresh(self, base: str) -> str:
        self.tmp += 1
        return f"{base}{self.tmp}"

    def return_code(self, value: str | None) -> str:
        if self.fn_kind == "function":
            v = value if value is not None else "None"
            return f"return ({v}{''.join(', ' + o for o in self.outs)})" if self.outs else f"return {v}"
        if self.outs:
            return f"return ({''.join(o + ', ' for o in self.outs)})"
        return "return"

    # ------------------------------------------------------------ program
    def generate(self) -> str:
        p = self.prog
        o = self.out
        for t in p.headers:
            o += [class_source(t, self.err_oob), ""]
            if isinstance(t, HeaderT):
                o += [extract_source(t, self.err_short), emit_source(t), ""]
            elif isinstance(t, StructT) and t.fields and is_fixed_width(t):  # for lookahead<S>()
                o += [extract_source(t, self.err_short), ""]
        for f in p.functions.values():
            self._function(f)
        for a in p.actions.values():
            self._action(a)
        for b in p.blocks.values():
            self.pk = next((f"L.p_{prm.name}" for prm in b.params if isinstance(prm.t, ir.Pkt)), "None")
            for t in (t for t in p.tables.values() if t.control == b.name):
                self._table(t)
            if b.kind == "parser":
                self._parser(b)
            else:
                self._control(b)
        return "\n".join(o) + "\n"

    def _body(self, header: str, stmts: list[ir.Stmt], pre: list[str] = (), post: list[str] = ()) -> None:
        self.out.append(header)
        n = len(self.out)
        self.out += ["    " + ln for ln in pre]
        StmtGen(self, self.out, 1).stmts(stmts)
        self.out += ["    " + ln for ln in post]
        if len(self.out) == n:
            self.out.append("    pass")
        self.out.append("")

    def _function(self, f: ir.Function) -> None:
        self.fn_kind, self.pk = "function", "None"
        self.outs = [f"a_{f.params[i].name}" for i in scalar_outs(f.params)]
        fallback = self.return_code(default(f.ret, self.err_oob) if f.ret is not None else None)
        self._body(f"def F_{self.cid(f.name)}({', '.join('a_' + q.name for q in f.params)}):", f.body,
                   post=[fallback])
        self.outs = []

    def _action(self, a: ir.Action) -> None:
        self.fn_kind = "action"
        blk = self.prog.blocks.get(a.control) if a.control else None
        self.pk = next((f"L.p_{q.name}" for q in blk.params if isinstance(q.t, ir.Pkt)), "None") \
            if blk is not None else "None"
        self.outs = [f"a_{a.params[i].name}" for i in scalar_outs(a.params)]
        head = f"def A_{self.cid(a.name)}(L{''.join(', a_' + q.name for q in a.params)}):"
        pre = [f"_C.trace.append({'action ' + a.name!r})"] if self.trace else []
        if not self.outs:
            self._body(head, a.body, pre)
            return
        # an `exit` hands the out/inout values to the caller's copy-out (pstmt.StmtGen.call)
        o = self.out
        o.append(head)
        o += ["    " + ln for ln in pre]
        o.append("    try:")
        n = len(o)
        StmtGen(self, o, 2).stmts(a.body)
        if len(o) == n:
            o.append("        pass")
        o += ["    except _Exit as _e:", f"        _e.outs = ({''.join(x + ', ' for x in self.outs)})",
              "        raise", "    " + self.return_code(None), ""]
        self.outs = []

    def _table(self, t: ir.Table) -> None:
        self.fn_kind = "control"
        o = self.out
        name = self.cid(t.name)
        o.append(f"def T_{name}(L):")
        keys = []
        for i, k in enumerate(t.keys):
            code = bits(self.x(k.expr), k.expr.t)
            if has_dynamic_index(k.expr):  # out of range: p4c's key temporary stays 0
                o += ["    try:", f"        _k{i} = {code}", "    except _OOR:", f"        _k{i} = 0"]
                code = f"_k{i}"
            keys.append(code + ", ")
        o.append(f"    hit, ai, args = TB_{name}.lookup(({''.join(keys)}){self._selector(t)})")
        if t.meter_target is not None:  # BMv2: the direct meter's colour lands before the action
            o.append("    if hit:")
            StmtGen(self, o, 2).assign(t.meter_target, wrap("_ST.dm_color", t.meter_target.t)
                                       if isinstance(t.meter_target.t, ir.Bits) else "_ST.dm_color")
        if self.trace:
            o.append(f"    _C.trace.append({'table ' + t.name + ' '!r} + ('hit' if hit else 'miss') "
                     f"+ ' -> ' + ({t.actions!r}[ai] if ai >= 0 else '(no action)'))")
        g = StmtGen(self, o, 2)
        for i, (aname, bound) in enumerate(zip(t.actions, t.bound, strict=True)):
            act = self.prog.actions[aname]
            dirp = [p for p in act.params if p.direction]
            o.append(f"    {'if' if i == 0 else 'elif'} ai == {i}:")
            args = [fresh_out(x.t) if p.direction == "out" and not isinstance(x.t, (ir.Comp, ir.Stack))
                    else x for p, x in zip(dirp, bound, strict=False)]  # an `out` scalar starts fresh
            outs = [x if p.direction in ("out", "inout") else None for p, x in zip(dirp, bound, strict=False)]
            g.stmts(t.bound_pre[i] if t.bound_pre else [])
            g.call(f"A_{self.cid(act.name)}", act.params, args + [Raw(ir.Bool(), "*args")], outs, lead="L",
                   copy_on_exit=True, after=t.bound_after[i] if t.bound_after else [])
        o.append("    return hit, ai")
        o.append("")

    def _selector(self, t: ir.Table) -> str:
        """Lines computing an action selector's hash ``_h`` (fields of valid headers only, as
        BMv2's BufBuilder); the extra lookup argument."""
        if not t.selector:
            return ""
        o = self.out
        o.append("    _si = []")
        for k, v in zip(t.selector, t.selector_valid, strict=True):
            item = f"_si.append(({bits(self.x(k.expr), k.expr.t)}, {k.width}))"
            o.append(f"    if {self.x(v)}: {item}" if v is not None else f"    {item}")
        o.append(f"    _h = _SELH({t.algo!r}, _pack(tuple(v for v, _ in _si), tuple(w for _, w in _si)))")
        return ", _h"

    def _parser(self, b: ir.Block) -> None:
        self.fn_kind = "parser"
        blk = self.cid(b.name)
        for st in b.states:
            self._state(blk, st)
        o = self.out
        o.append(f"def P_{blk}(L):")
        o += [f"    L.v_{n} = {default(t, self.err_oob)}" for n, t in b.vars]
        StmtGen(self, o, 1).stmts(b.init)
        o += [f"    st = PS_{blk}_start", "    while st is not None:", "        st = st(L)", ""]

    def _target(self, blk: str, name: str) -> str:
        return "None" if name == "accept" else "_REJECT" if name == "reject" else f"PS_{blk}_{name}"

    def _state(self, blk: str, st: ir.State) -> None:
        o = self.out
        o.append(f"def PS_{blk}_{st.name}(L):")
        if self.trace:
            o.append(f"    _C.trace.append({'parser state ' + st.name!r})")
        StmtGen(self, o, 1).stmts(st.body)
        for i, k in enumerate(st.keys):
            o.append(f"    k{i} = {bits(self.x(k), k.t)}")
        for case in st.cases:
            conds = []
            for i, c in enumerate(case.conds):
                if c is None:
                    continue
                if c[0] == "vsall":
                    conds.append(f"VS_{c[1]}.match(({''.join(f'k{j}, ' for j in range(len(st.keys)))}))")
                elif c[0] == "vs":
                    conds.append(f"VS_{c[1]}.match((k{i},))")
                elif c[0] == "range":
                    conds.append(f"{c[1]} <= k{i} <= {c[2]}")
                elif c[2] == st.keys[i].t.mask:
                    conds.append(f"k{i} == {c[1]}")
                else:
                    conds.append(f"(k{i} & {c[2]}) == {c[1]}")
            target = self._target(blk, case.target)
            if not conds:
                o.append(f"    return {target}")
                break
            o.append(f"    if {' and '.join(conds)}: return {target}")
        else:
            if st.nomatch:
                o.append(f"    raise _Reject({self.err_nomatch})")
        o.append("")

    def _frame_init(self, b: ir.Block) -> list[str]:
        """A frame's variables at the start of a packet pass, with the frames of the instances it
        applies (kept between their apply sites, as p4c declares an instance's locals once)."""
        return [f"L.v_{n} = {default(t, self.err_oob)}" for n, t in b.vars] + [
            f"L.i_{self.cid(c)} = N_{self.cid(c)}()" for c in instance_children(b)]

    def _control(self, b: ir.Block) -> None:
        self.fn_kind = "control"
        if b.frame:  # one apply site's copy of an instance's body: runs in the instance's frame
            self._body(f"def C_{self.cid(b.name)}(L):", list(b.init) + list(b.body))
            return
        if b.name in self.nested:  # its frame is made once, with its parent's (N_)
            self.out.append(f"def N_{self.cid(b.name)}():")
            scalars = [f"L.p_{q.name} = {default(q.t, self.err_oob)}" for q in b.params
                       if isinstance(q.t, (ir.Bits, ir.Bool))]
            # p4c's temporaries for compound arguments it does not substitute, one per instance
            scalars += [f"L.q_{q.name} = {default(q.t, self.err_oob)}" for q in b.params
                        if isinstance(q.t, (ir.Comp, ir.Stack)) and q.direction]
            self.out += ["    " + ln for ln in ["L = _Locals()", *scalars, *self._frame_init(b), "return L"]]
            self.out.append("")
            self._body(f"def C_{self.cid(b.name)}(L):", list(b.init) + list(b.body))
            return
        self._body(f"def C_{self.cid(b.name)}(L):", list(b.init) + list(b.body), self._frame_init(b))


__all__ = ["PyGen"]

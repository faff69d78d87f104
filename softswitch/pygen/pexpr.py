"""Python source for typed IR expressions.

Values are held as the front end's header/struct classes expect them (``layout.py``): bit<W> a
non-negative int < 2**W, int<W> a signed int in range, bool a Python bool.  Every operator that
can leave the range reduces its result (``wrap``), so wraparound is exact at every width.
"""

from __future__ import annotations

from ..check.fields import pyfield, vbl_name
from ..check.types import HeaderT
from ..ir import nodes as ir


def lit(v: int, t) -> str:
    """A constant of IR type ``t`` (``v`` is the bit pattern)."""
    if isinstance(t, ir.Bool):
        return "True" if v else "False"
    v &= t.mask
    if t.signed and v >> (t.width - 1):
        v -= 1 << t.width
    return str(v)


def wrap(code: str, t: ir.Bits) -> str:
    """``code`` (an unbounded int) reduced to type ``t``."""
    if t.signed:
        h = 1 << (t.width - 1)
        return f"(((({code}) + {h}) & {t.mask}) - {h})"
    return f"(({code}) & {t.mask})"


def bits(code: str, t) -> str:
    """The bit pattern of a value (signed values masked; bool as 0/1)."""
    if isinstance(t, ir.Bool):
        return f"int({code})"
    return f"({code} & {t.mask})" if t.signed else code


def default(t, oob: int) -> str:
    """A fresh value of IR type ``t`` (zero, False, an invalid header, an empty stack)."""
    if isinstance(t, ir.Bool):
        return "False"
    if isinstance(t, ir.Comp):
        return f"{t.t.pyname}()"
    if isinstance(t, ir.Stack):
        return f"_Stack({t.elem.pyname}, {t.size}, {oob})"
    return "0"


class Raw(ir.Expr):
    """Python source used as an expression by the generator (e.g. ``*args`` of a table)."""

    def __init__(self, t, code: str):
        super().__init__(t)
        self.code = code


class PyExpr:
    """Expression printer; names of variables, externs and the packet come from the generator."""

    def __init__(self, gen):
        self.g = gen

    def __call__(self, e: ir.Expr) -> str:
        return getattr(self, "_" + type(e).__name__)(e)

    def _Raw(self, e) -> str:
        return e.code

    def _Const(self, e: ir.Const) -> str:
        return lit(e.value, e.t)

    def _Ref(self, e: ir.Ref) -> str:
        if e.kind == "param":
            return f"L.p_{e.name}"
        if e.kind == "var":
            return f"L.v_{e.name}"
        if e.kind == "local":
            return e.name
        return f"a_{e.name}"

    def _Field(self, e: ir.Field) -> str:
        return f"{self(e.base)}.{e.name}"

    def _Valid(self, e: ir.Valid) -> str:
        return f"{self(e.base)}._v"

    def _StackElem(self, e: ir.StackElem) -> str:
        b = self(e.base)
        if isinstance(e.base.t, ir.Comp):  # an array of a non-header type: a run-time index
            return f"{b}.at({self(e.index)})"  # out of range: rtlib.IndexOutOfRange
        if e.which == "index":
            if isinstance(e.index, ir.Const) and e.index.value < e.base.t.size:
                return f"{b}.h[{e.index.value}]"
            return f"{b}.at({self(e.index)})"  # out of range: rtlib.IndexOutOfRange
        return f"{b}.{e.which}()"

    def _StackInfo(self, e: ir.StackInfo) -> str:
        b = self(e.base)
        if e.what == "nextIndex":
            return f"{b}.n"
        return f"(({b}.n - 1) & 0xffffffff)"

    def _Unary(self, e: ir.Unary) -> str:
        x = self(e.x)
        if e.op == "!":
            return f"(not {x})"
        if e.op == "~":
            return f"(~{x})" if e.t.signed else f"({x} ^ {e.t.mask})"
        return wrap(f"-{x}", e.t)

    def _Slice(self, e: ir.Slice) -> str:
        x = self(e.x)
        if e.lo == 0:
            return x if e.hi + 1 == e.x.t.width and not e.x.t.signed else f"({x} & {e.t.mask})"
        return f"(({x} >> {e.lo}) & {e.t.mask})"

    def _Cast(self, e: ir.Cast) -> str:
        x, st, dt = self(e.x), e.x.t, e.t
        if isinstance(dt, ir.Bool):
            return f"({x} != 0)"
        if isinstance(st, ir.Bool):
            return wrap(f"int({x})", dt) if dt.signed else f"int({x})"
        if dt.signed:
            return x if st.signed and dt.width >= st.width else wrap(x, dt)
        return f"({x} & {dt.mask})" if st.signed or dt.width < st.width else x

    def _Mux(self, e: ir.Mux) -> str:
        return f"({self(e.a)} if {self(e.cond)} else {self(e.b)})"

    def _StackInit(self, e: ir.StackInit) -> str:
        items = "".join(self(x) + ", " for x in e.items)
        return f"_mkstack({e.t.elem.pyname}, {e.t.size}, {self.g.err_oob}, ({items}))"

    def _Default(self, e: ir.Default) -> str:
        return default(e.t, self.g.err_oob)

    def _VarbitLength(self, e: ir.VarbitLength) -> str:
        return f"{self(e.field.base)}.{vbl_name(e.field.base.t.t, e.field.name)}"

    def _StructInit(self, e: ir.StructInit) -> str:
        t = e.t.t
        items = "".join(self(x) + ", " for x in e.items)
        valid = "True" if isinstance(t, HeaderT) else "False"
        lens = [f"{vbl_name(t, pyfield(f))!r}: {self(n)}"
                for (f, _ft), n in zip(t.fields, e.lens, strict=False) if n is not None]
        if lens:  # the current lengths of varbit items
            return f"_mk({t.pyname}, ({items}), {valid}, {{{', '.join(lens)}}})"
        return f"_mk({t.pyname}, ({items}){', True' if valid == 'True' else ''})"

    def _RegRead(self, e: ir.RegRead) -> str:
        return f"{self.g.obj(e.inst)}.read({self(e.index)})"

    def _PacketLength(self, e: ir.PacketLength) -> str:
        return f"({self.g.pk}.nbits >> 3)"

    def _Lookahead(self, e: ir.Lookahead) -> str:
        if isinstance(e.t, ir.Comp):
            cls = e.t.t.pyname
            return f"_lookh({self.g.pk}, X_{cls}, {cls})"
        v = f"_look({self.g.pk}, {e.t.width}, {self.g.err_short})"
        return wrap(v, e.t) if e.t.signed else v

    def _CallF(self, e: ir.CallF) -> str:
        return f"F_{self.g.cid(e.func)}({', '.join(self(a) for a in e.args)})"

    def _Binary(self, e: ir.Binary) -> str:
        op = e.op
        a, b = self(e.a), self(e.b)
        if op == "&&":
            return f"({a} and {b})"
        if op == "||":
            return f"({a} or {b})"
        at = e.a.t
        if op in ("==", "!=") and isinstance(at, (ir.Comp, ir.Stack)):
            return f"({'' if op == '==' else 'not '}_eq({a}, {b}))"
        if op in ("==", "!=", "<", ">", "<=", ">="):
            return f"({a} {op} {b})"
        t = e.t
        if op == "++":
            code = f"(({bits(a, at)} << {e.b.t.width}) | {bits(b, e.b.t)})"
            return wrap(code, t) if t.signed else code
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op in ("+", "-", "*"):
            return wrap(f"{a} {op} {b}", t)
        if op in ("/", "%"):
            pop = "//" if op == "/" else "%"
            if isinstance(e.b, ir.Const) and e.b.value:
                return f"({a} {pop} {b})"
            return f"(({a} {pop} {b}) if {b} else 0)"  # run-time x/0: 0 (undefined in P4)
        if op == "<<":
            if isinstance(e.b, ir.Const):
                return wrap(f"{a} << {e.b.value}", t) if e.b.value < t.width else "0"
            return f"({wrap(f'{a} << {b}', t)} if {b} < {t.width} else 0)"
        if op == ">>":
            return f"({a} >> {b})"  # Python's >> is arithmetic on signed values, 0/-1 when large
        return self._sat(op, a, b, t)

    @staticmethod
    def _sat(op: str, a: str, b: str, t: ir.Bits) -> str:
        s = "+" if op == "|+|" else "-"
        if t.signed:
            lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
            return f"min(max({a} {s} {b}, {lo}), {hi})"
        return f"min({a} + {b}, {t.mask})" if s == "+" else f"max({a} - {b}, 0)"


__all__ = ["PyExpr", "Raw", "bits", "default", "lit", "wrap"]

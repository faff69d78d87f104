"""C code for typed IR expressions.  Values hold their W-bit pattern in uint64_t (W <= 64) or
unsigned __int128 (W <= 128); every operator reduces its result to the type's width, so
wraparound is exact at every width (the Python backend's ``& mask`` / signed wrap)."""

from __future__ import annotations

from ..check.fields import cpath, field_width, flat_fields, pyfield, vbl_name
from ..check.types import HeaderT
from ..ir import nodes as ir
from ..ir.common import Unsupported


def ctype(t) -> str:
    if isinstance(t, ir.Bool):
        return "int"
    if isinstance(t, ir.Bits):
        return "u64" if t.width <= 64 else "u128" if t.width <= 128 else f"W{wide_bytes(t)}"
    if isinstance(t, ir.Comp):
        return f"T_{t.t.pyname}"
    if isinstance(t, ir.Stack):
        return f"TS_{t.elem.pyname}_{t.size}"
    raise Unsupported(f"value of type {t}")


def wide_bytes(t: ir.Bits) -> int:
    """A value wider than 128 bits (a wide varbit, subset.py) is a byte array in C holding the
    number MSB first: ``typedef struct { uint8_t b[N]; } WN``."""
    return (t.width + 7) // 8


def get_bits(dst: str, data: str, pos: str, w: int) -> str:
    """C reading ``w`` bits at bit ``pos`` of ``data`` into ``dst`` (a scalar, or for
    ``w`` > 128 a byte array: right-aligned, MSB first)."""
    if w <= 128:
        return f"{dst} = {'getb64' if w <= 64 else 'getb128'}({data}, {pos}, {w});"
    n = wide_bytes(ir.Bits(w))
    r = w - 8 * (n - 1)
    return (f"{dst}.b[0] = (uint8_t)getb64({data}, {pos}, {r}); for (int _i = 1; _i < {n}; _i++) "
            f"{dst}.b[_i] = (uint8_t)getb64({data}, {pos} + {r} + 8 * (_i - 1), 8);")


def put_bits(buf: str, off: str, w: int, value: str) -> str:
    """C writing the ``w``-bit ``value`` at bit ``off`` of ``buf`` (as ``get_bits`` reads it)."""
    if w <= 128:
        return f"{'putb64' if w <= 64 else 'putb128'}({buf}, {off}, {w}, {value});"
    n = wide_bytes(ir.Bits(w))
    r = w - 8 * (n - 1)
    return (f"{{ putb64({buf}, {off}, {r}, ({value}).b[0]); for (int _i = 1; _i < {n}; _i++) "
            f"putb64({buf}, {off} + {r} + 8 * (_i - 1), 8, ({value}).b[_i]); }}")


def _byte_chunks(nb: int) -> list[tuple[int, int]]:
    """``nb`` bytes as (byte offset, size) loads of 8, 4, 2 and 1 bytes, largest first."""
    out, o = [], 0
    for c in (8, 4, 2, 1):
        while nb - o >= c:
            out.append((o, c))
            o += c
    return out


def _load_be(base: str, start: int, nb: int) -> str:
    """C for the ``nb`` (<= 8) bytes at ``base + start`` as a big-endian number."""
    parts = []
    for o, c in _byte_chunks(nb):
        sh = 8 * (nb - o - c)
        ld = f"ldbe{8 * c}({base} + {start + o})"
        parts.append(f"({ld} << {sh})" if sh else ld)
    return parts[0] if len(parts) == 1 else f"({' | '.join(parts)})"


def _get_expr(base: str, off: int, w: int) -> str | None:
    """C for the ``w`` (<= 64) bits at constant bit ``off`` of byte-aligned ``base`` (None when
    they span 9 bytes)."""
    start, end = off // 8, (off + w + 7) // 8
    if end - start > 8:
        return None
    v = _load_be(base, start, end - start)
    sh = end * 8 - off - w
    if sh:
        v = f"({v} >> {sh})"
    if w != 8 * (end - start):
        v = f"({v} & {lit((1 << w) - 1, ir.Bits(64))})"
    return v


def get_bits_at(dst: str, base: str, off: int, w: int) -> str:
    """As ``get_bits`` where ``base`` is byte-aligned and ``off`` a constant: whole-byte loads
    at constant offsets, one shift and mask (no per-bit loop, no run-time alignment test)."""
    if w <= 64:
        v = _get_expr(base, off, w)
    elif w <= 128:
        hi, lo = _get_expr(base, off, w - 64), _get_expr(base, off + w - 64, 64)
        v = f"(((u128)({hi}) << 64) | (u128)({lo}))" if hi and lo else None
    else:
        v = None
    return f"{dst} = {v};" if v else get_bits(dst, base, str(off), w)


def put_bits_at(buf: str, off: int, w: int, value: str) -> str:
    """As ``put_bits`` where ``buf`` is byte-aligned and ``off`` a constant: a field of whole
    bytes on a byte boundary is stored with big-endian stores of 8/4/2/1 bytes."""
    if off % 8 or w % 8 or w > 64:
        return put_bits(buf, str(off), w, value)
    nb = w // 8
    stores = " ".join(f"stbe{8 * c}({buf} + {off // 8 + o}, _pv >> {8 * (nb - o - c)});"
                      for o, c in _byte_chunks(nb))
    return f"{{ u64 _pv = (u64)({value}); {stores} }}"


def lit(v: int, t: ir.Bits) -> str:
    v &= t.mask
    if t.width > 128:
        n = wide_bytes(t)
        return f"((W{n}){{{{{', '.join(str(b) for b in v.to_bytes(n, 'big'))}}}}})"
    if t.width <= 64:
        return f"((u64)0x{v:x}ull)"
    return f"U128(0x{v >> 64:x}ull, 0x{v & ((1 << 64) - 1):x}ull)"


def mask(t: ir.Bits) -> str:
    return lit(t.mask, t)


def sx(code: str, t: ir.Bits) -> str:
    """Signed value of a pattern (as i64 / i128)."""
    return f"sx64({code}, {t.width})" if t.width <= 64 else f"sx128({code}, {t.width})"


class Raw(ir.Expr):
    """A C temporary used as an lvalue by the statement generator."""

    def __init__(self, t, code: str):
        super().__init__(t)
        self.code = code


class CExpr:
    """Expression printer; ``ref`` maps a Ref to C (depends on the enclosing function)."""

    def __init__(self, gen):
        self.g = gen

    def __call__(self, e: ir.Expr) -> str:
        return getattr(self, "_" + type(e).__name__)(e)

    def _Raw(self, e: Raw) -> str:
        return e.code

    def _Const(self, e: ir.Const) -> str:
        if isinstance(e.t, ir.Bool):
            return "1" if e.value else "0"
        return lit(e.value, e.t)

    def _Ref(self, e: ir.Ref) -> str:
        return self.g.ref(e)

    def _Field(self, e: ir.Field) -> str:
        return f"{self(e.base)}.f_{e.name}"

    def _StackElem(self, e: ir.StackElem) -> str:
        b = self(e.base)
        if isinstance(e.base.t, ir.Comp):
            return self._array_elem(e, b)
        n = e.base.t.size
        scratch = f"ss_scratch_{e.base.t.elem.pyname}"
        self.g.scratch.add(e.base.t.elem.pyname)
        if self.g.fn_kind == "parser":
            oob = "{ px->reject = ERR_OOB; px->exit = 1; _p = &" + scratch + "; }"
        else:  # controls: the statement is skipped (StmtGen.stmts probes the indexes first)
            oob = "{ px->oob = 1; _p = &" + scratch + "; }"
        if e.which == "index":
            if isinstance(e.index, ir.Const):
                if not e.index.value < n:
                    raise Unsupported("constant stack index out of range")
                return f"({b}).h[{e.index.value}]"
            return (f"(*({{ u64 _i = (u64)({self(e.index)}); T_{e.base.t.elem.pyname} *_p = _i < {n} ? "
                    f"&({b}).h[_i] : 0; if (!_p) {oob} _p; }}))")
        if e.which == "last":
            return (f"(*({{ u64 _i = ({b}).n; T_{e.base.t.elem.pyname} *_p = _i ? &({b}).h[_i - 1] : 0; "
                    f"if (!_p) {oob} _p; }}))")
        return (f"(*({{ u64 _i = ({b}).n; T_{e.base.t.elem.pyname} *_p = _i < {n} ? &({b}).h[_i] : 0; "
                f"if (!_p) {oob} _p; }}))")

    def _array_elem(self, e: ir.StackElem, b: str) -> str:
        """An element of a non-header array (a struct of fields ``e0``..) at a run-time index: a
        pointer chosen by ``switch``; out of range as for stacks, through a scratch element."""
        ct = ctype(e.t)
        self.g.array_scratch.add(ct)
        if self.g.fn_kind == "parser":
            oob = f"px->reject = ERR_OOB; px->exit = 1; _p = &ss_ascratch_{ct};"
        else:
            oob = f"px->oob = 1; _p = &ss_ascratch_{ct};"
        t = e.base.t.t
        cases = " ".join(f"case {k}: _p = &({b}).f_{pyfield(f)}; break;"
                         for k, (f, _ft) in enumerate(t.fields))
        return (f"(*({{ u64 _i = (u64)({self(e.index)}); {ct} *_p; switch (_i) {{ {cases} "
                f"default: {oob} }} _p; }}))")

    def _StackInfo(self, e: ir.StackInfo) -> str:
        b = self(e.base)
        if e.what == "nextIndex":
            return f"((({b}).n) & 0xffffffffull)"
        return f"((({b}).n - 1) & 0xffffffffull)"

    def _Valid(self, e: ir.Valid) -> str:
        return f"({self(e.base)}._v)"

    def _Unary(self, e: ir.Unary) -> str:
        x = self(e.x)
        if e.op == "!":
            return f"(!{x})"
        return f"(({ctype(e.t)})({e.op}{x}) & {mask(e.t)})"

    def _Slice(self, e: ir.Slice) -> str:
        x = self(e.x)
        return f"(({ctype(e.t)})(({x}) >> {e.lo}) & {mask(e.t)})"

    def _Cast(self, e: ir.Cast) -> str:
        x, st, dt = self(e.x), e.x.t, e.t
        ct = ctype(dt)
        if isinstance(st, ir.Bool):
            return f"(({ct})({x} != 0))"
        if isinstance(dt, ir.Bool):
            return f"(({x}) != 0)"
        if st.signed:
            return f"(({ct})({sx(x, st)}) & {mask(dt)})"
        return f"(({ct})({x}) & {mask(dt)})"

    def _Mux(self, e: ir.Mux) -> str:
        return f"(({self(e.cond)}) ? ({self(e.a)}) : ({self(e.b)}))"

    def _RegRead(self, e: ir.RegRead) -> str:
        rid, size = self.g.reg(e.inst)
        cell = f"ST_(px)->R{rid}[(size_t)({self(e.index)})]"
        return f"(({ctype(e.t)})({self(e.index)} < {size} ? {cell} : 0))"  # a narrow cell: no int promotion

    def _PacketLength(self, e: ir.PacketLength) -> str:
        return "((u64)(pk->nbits >> 3) & 0xffffffffull)"

    def _Lookahead(self, e: ir.Lookahead) -> str:
        if isinstance(e.t, ir.Comp):
            h = e.t.t
            parts, off = [], 0
            for f, ft in flat_fields(h):
                w = field_width(ft)
                parts.append(get_bits(f"_t.{cpath(f)}", "pk->data", f"pk->pos + {off}", w))
                off += w
            valid = " _t._v = 1;" if isinstance(h, HeaderT) else ""  # lookahead<struct>: no validity
            return (f"({{ T_{h.pyname} _t; memset(&_t, 0, sizeof _t); if (pk->pos + {off} > pk->nbits) "
                    f"return ERR_SHORT; {' '.join(parts)}{valid} _t; }})")
        w = e.t.width
        get = "getb64" if w <= 64 else "getb128"
        return (f"({{ if (pk->pos + {w} > pk->nbits) return ERR_SHORT; "
                f"({ctype(e.t)})({get}(pk->data, pk->pos, {w})); }})")

    def _CallF(self, e: ir.CallF) -> str:
        f = self.g.prog.functions[e.func]
        pre: list[str] = []
        args = "".join(", " + a for a in self.g.call_args(f.params, e.args, pre))
        call = f"F_{self.g.cid(e.func)}(px{args})"
        return f"({{ {' '.join(pre)} {call}; }})" if pre else call

    def _StackInit(self, e: ir.StackInit) -> str:
        """A list expression as a header stack: each element assigned as BMv2 does."""
        et = ir.Comp(e.t.elem)
        fn = self.g.asg_fn(et)
        sets = " ".join(f"{{ {ctype(et)} _e = {self(x)}; {fn}(&_t.h[{i}], &_e); }}"
                        for i, x in enumerate(e.items))
        return f"({{ {ctype(e.t)} _t; memset(&_t, 0, sizeof _t); {sets} _t; }})"

    def _Default(self, e: ir.Default) -> str:
        """A fresh compound value: all zero is every header invalid, nextIndex 0, fields 0."""
        return f"({{ {ctype(e.t)} _d; memset(&_d, 0, sizeof _d); _d; }})"

    def _VarbitLength(self, e: ir.VarbitLength) -> str:
        return f"{self(e.field.base)}.{vbl_name(e.field.base.t.t, e.field.name)}"

    def _StructInit(self, e: ir.StructInit) -> str:
        """A list expression as a value (a header built from one is valid)."""
        t = e.t.t
        sets = " ".join(f"_s.f_{pyfield(f)} = {self(x)};"
                        for (f, _ft), x in zip(t.fields, e.items, strict=True))
        sets += "".join(f" _s.{vbl_name(t, pyfield(f))} = {self(n)};"
                        for (f, _ft), n in zip(t.fields, e.lens, strict=False) if n is not None)
        valid = " _s._v = 1;" if isinstance(t, HeaderT) else ""
        return f"({{ T_{t.pyname} _s; memset(&_s, 0, sizeof _s); {sets}{valid} _s; }})"

    def _Binary(self, e: ir.Binary) -> str:
        op = e.op
        a, b = self(e.a), self(e.b)
        if op in ("&&", "||"):
            return f"({a} {op} {b})"
        at = e.a.t
        if op in ("==", "!="):
            if isinstance(at, (ir.Comp, ir.Stack)):
                neg = "" if op == "==" else "!"
                if any(isinstance(x, (ir.StructInit, ir.Default, ir.StackInit)) for x in (e.a, e.b)):
                    ct = ctype(at)
                    return f"({{ {ct} _l = {a}, _r = {b}; {neg}{self.g.eq_fn(at)}(&_l, &_r); }})"
                return f"({neg}{self.g.eq_fn(at)}(&{a}, &{b}))"
            if isinstance(at, ir.Bits) and at.width > 128:
                return f"({{ {ctype(at)} _l = {a}, _r = {b}; memcmp(&_l, &_r, sizeof _l) {op} 0; }})"
            return f"({a} {op} {b})"
        if op in ("<", ">", "<=", ">="):
            if isinstance(at, ir.Bits) and at.signed:
                return f"({sx(a, at)} {op} {sx(b, at)})"
            return f"({a} {op} {b})"
        t = e.t
        ct, m = ctype(t), mask(t)
        if op == "++":
            bw = e.b.t.width
            return f"((({ct})({a}) << {bw}) | ({ct})({b}))"
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op in ("+", "-", "*"):
            return f"(({ct})({a} {op} {b}) & {m})"
        if op in ("/", "%"):
            return f"(({b}) ? ({a}) {op} ({b}) : 0)"
        if op == "<<":
            return f"(({b}) >= {t.width} ? 0 : (({ct})(({a}) << ({b})) & {m}))"
        if op == ">>":
            if t.signed:
                return f"(({ct})({sx(a, t)} >> (({b}) >= {t.width} ? {t.width - 1} : ({b}))) & {m})"
            return f"(({b}) >= {t.width} ? 0 : ({a}) >> ({b}))"
        if op in ("|+|", "|-|"):
            return self._sat(op, a, b, t)
        raise Unsupported(f"operator {op}")

    def _sat(self, op: str, a: str, b: str, t: ir.Bits) -> str:
        ct, m = ctype(t), mask(t)
        if not t.signed:
            if op == "|-|":
                return f"(({a}) > ({b}) ? ({a}) - ({b}) : 0)"
            return f"({{ {ct} _a = {a}, _b = {b}, _s = (_a + _b) & {m}; (_s < _a) ? {m} : _s; }})"
        st = "i64" if t.width <= 64 else "i128"
        lo = f"(-(({st})1 << {t.width - 1}))"
        hi = f"((({st})1 << {t.width - 1}) - 1)"
        fn = "__builtin_add_overflow" if op == "|+|" else "__builtin_sub_overflow"
        return (f"({{ {st} _a = {sx(a, t)}, _b = {sx(b, t)}, _r; int _o = {fn}(_a, _b, &_r); "
                f"if (_o) _r = _b {'<' if op == '|+|' else '>'} 0 ? {lo} : {hi}; "
                f"else if (_r > {hi}) _r = {hi}; else if (_r < {lo}) _r = {lo}; ({ct})_r & {m}; }})")

"""C generator over the typed IR: one C function per parser, control, action, table and
function, plus the entry points the hand-written runtime (rt_head.h / rt_tail.c) calls.

Calling convention: a control or parser instance has a frame struct ``L_<block>`` (compound
parameters by pointer, scalar parameters and block variables by value); actions receive their
control's frame, out/inout scalars by pointer to a copy (copy-in/copy-out; what an ``exit``
skips is p4c's, see ``StmtGen.call_action``); ``px->exit`` propagates ``exit`` through calls.
"""

from __future__ import annotations

from ..check.fields import pyfield, struct_varbits, vbl_name
from ..check.types import ArrayT, HeaderT, StructLikeT, VarbitT
from ..ir import nodes as ir
from ..ir.common import Unsupported, fresh_out, irtype
from ..ir.textgen import Identifiers
from ..ir.walk import instance_children, stacks_used
from .ccomp import CompoundFns
from .cexpr import CExpr, ctype, lit, mask, wide_bytes
from .cstmt import ALGO, StmtGen

ROLE_PARAMS = {
    "parser": ("pk", "hdr", "meta", "std"),
    "verify": ("hdr", "meta"),
    "ingress": ("hdr", "meta", "std"),
    "egress": ("hdr", "meta", "std"),
    "compute": ("hdr", "meta"),
    "deparser": ("ob", "hdr"),
}


M64 = (1 << 64) - 1
#: fixed-table applies per generated function at most (CGen._group_fixed_applies)
FIXED_GROUP = 16


def _u128(v: int) -> str:
    return f"U128({v >> 64:#x}ull, {v & M64:#x}ull)"


class CGen(Identifiers):
    def __init__(self, prog: ir.Program):
        self.prog = prog
        self.out: list[str] = []
        Identifiers.__init__(self)
        self.regs = {
            n: i for i, n in enumerate(x for x in prog.externs if prog.externs[x].kind == "register")
        }
        self.ctrs = {n: i for i, n in enumerate(x for x in prog.externs if prog.externs[x].kind == "counter")}
        self.meters = {n: i for i, n in enumerate(x for x in prog.externs if prog.externs[x].kind == "meter")}
        self.table_ids = {n: i for i, n in enumerate(prog.tables)}
        self.crc_ids = {n: i for i, n in enumerate(prog.custom_crcs())}  # SW.crcc index per calc
        self.comp = CompoundFns()
        self.x = CExpr(self)
        self.frame: str | None = None  # C type of the current frame (L)
        self.scratch: set[str] = set()   # stack element types needing an out-of-range scratch element
        self.array_scratch: set[str] = set()  # the same for array elements, by C type
        self.has_arrays = any(isinstance(t, ArrayT) for t in prog.headers)
        self.stack_types: set[str] = set()
        self.fn_kind = ""

    # ------------------------------------------------------------ names
    def ref(self, e: ir.Ref) -> str:
        comp = isinstance(e.t, (ir.Comp, ir.Stack))
        if e.kind == "param":
            return f"(*L->p_{e.name})" if comp else f"L->p_{e.name}"
        if e.kind == "var":
            return f"L->v_{e.name}"
        if e.kind == "local":
            return f"l_{e.name}"
        return f"(*a_{e.name})" if e.by_ptr else f"a_{e.name}"

    def reg(self, name: str) -> tuple[int, int]:
        return self.regs[name], self.prog.externs[name].size

    def eq_fn(self, t: ir.Comp | ir.Stack) -> str:
        return self.comp.eq_fn(t)

    def asg_fn(self, t: ir.Comp | ir.Stack) -> str:
        return self.comp.asg_fn(t)

    # ------------------------------------------------------------ program
    def generate(self) -> str:
        p = self.prog
        o = self.out
        errs = p.errors
        o.append(f"#define ERR_SHORT {errs.index('PacketTooShort')}")
        o.append(f"#define ERR_NOMATCH {errs.index('NoMatch')}")
        o.append(f"#define ERR_OOB {errs.index('StackOutOfBounds')}")
        o.append(f"#define ERR_HDR_TOO_LONG {errs.index('HeaderTooShort')}")
        o.append(f"#define ERR_INVALID_ARG {errs.index('ParserInvalidArgument')}")
        for n in sorted({wide_bytes(it) for t in p.headers for _f, ft in t.fields
                         if isinstance(it := irtype(ft), ir.Bits) and it.width > 128}):
            o.append(f"typedef struct {{ uint8_t b[{n}]; }} W{n};  /* a wide varbit, MSB first */")
        for t in p.headers:
            self._struct(t)
        for st in stacks_used(p):  # stacks no struct holds (locals of functions, actions)
            self._stack_type(st)
        o.append(f"typedef T_{p.hdr_t.pyname} hdr_t;")
        o.append(f"typedef T_{p.meta_t.pyname} meta_t;")
        o.append(f"typedef T_{p.std_t.pyname} std_t;")
        self._state()
        for b in reversed(p.blocks.values()):  # an instance's frame inside its parent's: child first
            if not b.frame:  # a site's copy of a body runs in its instance's frame
                self._frame(b)
        body: list[str] = []
        self.out = body
        for f in p.functions.values():
            self._function(f)
        for a in p.actions.values():
            self._action(a)
        for b in p.blocks.values():
            for t in (t for t in p.tables.values() if t.control == b.name):
                self._table(t, b)
            if b.kind == "parser":
                self._parser(b)
            else:
                self._control(b)
        self.out = o
        for name in sorted(self.scratch):
            o.append(f"static T_{name} ss_scratch_{name};")
        for ct in sorted(self.array_scratch):
            o.append(f"static {ct} ss_ascratch_{ct};")
        self._prototypes()
        o += self.comp.definitions()
        o += body
        self._entries()
        return "\n".join(o) + "\n"

    def _stack_type(self, st: ir.Stack) -> None:
        if ctype(st) not in self.stack_types:
            self.stack_types.add(ctype(st))
            self.out.append(f"typedef struct {{ T_{st.elem.pyname} h[{st.size}]; u64 n; }} {ctype(st)};")

    def _struct(self, t: StructLikeT) -> None:
        for _f, ft in t.fields:
            st = irtype(ft)
            if isinstance(st, ir.Stack):
                self._stack_type(st)
        lines = [f"typedef struct T_{t.pyname} {{"]
        if isinstance(t, HeaderT):
            lines.append("    uint8_t _v;")
            if any(isinstance(ft, VarbitT) for _f, ft in t.fields):
                lines.append("    u64 _vbl;  /* current length of the varbit field in bits */")
        from_ir = [(f, self._field_t(ft)) for f, ft in t.fields]
        for f, ct in from_ir:
            lines.append(f"    {ct} f_{_pyf(f)};")
        for f in struct_varbits(t):
            lines.append(f"    u64 {vbl_name(t, f)};  /* current length of varbit field {f} */")
        if not t.fields and not isinstance(t, HeaderT):
            lines.append("    uint8_t _empty;")
        lines.append(f"}} T_{t.pyname};")
        self.out += lines

    def _field_t(self, ft) -> str:
        return ctype(irtype(ft))

    def _state(self) -> None:
        lines = ["typedef struct ST {"]
        for name, i in self.regs.items():
            x = self.prog.externs[name]
            lines.append(f"    {reg_cell_t(x.width)} R{i}[{reg_cells_padded(x.width, x.size)}];")
        for name, i in self.ctrs.items():
            lines.append(f"    u64 C{i}[{max(self.prog.externs[name].size, 1)}][2];")
        for name, i in self.meters.items():
            lines.append(f"    MCELL M{i}[{max(self.prog.externs[name].size, 1)}];")
        lines.append("    int _unused;")
        lines.append("} ST;")
        lines.append("#define ST_(px) ((ST *)(px)->st)")
        self.out += lines

    def _frame(self, b: ir.Block) -> None:
        lines = [f"typedef struct L_{self.cid(b.name)} {{"]
        for prm in b.params:
            if isinstance(prm.t, ir.Pkt):
                continue
            star = "*" if isinstance(prm.t, (ir.Comp, ir.Stack)) else ""
            lines.append(f"    {ctype(prm.t)} {star}p_{prm.name};")
        for name, t in b.vars:
            lines.append(f"    {ctype(t)} v_{name};")
        for prm in b.params:  # p4c's per-instance temporaries of compound arguments
            if isinstance(prm.t, (ir.Comp, ir.Stack)) and prm.direction:
                lines.append(f"    {ctype(prm.t)} q_{prm.name};")
        for c in instance_children(b):
            lines.append(f"    L_{self.cid(c)} i_{self.cid(c)};")
        lines.append("    int _unused;")
        lines.append(f"}} L_{self.cid(b.name)};")
        self.out += lines

    # ------------------------------------------------------------ signatures
    def param_decls(self, params: list[ir.Param]) -> str:
        out = []
        for prm in params:
            ct = ctype(prm.t)
            ptr = isinstance(prm.t, (ir.Comp, ir.Stack)) or prm.direction in ("out", "inout")
            out.append(f"{ct} {'*' if ptr else ''}a_{prm.name}")
        return "".join(", " + x for x in out)

    def action_sig(self, a: ir.Action) -> str:
        frame = f"L_{self.cid(a.control)}" if a.control else "void"
        return f"static void A_{self.cid(a.name)}(PX *px, {frame} *L{self.param_decls(a.params)})"

    def func_sig(self, f: ir.Function) -> str:
        ret = ctype(f.ret) if f.ret is not None else "void"
        return f"static {ret} F_{self.cid(f.name)}(PX *px{self.param_decls(f.params)})"

    def _prototypes(self) -> None:
        for f in self.prog.functions.values():
            self.out.append(self.func_sig(f) + ";")
        for a in self.prog.actions.values():
            self.out.append(self.action_sig(a) + ";")
        for b in self.prog.blocks.values():
            self.out.append(self.block_sig(b) + ";")
        self.out += self.comp.prototypes()

    def block_sig(self, b: ir.Block) -> str:
        fr = f"L_{self.cid(b.frame or b.name)}"  # a site's copy of a body: its instance's frame
        if b.kind == "parser":
            return f"static int P_{self.cid(b.name)}(PX *px, PKT *pk, {fr} *L)"
        if any(isinstance(p.t, ir.Pkt) for p in b.params):
            return f"static void C_{self.cid(b.name)}(PX *px, OBUF *ob, {fr} *L)"
        return f"static void C_{self.cid(b.name)}(PX *px, {fr} *L)"

    def call_args(self, params: list[ir.Param], args: list[ir.Expr], pre: list[str]) -> list[str]:
        """C arguments; compound values by address (list expressions through temporaries whose
        declarations go to ``pre``)."""
        out = []
        for prm, a in zip(params, args, strict=True):
            if isinstance(prm.t, (ir.Comp, ir.Stack)):
                if isinstance(a, (ir.StructInit, ir.Default, ir.StackInit)):  # a caller's temporary
                    tmp = f"_ca{len(pre)}"
                    pre.append(f"{ctype(prm.t)} {tmp} = {self.x(a)};")
                    out.append(f"&{tmp}")
                elif isinstance(a, ir.CallF):  # a value, not an lvalue: a one-element array literal
                    out.append(f"(({ctype(prm.t)}[]){{ {self.x(a)} }})")
                else:
                    out.append(f"&{self.x(a)}")
            elif prm.direction in ("out", "inout"):
                out.append(f"&{self.x(a)}")
            else:
                out.append(self.x(a))
        return out

    # ------------------------------------------------------------ bodies
    def _function(self, f: ir.Function) -> None:
        self.fn_kind = "function"
        self.out.append(self.func_sig(f) + " {")
        StmtGen(self, self.out, 1).stmts(f.body)
        if f.ret is not None:
            self.out.append(f"    {{ {ctype(f.ret)} _z; memset(&_z, 0, sizeof _z); return _z; }}")
        self.out.append("}")

    def _action(self, a: ir.Action) -> None:
        self.fn_kind = "action"
        self.out.append(self.action_sig(a) + " {")
        self.out.append("    (void)L;")
        StmtGen(self, self.out, 1).stmts(a.body)
        self.out.append("}")

    def _control(self, b: ir.Block) -> None:
        self.fn_kind = "control"
        body = self._group_fixed_applies(b)
        self.out.append(self.block_sig(b) + " {")
        g = StmtGen(self, self.out, 1)
        g.stmts(b.init)
        for part in body:
            if isinstance(part, str):  # a group of fixed-table applies (below)
                g.emit(f"{part}(px, L);")
                g.exit_check()
            else:
                g.stmts([part])
        self.out.append("}")

    def _group_fixed_applies(self, b: ir.Block) -> list:
        """``b.body`` with each run of more than FIXED_GROUP applies of fixed tables (inlined
        into their caller, ``_table``) cut into functions of FIXED_GROUP applies (their names
        in the list): one function of hundreds of inlined tables (dhc.p4's lanes) would cost
        the C compiler minutes (RTL PRE is quadratic in a function's size)."""
        out: list = []
        run: list[ir.TableApply] = []
        frame = f"L_{self.cid(b.frame or b.name)}"

        def flush() -> None:
            if len(run) <= FIXED_GROUP:
                out.extend(run)
            else:
                for i in range(0, len(run), FIXED_GROUP):
                    name = f"G_{self.cid(b.name)}_{i // FIXED_GROUP}"
                    self.out.append(f"static __attribute__((noinline)) void {name}(PX *px, {frame} *L) {{")
                    StmtGen(self, self.out, 1).stmts(run[i:i + FIXED_GROUP])
                    self.out.append("}")
                    out.append(name)
            run.clear()

        for s in b.body:
            if (isinstance(s, ir.TableApply) and s.hit_var is None
                    and self.prog.tables[s.table].fixed_rows is not None):
                run.append(s)
                continue
            flush()
            out.append(s)
        flush()
        return out

    def _fixed_lookup(self, t: ir.Table, tid: int) -> None:
        """A table whose rows can never change (``ir.Table.fixed_rows``): the rows compiled into
        compares, as ``ss_lookup`` would find them (exact keys: at most one row matches), and
        the run-time default action on a miss.  dhc.p4 applies K + 1 such tables per packet."""
        o = self.out
        for r, (_vals, _ai, args) in enumerate(t.fixed_rows or []):
            if args:
                data = ", ".join(_u128(v) for v in args)
                o.append(f"    static const u128 R{r}[{len(args)}] = {{{data}}};")
        for r, (vals, ai, args) in enumerate(t.fixed_rows or []):
            cond = " && ".join(f"k[{i}] == {_u128(v)}" for i, v in enumerate(vals))
            head = "if" if r == 0 else "else if"
            o.append(f"    {head} ({cond}) {{ ai = {ai}; a = {f'R{r}' if args else 'NULL'}; *hit = 1; }}")
        miss = f"*hit = ss_lookup_miss(px, {tid}, &a, &ai);"
        o.append(f"    else {miss}" if t.fixed_rows else f"    {miss}")

    def _selector(self, t: ir.Table) -> None:
        """``h``: an action selector's hash over its keys, fields of invalid headers left out (BMv2's
        BufBuilder); bits packed MSB first, the last byte zero-padded, as ``externs.pack_bits``."""
        if not t.selector:
            return
        o = self.out
        nb = (sum(k.width for k in t.selector) + 7) // 8
        o.append(f"    {{ uint8_t sb[{nb} + 1]; memset(sb, 0, sizeof sb); size_t so = 0;")
        for k, v in zip(t.selector, t.selector_valid, strict=True):
            put = "putb64" if k.width <= 64 else "putb128"
            item = f"{{ {put}(sb, so, {k.width}, {self.x(k.expr)}); so += {k.width}; }}"
            o.append(f"      if ({self.x(v)}) {item}" if v is not None else f"      {item}")
        o.append(f"      h = ss_sel_hash(px, {ALGO[t.algo]}, sb, (so + 7) / 8); }}")

    def _table(self, t: ir.Table, b: ir.Block) -> None:
        self.fn_kind = "table"      # a control's statements, in a function that returns int
        tid = self.table_ids[t.name]
        o = self.out
        inl = "static inline __attribute__((always_inline)) int" if t.fixed_rows is not None else "static int"
        o.append(f"{inl} T_{tid}(PX *px, L_{self.cid(b.name)} *L, int *hit) {{")
        o.append(f"    u128 k[{max(len(t.keys), 1)}];")
        for i, k in enumerate(t.keys):
            c = self.x(k.expr)
            if "px->oob = 1" in c:  # an index out of range: p4c's key temporary stays 0
                o.append(f"    px->oob = 0; k[{i}] = (u128)({c}); if (px->oob) k[{i}] = 0;")
            else:
                o.append(f"    k[{i}] = (u128)({c});")
        o.append("    const u128 *a; int ai; uint32_t h = 0;")
        self._selector(t)
        if t.fixed_rows is None:
            o.append(f"    *hit = ss_lookup(px, {tid}, k, h, &a, &ai);")
        else:
            self._fixed_lookup(t, tid)
        o.append("    (void)a;")
        g = StmtGen(self, o, 2)
        if t.meter_target is not None:  # BMv2: the direct meter's colour lands before the action
            mt = t.meter_target
            o.append("    if (*hit) {")
            g._set(mt, f"(({ctype(mt.t)})px->dm_color & {mask(mt.t)})")
            o.append("    }")
        o.append("    switch (ai) {")
        for i, (aname, bound) in enumerate(zip(t.actions, t.bound, strict=True)):
            act = self.prog.actions[aname]
            dirp = [p for p in act.params if p.direction]
            datap = [p for p in act.params if not p.direction]
            o.append(f"    case {i}: {{")
            args = [fresh_out(x.t) if p.direction == "out" and not isinstance(x.t, (ir.Comp, ir.Stack))
                    else x for p, x in zip(dirp, bound, strict=False)]
            args += [ir.Ref(p.t, "local", f"_arg{j}") for j, p in enumerate(datap)]
            for j, p in enumerate(datap):
                o.append(f"        {ctype(p.t)} l__arg{j} = ({ctype(p.t)})a[{j}];")
            outs = [x if p.direction in ("out", "inout") else None for p, x in zip(dirp, bound, strict=False)]
            outs += [None] * len(datap)
            g.stmts(t.bound_pre[i] if t.bound_pre else [])
            g.call_action(act, args, outs, t.bound_after[i] if t.bound_after else [])
            o.append("        break; }")
        o.append("    }")
        o.append("    return ai;")
        o.append("}")

    def _parser(self, b: ir.Block) -> None:
        self.fn_kind = "parser"
        o = self.out
        o.append(self.block_sig(b) + " {")
        g = StmtGen(self, o, 1)
        g.stmts(b.init)
        o.append("    goto S_start;")
        for st in b.states:
            o.append(f"S_{st.name}: {{")
            g.level = 2
            g.stmts(st.body)
            for i, k in enumerate(st.keys):
                o.append(f"        {ctype(k.t)} k{i} = {self.x(k)};")
            if st.keys and (self.stack_types or self.has_arrays):
                o.append("        if (px->reject) return ERR_OOB;")
            for case in st.cases:
                conds = []
                for i, c in enumerate(case.conds):
                    kt = st.keys[i].t if i < len(st.keys) else None
                    if c is None:
                        continue
                    if c[0] == "vsall":
                        ks = ", ".join(f"(u128)k{j}" for j in range(len(st.keys)))
                        conds.append(
                            f"({{ u128 _vk[] = {{{ks}}}; ss_vs_match(px, {c[1]}, _vk, {len(st.keys)}); }})"
                        )
                    elif c[0] == "vs":
                        conds.append(f"({{ u128 _vk[] = {{(u128)k{i}}}; ss_vs_match(px, {c[1]}, _vk, 1); }})")
                    elif c[0] == "range":
                        conds.append(f"(k{i} >= {lit(c[1], kt)} && k{i} <= {lit(c[2], kt)})")
                    else:
                        conds.append(f"((k{i} & {lit(c[2], kt)}) == {lit(c[1], kt)})")
                jump = self._goto(case.target)
                o.append(f"        if ({' && '.join(conds)}) {jump}" if conds else f"        {jump}")
                if not conds:
                    break
            if st.nomatch:
                o.append("        return ERR_NOMATCH;")
            o.append("    }")
        o.append("}")

    @staticmethod
    def _goto(target: str) -> str:
        if target == "accept":
            return "return -1;"
        if target == "reject":
            return "return 0;"
        return f"goto S_{target};"

    # ------------------------------------------------------------ entry points for rt_tail.c
    def _entries(self) -> None:
        p, o = self.prog, self.out
        for role, names in ROLE_PARAMS.items():
            b = p.blocks[p.roles[role]]
            fr = f"L_{self.cid(b.name)}"
            sig = {"parser": "static int ss_parse(PX *px, PKT *pk, hdr_t *hdr, meta_t *meta, std_t *std)",
                   "verify": "static void ss_verify(PX *px, hdr_t *hdr, meta_t *meta)",
                   "ingress": "static void ss_ingress(PX *px, hdr_t *hdr, meta_t *meta, std_t *std)",
                   "egress": "static void ss_egress(PX *px, hdr_t *hdr, meta_t *meta, std_t *std)",
                   "compute": "static void ss_compute(PX *px, hdr_t *hdr, meta_t *meta)",
                   "deparser": "static void ss_deparse(PX *px, OBUF *ob, hdr_t *hdr)"}[role]
            o.append(sig + " {")
            o.append(f"    {fr} L; memset(&L, 0, sizeof L);")
            for prm, n in zip(b.params, names, strict=True):
                if not isinstance(prm.t, ir.Pkt):
                    o.append(f"    L.p_{prm.name} = {n};")
            if role == "parser":
                o.append(f"    return P_{self.cid(b.name)}(px, pk, &L);")
            elif role == "deparser":
                o.append(f"    C_{self.cid(b.name)}(px, ob, &L);")
            else:
                o.append(f"    C_{self.cid(b.name)}(px, &L);")
            o.append("}")
        o.append("static void ss_preserve(int fl, meta_t *dst, const meta_t *src) {")
        o.append("    switch (fl) {")
        for k, names in p.field_lists.items():
            fields = {f for f, _ in p.meta_t.fields}
            sets = " ".join(f"dst->f_{n} = src->f_{n};" for n in names if _unpy(n) in fields or n in fields)
            o.append(f"    case {k}: {sets} break;")
        o.append("    default: break;")
        o.append("    }")
        o.append("}")
        tds = []
        for t in p.tables.values():
            nargs = max([len([q for q in p.actions[a].params if not q.direction]) for a in t.actions] + [0])
            if len(t.keys) > 64:
                raise Unsupported(f"table {t.name}: more than 64 keys")
            kinds = ", ".join("1" if k.kind == "range" else "0" for k in t.keys) or "0"
            exact = int(all(k.kind == "exact" for k in t.keys))
            tds.append(f"{{{len(t.keys)}, {nargs}, {exact}, {int(t.direct_counter)}, {t.direct_meter}, "
                       f"{{{kinds}}}}}")
        o.append(f"#define SS_NTABLES {len(tds)}")
        o.append(f"#define SS_NVS {len(p.value_sets)}")
        widths = ", ".join(str(w) for w in p.custom_crcs().values()) or "16"
        o.append(f"#define SS_NCRC {len(self.crc_ids)}")
        o.append(f"static const int SS_CRCW[{max(len(self.crc_ids), 1)}] = {{{widths}}};")
        o.append(f"static const TDESC SS_TD[{max(len(tds), 1)}] = {{{', '.join(tds) or '{0}'}}};")
        self._extern_access()

    def _extern_access(self) -> None:
        o = self.out
        o.append("static void *ss_reg_cells(ST *st, int i, u64 *size, int *esz) {")
        o.append("    switch (i) {")
        for name, i in self.regs.items():
            x = self.prog.externs[name]
            o.append(f"    case {i}: *size = {x.size}; *esz = sizeof st->R{i}[0]; return st->R{i};")
        o.append("    default: return 0;")
        o.append("    }")
        o.append("}")
        o.append("static u64 *ss_ctr_cells(ST *st, int i, u64 *size) {")
        o.append("    switch (i) {")
        for name, i in self.ctrs.items():
            o.append(f"    case {i}: *size = {self.prog.externs[name].size}; return &st->C{i}[0][0];")
        o.append("    default: return 0;")
        o.append("    }")
        o.append("}")
        o.append("static MCELL *ss_meter_cells(ST *st, int i, u64 *size) {")
        o.append("    switch (i) {")
        for name, i in self.meters.items():
            o.append(f"    case {i}: *size = {self.prog.externs[name].size}; return st->M{i};")
        o.append("    default: return 0;")
        o.append("    }")
        o.append("}")


#: register cell types, narrowest first: (bits, C type)
_CELL_TYPES = ((8, "uint8_t"), (16, "uint16_t"), (32, "uint32_t"), (64, "u64"), (128, "u128"))


def _cell_bits(width: int) -> int:
    return next(bits for bits, _ in _CELL_TYPES if width <= bits or bits == 128)


def reg_cell_t(width: int) -> str:
    """A register cell's C type: the narrowest unsigned type that holds ``width`` bits (the
    W-bit pattern, as in a value), so a packet touches fewer cache lines of register state."""
    return dict(_CELL_TYPES)[_cell_bits(width)]


def reg_cells_padded(width: int, size: int) -> int:
    """Cells allocated for a register of ``size`` cells: rounded up to an odd number of 64-byte
    lines, so registers of one power-of-two size do not all start at the same cache set (a
    packet touching one cell of each of K such registers would evict its own lines)."""
    esz = _cell_bits(width) // 8
    lines = (max(size, 1) * esz + 63) // 64
    if lines % 2 == 0:
        lines += 1
    return lines * 64 // esz


def _pyf(name: str) -> str:
    return pyfield(name)


def _unpy(name: str) -> str:
    return name[:-2] if name.endswith("_f") else name


__all__ = ["CGen", "mask"]

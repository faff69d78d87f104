"""C code for typed IR statements (including extern calls and parser statements)."""

from __future__ import annotations

from ..check.fields import cpath, field_width, flat_fields, pyfield, vbl_name
from ..check.types import HeaderT, VarbitT
from ..ir import nodes as ir
from ..ir.common import instance_temp_in
from ..ir.textgen import StmtWriter
from ..ir.walk import dynamic_elems
from .cexpr import Raw, ctype, get_bits, get_bits_at, lit, mask, put_bits, put_bits_at, wide_bytes

ALGO = {"crc32": 0, "crc32_custom": 7, "crc16": 1, "crc16_custom": 6, "random": 2, "identity": 3,
        "csum16": 4, "xor16": 5}


class StmtGen(StmtWriter):
    """Emits the statements of one function body as C source."""

    def fresh(self, base: str) -> str:
        self.g.tmp = getattr(self.g, "tmp", 0) + 1
        return f"{base}{self.g.tmp}"

    def exit_check(self) -> None:
        if self.g.fn_kind != "function":  # functions cannot exit (the front end rejects it)
            # a table's function returns the action it ran; its callers test px->exit first
            self.emit("if (px->exit) return ai;" if self.g.fn_kind == "table" else
                      "if (px->exit) return;")

    def stmts(self, ss: list[ir.Stmt]) -> None:
        for s in ss:
            self._guarded(s)
            if self.g.stack_types or self.g.has_arrays:  # an index out of range rejects in a parser
                if self.g.fn_kind == "parser":
                    self.emit("if (px->reject) return ERR_OOB;")
                else:
                    self.exit_check()

    def _guarded(self, s: ir.Stmt) -> None:
        """One statement; outside parsers, a run-time stack index out of range makes it a no-op
        and an ``if`` condition false (p4c's lowering of run-time indexes): probed first."""
        probes = dynamic_elems(s) if self.g.fn_kind != "parser" else []
        if not probes:
            getattr(self, "_" + type(s).__name__)(s)
            return
        if isinstance(s, ir.VarDecl):  # declared outside the guard, assigned inside
            self._VarDecl(ir.VarDecl(s.name, s.t, None))
            s = ir.Assign(ir.Ref(s.t, "local", s.name), s.init)
        self.emit("px->oob = 0; " + " ".join(f"(void)&{self.x(e)};" for e in probes))
        if isinstance(s, ir.If):
            self._If(s, guarded=True)
            return
        self.emit("if (!px->oob) {")
        self.level += 1
        getattr(self, "_" + type(s).__name__)(s)
        self.level -= 1
        self.emit("}")

    def nested(self, ss: list[ir.Stmt]) -> None:
        self.level += 1
        self.stmts(ss)
        self.level -= 1

    # ------------------------------------------------------------ plain statements
    def assign(self, lhs: ir.Expr, rhs: ir.Expr) -> None:
        lc = self.x(lhs)
        if isinstance(rhs, ir.StructInit):
            t = lhs.t.t
            tmp = self.fresh("_si")
            self.emit(f"{{ T_{t.pyname} {tmp}; memset(&{tmp}, 0, sizeof {tmp});")
            for (fname, _ft), item in zip(t.fields, rhs.items, strict=True):
                if isinstance(item, ir.StructInit) or isinstance(item.t, (ir.Comp, ir.Stack)):
                    self.assign(Raw(item.t, f"{tmp}.f_{pyfield(fname)}"), item)
                else:
                    self.emit(f"  {tmp}.f_{pyfield(fname)} = {self.x(item)};")
            for (fname, _ft), n in zip(t.fields, rhs.lens, strict=False):
                if n is not None:  # the current length of a varbit item
                    self.emit(f"  {tmp}.{vbl_name(t, pyfield(fname))} = {self.x(n)};")
            if isinstance(t, HeaderT):
                self.emit(f"  {tmp}._v = 1;")
            self.emit(f"  {self.g.asg_fn(lhs.t)}(&{lc}, &{tmp}); }}")
            return
        if isinstance(lhs.t, (ir.Comp, ir.Stack)):  # BMv2 assign_header & co. (ccomp.py)
            fn = self.g.asg_fn(lhs.t)
            if isinstance(rhs, (ir.Ref, ir.Field, ir.StackElem, Raw)):
                self.emit(f"{fn}(&{lc}, &{self.x(rhs)});")
            else:
                self.emit(f"{{ {ctype(lhs.t)} _as = {self.x(rhs)}; {fn}(&{lc}, &_as); }}")
            return
        self.emit(f"{lc} = {self.x(rhs)};")

    def _Assign(self, s: ir.Assign) -> None:
        self.assign(s.lhs, s.rhs)

    def _AssignSlice(self, s: ir.AssignSlice) -> None:
        t = s.lhs.t
        w = s.hi - s.lo + 1
        keep = t.mask ^ (((1 << w) - 1) << s.lo)
        lc = self.x(s.lhs)
        self.emit(f"{lc} = ({lc} & {lit(keep, t)}) | ((({ctype(t)})({self.x(s.rhs)})) << {s.lo});")

    def _VarDecl(self, s: ir.VarDecl) -> None:
        ct = ctype(s.t)
        self.emit(f"{ct} l_{s.name}; memset(&l_{s.name}, 0, sizeof l_{s.name});")
        if s.init is not None:
            self.assign(ir.Ref(s.t, "local", s.name), s.init)

    def _If(self, s: ir.If, guarded: bool = False) -> None:
        self.emit(f"if ({'!px->oob && ' if guarded else ''}({self.x(s.cond)})) {{")
        self.nested(s.then)
        if s.els:
            self.emit("} else {")
            self.nested(s.els)
        self.emit("}")

    def _Switch(self, s: ir.Switch) -> None:
        v = self.fresh("_sw")
        self.emit("{")
        self.level += 1
        if s.table is not None:
            tid = self.g.table_ids[s.table]
            self.emit(f"int {v}_hit; int {v} = T_{tid}(px, L, &{v}_hit); (void){v}_hit;")
            self.exit_check()
        else:
            self.emit(f"{ctype(s.value.t)} {v} = {self.x(s.value)};")
        first = True
        for labels, body in s.cases:
            if labels is None and s.table is not None:  # no action ran (-1): BMv2 skips the switch
                self.emit(f"{'if' if first else 'else if'} ({v} >= 0) {{")
            elif labels is None:
                self.emit("if (1) {" if first else "else {")
            else:
                keys = [str(k) if s.table is not None else lit(k, s.value.t) for k in labels]
                cond = " || ".join(f"{v} == {k}" for k in keys)
                self.emit(f"{'if' if first else 'else if'} ({cond}) {{")
            self.nested(body)
            self.emit("}")
            first = False
            if labels is None:
                break
        self.level -= 1
        self.emit("}")

    def _Loop(self, s: ir.Loop) -> None:
        """``continue`` runs the for's third clause, which marks the update due at the top."""
        first = self.fresh("_lf")
        self.emit(f"{{ int {first} = 1; for (;; {first} = 0) {{")
        self.level += 1
        if s.update:
            self.emit(f"if (!{first}) {{")
            self.nested(s.update)
            self.emit("}")
        self.stmts(s.body)
        self.level -= 1
        self.emit("} }")

    def _Break(self, s: ir.Break) -> None:
        self.emit("break;")

    def _Continue(self, s: ir.Continue) -> None:
        self.emit("continue;")

    def _Exit(self, s: ir.Exit) -> None:
        self.emit("px->exit = 1; return;")

    def _Return(self, s: ir.Return) -> None:
        if s.value is None:
            self.emit("return;")
        else:
            self.emit(f"return {self.x(s.value)};")

    def _SetValid(self, s: ir.SetValid) -> None:
        h = self.x(s.hdr)
        if s.valid:
            self.emit(f"if (!{h}._v) memset(&{h}, 0, sizeof {h});")
            self.emit(f"{h}._v = 1;")
        else:
            self.emit(f"{h}._v = 0;")

    # ------------------------------------------------------------ calls
    def call_action(self, act: ir.Action, args: list[ir.Expr], outs: list,
                    after: list[ir.Stmt] | None = None) -> None:
        """Call with copy-in/copy-out of scalar out/inout arguments.  After an `exit` the copy-out
        still happens when called from a control or table (p4c's RemoveActionParameters copies
        out before `exit`), not when called from an action (p4c inlines it, copy-out after)."""
        self.emit("{")
        self.level += 1
        cargs, backs = self._bind(act.params, args, outs)
        StmtGen(self.g, backs, 0).stmts(after or [])  # ir.ActionCall.after
        frame = "L" if act.control else "NULL"
        self.emit(f"A_{self.g.cid(act.name)}(px, {frame}{''.join(', ' + c for c in cargs)});")
        self._backs_and_exit(backs, self.g.fn_kind != "action")
        self.level -= 1
        self.emit("}")

    def _backs_and_exit(self, backs: list[str], copy_on_exit: bool) -> None:
        if not copy_on_exit:
            self.exit_check()
        for b in backs:
            self.emit(b)
        if copy_on_exit:
            self.exit_check()

    def _compound_copy(self, prm, a: ir.Expr, out) -> tuple[str, list[str]]:
        """p4c's local for a header/struct/stack argument: copied in with BMv2's assignment
        (fresh, i.e. zero and invalid, when ``out``); returns its pointer and the copy-out."""
        tmp = self.fresh("_cc")
        self.emit(f"{ctype(prm.t)} {tmp}; memset(&{tmp}, 0, sizeof {tmp});")
        if prm.direction != "out":
            self.assign(Raw(prm.t, tmp), a)
        back: list[str] = []
        if prm.direction != "in":
            StmtGen(self.g, back, 0).assign(out if out is not None else a, Raw(prm.t, tmp))
        return f"&{tmp}", back

    def _bind(self, params, args, outs):
        """Arguments of an action or function call: p4c copies every directional one in a new
        local (``RemoveActionParameters``, ``InlineFunctions``): scalars and compound values
        alike are passed by pointer to a copy; returns the C arguments and the copy-outs."""
        cargs, backs = [], []
        for prm, a, out in zip(params, args, outs + [None] * (len(params) - len(outs)), strict=False):
            if isinstance(prm.t, (ir.Comp, ir.Stack)) and prm.direction in ("in", "inout", "out"):
                ptr, back = self._compound_copy(prm, a, out)
                cargs.append(ptr)
                backs += back
            elif isinstance(prm.t, (ir.Comp, ir.Stack)):
                if isinstance(a, (ir.StructInit, ir.Default, ir.StackInit)):
                    tmp = self.fresh("_ca")
                    self.emit(f"{ctype(prm.t)} {tmp}; memset(&{tmp}, 0, sizeof {tmp});")
                    self.assign(Raw(prm.t, tmp), a)
                    cargs.append(f"&{tmp}")
                else:
                    cargs.append(f"&{self.x(a)}")
            elif prm.direction in ("out", "inout"):
                tmp = self.fresh("_co")
                self.emit(f"{ctype(prm.t)} {tmp} = {self.x(a)};")
                cargs.append(f"&{tmp}")
                StmtGen(self.g, backs, 0)._set(out if out is not None else a, tmp)  # a slice too
            else:
                cargs.append(self.x(a))
        return cargs, backs

    def _ActionCall(self, s: ir.ActionCall) -> None:
        act = self.g.prog.actions[s.action]
        self.call_action(act, s.args, s.outs, s.after)

    def _FuncCall(self, s: ir.FuncCall) -> None:
        f = self.g.prog.functions[s.func]
        self.emit("{")
        self.level += 1
        cargs, backs = self._bind(f.params, s.args, s.outs)
        call = f"F_{self.g.cid(f.name)}(px{''.join(', ' + c for c in cargs)})"
        if s.ret is None:
            self.emit(f"{call};")
        elif isinstance(s.ret.t, (ir.Comp, ir.Stack)):  # BMv2's assignment (ccomp.py)
            self.emit(f"{ctype(s.ret.t)} _fr = {call};")
            self.assign(s.ret, Raw(s.ret.t, "_fr"))
        else:
            self.emit(f"{self.x(s.ret)} = {call};")
        for b in backs:
            self.emit(b)
        self.level -= 1
        self.emit("}")

    def _TableApply(self, s: ir.TableApply) -> None:
        tid = self.g.table_ids[s.table]
        if s.hit_var:
            self.emit(f"int l_{s.hit_var} = 0;")
        self.emit(f"{{ int _h; T_{tid}(px, L, &_h);")
        self.exit_check()
        if s.hit_var:
            self.emit(f"  l_{s.hit_var} = _h;")
        self.emit("}")

    def _ControlApply(self, s: ir.ControlApply) -> None:
        b = self.g.prog.blocks[s.control]
        fr = f"L_{self.g.cid(b.name)}"
        self.emit("{")
        self.level += 1
        # the instance's frame lives in its parent's, zeroed once per packet pass (ir.ControlApply)
        self.emit(f"{fr} *_Ls = &L->i_{self.g.cid(b.name)};")
        backs = []
        for prm, a, out in zip(b.params, s.args, s.outs, strict=True):
            if a is None:  # an `out` temporary: keeps what the previous apply left
                backs.append(f"{self.x(out)} = _Ls->p_{prm.name};")
            elif isinstance(prm.t, (ir.Comp, ir.Stack)) and not s.substituted and prm.direction:
                tmp = Raw(prm.t, f"_Ls->q_{prm.name}")  # the instance's temporary (inlining.py)
                self.stmts(instance_temp_in(prm, a, tmp))
                self.emit(f"_Ls->p_{prm.name} = &_Ls->q_{prm.name};")
                if prm.direction != "in":
                    StmtGen(self.g, backs, 0).assign(out if out is not None else a, tmp)
            elif isinstance(prm.t, (ir.Comp, ir.Stack)):
                self.emit(f"_Ls->p_{prm.name} = &{self.x(a)};")
            else:
                self.emit(f"_Ls->p_{prm.name} = {self.x(a)};")
                if out is not None:
                    backs.append(f"{self.x(out)} = _Ls->p_{prm.name};")
        StmtGen(self.g, backs, 0).stmts(s.after)  # a varbit argument's copy back (ir.ControlApply)
        self.emit(f"C_{self.g.cid(s.code or b.name)}(px, _Ls);")  # this site's body (ir/calcs.py)
        self._backs_and_exit(backs, s.substituted)
        self.level -= 1
        self.emit("}")

    # ------------------------------------------------------------ parser / deparser
    def _Extract(self, s: ir.Extract) -> None:
        t = s.hdr.t.t
        h = self.x(s.hdr)
        if s.varbits is not None:
            self._extract_varbit(s, t, h)
            return
        widths = [(cpath(f), _w(ft)) for f, ft in flat_fields(t)]
        total = sum(w for _, w in widths)
        self.emit(f"if (pk->pos + {total} > pk->nbits) return ERR_SHORT;")
        # the header starts on a byte (nearly always): constant byte offsets from one pointer
        self.emit("if (!(pk->pos & 7)) { const uint8_t *_hp = pk->data + (pk->pos >> 3);")
        off = 0
        for f, w in widths:
            self.emit("  " + get_bits_at(f"{h}.{f}", "_hp", off, w))
            off += w
        self.emit("} else {")
        off = 0
        for f, w in widths:
            self.emit("  " + get_bits(f"{h}.{f}", "pk->data", f"pk->pos + {off}", w))
            off += w
        self.emit("}")
        self.emit(f"{h}._v = 1; pk->pos += {total};")

    def _ExtractNext(self, s: ir.ExtractNext) -> None:
        st = self.x(s.stack)
        self.emit(f"if (({st}).n >= {s.stack.t.size}) return ERR_OOB;")
        elem = s.stack.t.elem
        if s.member is None:
            self._Extract(ir.Extract(Raw(ir.Comp(elem), f"({st}).h[({st}).n]"), s.varbits))
        else:  # a stack of header unions: extract into one member, invalidate the others
            mt = next(ft for f, ft in elem.fields if pyfield(f) == s.member)
            self._Extract(ir.Extract(Raw(ir.Comp(mt), f"({st}).h[({st}).n].f_{s.member}"),
                                     s.varbits))
            for f, _ft in elem.fields:
                if pyfield(f) != s.member:
                    self.emit(f"({st}).h[({st}).n].f_{pyfield(f)}._v = 0;")
        self.emit(f"({st}).n++;")

    def _StackShift(self, s: ir.StackShift) -> None:
        """As rtlib.Stack.push_front/pop_front (BMv2's P4_16 swaps; the vacated elements are
        marked invalid and keep the swapped values)."""
        st, n, k = self.x(s.stack), s.stack.t.size, s.count
        if k <= 0:
            return
        elem = s.stack.t.elem
        if isinstance(elem, HeaderT):
            inval = "_s->h[_i]._v = 0;"
        else:
            inval = " ".join(f"_s->h[_i].f_{pyfield(f)}._v = 0;" for f, _ft in elem.fields)
        self.emit(f"{{ TS_{elem.pyname}_{n} *_s = &({st}); T_{elem.pyname} _t; int _i; (void)_t;")
        if s.push:
            self.emit(f"  _s->n = _s->n + {k} < {n} ? _s->n + {k} : {n};")
            if k < n:
                swap = f"_t = _s->h[_i]; _s->h[_i] = _s->h[_i - {k}]; _s->h[_i - {k}] = _t;"
                self.emit(f"  for (_i = {n - 1}; _i >= {k}; _i--) {{ {swap} }}")
            self.emit(f"  for (_i = 0; _i < {min(n, k)}; _i++) {{ {inval} }} }}")
        else:
            self.emit(f"  _s->n = _s->n > {k} ? _s->n - {k} : 0;")
            if k < n:
                swap = f"_t = _s->h[_i]; _s->h[_i] = _s->h[_i + {k}]; _s->h[_i + {k}] = _t;"
                self.emit(f"  for (_i = 0; _i < {n - k}; _i++) {{ {swap} }}")
            self.emit(f"  for (_i = {max(n - k, 0)}; _i < {n}; _i++) {{ {inval} }} }}")

    def _Advance(self, s: ir.Advance) -> None:
        step = "" if s.peek else " pk->pos += _n;"
        self.emit(
            f"{{ u64 _n = {self.x(s.bits)}; if (pk->pos + _n > pk->nbits) return ERR_SHORT;{step} }}"
        )

    def _Verify(self, s: ir.Verify) -> None:
        self.emit(f"if (!({self.x(s.cond)})) return (int)({self.x(s.error)});")

    def _extract_varbit(self, s: ir.Extract, t, h: str) -> None:
        """As layout.extract_source: size checks in the Python backend's order, then field by field."""
        fixed = sum(_w(ft) for _f, ft in flat_fields(t) if not isinstance(ft, VarbitT))
        mx = sum(ft.max_width for _f, ft in flat_fields(t) if isinstance(ft, VarbitT))
        self.emit(f"{{ u64 _vb = (u64)({self.x(s.varbits)}); size_t _pos = pk->pos;")
        self.emit(f"  if (_vb > {mx}) return ERR_HDR_TOO_LONG; if (_vb & 7) return ERR_INVALID_ARG;")
        self.emit(f"  if (pk->pos + {fixed} + _vb > pk->nbits) return ERR_SHORT;")
        for f, ft in flat_fields(t):
            if isinstance(ft, VarbitT) and ft.max_width > 128:  # a byte array, right-aligned
                n, fc = wide_bytes(ir.Bits(ft.max_width)), f"{h}.{cpath(f)}"
                self.emit(f"  memset(&{fc}, 0, {n}); for (u64 _i = 0; _i < _vb / 8; _i++) "
                          f"{fc}.b[{n} - _vb / 8 + _i] = (uint8_t)getb64(pk->data, _pos + 8 * _i, 8); "
                          "_pos += _vb;")
            elif isinstance(ft, VarbitT):
                self.emit(f"  {h}.{cpath(f)} = _vb ? getb128(pk->data, _pos, (int)_vb) : 0; _pos += _vb;")
            else:
                w = _w(ft)
                self.emit(f"  {get_bits(f'{h}.{cpath(f)}', 'pk->data', '_pos', w)} _pos += {w};")
        self.emit(f"  {h}._vbl = _vb; {h}._v = 1; pk->pos = _pos; }}")

    def _emit_varbit(self, t, h: str) -> None:
        fixed = sum(_w(ft) for _f, ft in flat_fields(t) if not isinstance(ft, VarbitT))
        self.emit(f"if ({h}._v) {{ size_t _nb = ({fixed} + {h}._vbl) / 8, _o = 0;")
        self.emit("  if (ob_reserve(ob, _nb)) return; uint8_t *_d = ob->buf + ob->len;")
        for f, ft in flat_fields(t):
            if isinstance(ft, VarbitT) and ft.max_width > 128:
                self.emit("  " + _put_wide("_d", "_o", f"{h}._vbl", f"{h}.{cpath(f)}", ft.max_width))
            elif isinstance(ft, VarbitT):
                self.emit(f"  if ({h}._vbl) putb128(_d, _o, (int){h}._vbl, {h}.{cpath(f)}); _o += {h}._vbl;")
            else:
                w = _w(ft)
                self.emit(f"  {put_bits('_d', '_o', w, f'{h}.{cpath(f)}')} _o += {w};")
        self.emit("  ob->len += _nb; }")

    def _Emit(self, s: ir.Emit) -> None:
        t = s.hdr.t.t
        h = self.x(s.hdr)
        if any(isinstance(ft, VarbitT) for _f, ft in t.fields):
            self._emit_varbit(t, h)
            return
        widths = [(cpath(f), _w(ft)) for f, ft in flat_fields(t)]
        nbytes = sum(w for _, w in widths) // 8
        self.emit(f"if ({h}._v) {{ if (ob_reserve(ob, {nbytes})) return; uint8_t *_d = ob->buf + ob->len;")
        off = 0
        for f, w in widths:
            self.emit(f"  {put_bits_at('_d', off, w, f'{h}.{f}')}")
            off += w
        self.emit(f"  ob->len += {nbytes}; }}")

    # ------------------------------------------------------------ externs
    def _ExternCall(self, s: ir.ExternCall) -> None:
        getattr(self, "_x_" + s.name.replace(".", "_"))(s)

    def _x_mark_to_drop(self, s) -> None:
        std = self.x(s.args[0]) if s.args else "(*(std_t *)px->std)"  # bare: this pass's
        self.emit(f"{std}.f_egress_spec = 511; {std}.f_mcast_grp = 0;")

    def _x_register_read(self, s) -> None:
        rid, size = self.g.reg(s.inst)
        self.emit(
            f"{{ u64 _i = (u64)({self.x(s.args[0])}); "
            f"if (_i < {size}) {self.x(s.out)} = ST_(px)->R{rid}[_i]; }}"
        )

    def _x_register_write(self, s) -> None:
        rid, size = self.g.reg(s.inst)
        self.emit(
            f"{{ u64 _i = (u64)({self.x(s.args[0])}); "
            f"if (_i < {size}) ST_(px)->R{rid}[_i] = {self.x(s.args[1])}; }}"
        )

    def _x_counter_count(self, s) -> None:
        cid = self.g.ctrs[s.inst]
        size = self.g.prog.externs[s.inst].size
        self.emit(f"{{ u64 _i = (u64)({self.x(s.args[0])}); if (_i < {size}) {{ ST_(px)->C{cid}[_i][0]++; "
                  f"ST_(px)->C{cid}[_i][1] += px->cur_len; }} }}")

    def _set(self, out: ir.Expr, code: str) -> None:
        """``out = code`` for a scalar lvalue or a slice (``code`` already has out's width)."""
        if isinstance(out, ir.Slice):
            self._AssignSlice(ir.AssignSlice(out.x, out.hi, out.lo, Raw(out.t, code)))
        else:
            self.emit(f"{self.x(out)} = {code};")

    def _x_meter_execute(self, s) -> None:
        x = self.g.prog.externs[s.inst]
        amount = "px->cur_len" if x.meter_kind else "1"
        self.emit(f"{{ u64 _i = (u64)({self.x(s.args[0])}); if (_i < {x.size}) {{")
        self._set(s.out, f"(({ctype(s.out.t)})ss_meter_exec(&ST_(px)->M{self.g.meters[s.inst]}[_i], "
                         f"{amount}, ss_now(px)) & {mask(s.out.t)})")
        self.emit("} }")

    def _x_direct_meter_read(self, s) -> None:
        # set by ss_lookup on a hit of the owning table; after a miss the target keeps its value
        # (with ir.Table.meter_target the table function writes it and read() is no statement)
        if self.g.prog.tables[self.g.prog.externs[s.inst].table].meter_target is not None:
            return
        self.emit("if (px->dm_color >= 0) {")
        self._set(s.out, f"(({ctype(s.out.t)})px->dm_color & {mask(s.out.t)})")
        self.emit("}")

    def _pack(self, items, payload: bool) -> tuple[str, str]:
        """Emit a byte buffer holding a field list (MSB first, zero-padded); returns (buf, len)."""
        if any(not isinstance(w, int) or valid is not None for _, w, valid in items):
            return self._pack_dynamic(items, payload)
        total = sum(w for _, w, _v in items)
        nb = (total + 7) // 8
        buf = self.fresh("_fb")
        extra = " + px->payload_len" if payload else ""
        self.emit(f"uint8_t {buf}[{nb}{extra} + 1]; memset({buf}, 0, {nb});")
        off = 0
        for e, w, _v in items:
            self.emit(put_bits(buf, str(off), w, self.x(e)))
            off += w
        if payload:
            self.emit(f"if (px->payload_len) memcpy({buf} + {nb}, px->payload, px->payload_len);")
        return buf, f"{nb}{extra}"

    def _pack_dynamic(self, items, payload: bool) -> tuple[str, str]:
        """As _pack, when the length is known at run time only: a varbit adds its current
        length in bits, a field of an invalid header nothing (BMv2's ``BufBuilder``)."""
        nb = (sum(w if isinstance(w, int) else w[2] for _, w, _v in items) + 7) // 8
        buf, off = self.fresh("_fb"), self.fresh("_fo")
        extra = " + px->payload_len" if payload else ""
        self.emit(f"uint8_t {buf}[{nb}{extra} + 1]; memset({buf}, 0, {nb}); size_t {off} = 0;")
        for e, w, valid in items:
            if isinstance(w, int):
                code = f"{put_bits(buf, off, w, self.x(e))} {off} += {w};"
            elif w[2] > 128:
                vl = f"({self.x(w[1])})"
                code = _put_wide(buf, off, vl, self.x(e), w[2])
            else:
                vl = f"({self.x(w[1])})"
                code = f"if ({vl}) putb128({buf}, {off}, (int){vl}, (u128)({self.x(e)})); {off} += {vl};"
            self.emit(f"if ({self.x(valid)}) {{ {code} }}" if valid is not None else code)
        if payload:
            self.emit(f"if (px->payload_len) memcpy({buf} + ({off} + 7) / 8, px->payload, px->payload_len);")
        return buf, f"({off} + 7) / 8{extra}"

    def _algo(self, s) -> str:
        """``ss_hash``'s algorithm and calculation arguments (a custom CRC is its calculation's
        own, ``SW.crcc[i]``; the index is 0 for the other algorithms)."""
        return f"{ALGO[s.extra['algo']]}, {self.g.crc_ids.get(s.extra.get('calc', ''), 0)}"

    def _x_hash(self, s) -> None:
        base, items, mx = s.args
        t = s.out.t
        self.emit("{")
        buf, n = self._pack(items, False)
        self.emit(
            f"{self.x(s.out)} = ({ctype(t)})(((u128)({self.x(base)}) + ss_hash(px, {self._algo(s)}, "
            f"{buf}, {n}, (u128)({self.x(mx)}))) & {mask(t)});"
        )
        self.emit("}")

    def _checksum(self, s, payload: bool) -> None:
        cond, items = s.args
        t = s.out.t
        self.emit(f"if ({self.x(cond)}) {{")
        buf, n = self._pack(items, payload)
        h = f"(({ctype(t)})ss_hash(px, {self._algo(s)}, {buf}, {n}, 0) & {mask(t)})"
        if s.name.startswith("verify"):
            self.emit(f"if ({h} != {self.x(s.out)}) px->checksum_error = 1;")
        else:
            self.emit(f"{self.x(s.out)} = {h};")
        self.emit("}")

    def _x_clone(self, s) -> None:
        ty, sess = s.args
        self.emit(f"px->clone_set = 1; px->clone_type = (int)({self.x(ty)}); "
                  f"px->clone_session = {self.x(sess)}; px->clone_fl = {s.extra['fl']};")

    def _x_resubmit(self, s) -> None:
        self.emit(f"px->resubmit_fl = {s.extra['fl']};")

    def _x_recirculate(self, s) -> None:
        self.emit(f"px->recirc_fl = {s.extra['fl']};")

    def _x_random(self, s) -> None:
        lo, hi = s.args
        t = s.out.t
        ct = ctype(t)
        self.emit(
            f"{{ {ct} _lo = {self.x(lo)}, _hi = {self.x(hi)}; if (_lo > _hi) {{ {ct} _t = _lo; _lo = _hi; "
            f"_hi = _t; }} u128 _span = (u128)(_hi - _lo) + 1, _r = h_random(ss_rng(px)); "
            f"{self.x(s.out)} = ({ct})(_lo + (_span ? _r % _span : _r)); }}"
        )

    def _x_digest(self, s) -> None:
        items = s.args[0]
        vals = ", ".join(f"(u128)({self.x(e)})" for e, _ in items) or "0"
        self.emit(f"{{ u128 _dv[{max(len(items), 1)}] = {{{vals}}}; ss_digest_push(px, {s.extra['id']}, _dv, "
                  f"{len(items)}); }}")

    def _x_log_msg(self, s) -> None:
        """Only packet traces show log_msg, assert and assume (the python backend's)."""

    _x_assert = _x_assume = _x_log_msg

    def _x_truncate(self, s) -> None:
        self.emit(f"px->truncate_set = 1; px->truncate = {self.x(s.args[0])};")


def _w(ft) -> int:
    return field_width(ft)


def _put_wide(buf: str, off: str, vbl: str, value: str, width: int) -> str:
    """C writing the low ``vbl`` bits of a wide varbit value (a byte array, cexpr.wide_bytes)
    at bit ``off`` of ``buf``, then advancing ``off``."""
    n = wide_bytes(ir.Bits(width))
    return (f"{{ const uint8_t *_w = ({value}).b + {n} - {vbl} / 8; for (u64 _i = 0; _i < {vbl} / 8; "
            f"_i++) putb64({buf}, {off} + 8 * _i, 8, _w[_i]); {off} += {vbl}; }}")

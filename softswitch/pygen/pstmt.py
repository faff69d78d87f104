"""Python source for typed IR statements: assignments, control flow, calls, parser and deparser
statements and the v1model externs."""

from __future__ import annotations

from ..check.fields import pyfield
from ..ir import nodes as ir
from ..ir.common import instance_temp_in
from ..ir.textgen import StmtWriter
from ..ir.walk import dynamic_elems
from .pexpr import Raw, bits, default, wrap


def scalar_outs(params: list[ir.Param]) -> list[int]:
    """Indexes of the out/inout parameters passed by copy-in/copy-out (scalars)."""
    return [i for i, p in enumerate(params)
            if p.direction in ("out", "inout") and not isinstance(p.t, (ir.Comp, ir.Stack))]


def _array_elem(e: ir.Expr) -> bool:
    """Is ``e`` a scalar element of a non-header array at a run-time index (written by ``put``)?"""
    return isinstance(e, ir.StackElem) and isinstance(e.base.t, ir.Comp)


class StmtGen(StmtWriter):
    """Emits the statements of one function body as Python source."""

    def stmts(self, ss: list[ir.Stmt]) -> None:
        for s in ss:
            self._guarded(s)

    def nested(self, ss: list[ir.Stmt]) -> None:
        self.level += 1
        n = len(self.o)
        self.stmts(ss)
        if len(self.o) == n:
            self.emit("pass")
        self.level -= 1

    def _guarded(self, s: ir.Stmt) -> None:
        """One statement; outside parsers a run-time stack index out of range makes it a no-op
        and an ``if`` condition false (p4c's lowering); in parsers it is StackOutOfBounds."""
        if self.g.fn_kind == "parser" or not dynamic_elems(s):
            getattr(self, "_" + type(s).__name__)(s)
            return
        if isinstance(s, ir.If):
            c = self.g.fresh("_c")
            self.emit(f"{c} = False")
            self._try([f"{c} = {self.x(s.cond)}"])
            self._if(c, s)
            return
        if isinstance(s, ir.Switch):
            v = self.g.fresh("_sw")
            self.emit(f"{v} = None")
            self._try([f"{v} = {self.x(s.value)}"])
            self.emit(f"if {v} is not None:")
            self.level += 1
            self._cases(v, s)
            self.level -= 1
            return
        if isinstance(s, ir.VarDecl):  # declared outside the guard, assigned inside
            self.emit(f"{s.name} = {default(s.t, self.g.err_oob)}")
            s = ir.Assign(ir.Ref(s.t, "local", s.name), s.init)
        inner: list[str] = []
        getattr(StmtGen(self.g, inner, 0), "_" + type(s).__name__)(s)
        self._try(inner)

    def _try(self, lines: list[str]) -> None:
        self.emit("try:")
        for ln in lines:
            self.emit("    " + ln)
        self.emit("except _OOR:")
        self.emit("    pass")

    # ------------------------------------------------------------ plain statements
    def assign(self, lhs: ir.Expr, rhs_code: str) -> None:
        """``lhs = rhs`` for any lvalue: compound in place, a slice by its bits."""
        if isinstance(lhs, ir.Slice):
            self._AssignSlice(ir.AssignSlice(lhs.x, lhs.hi, lhs.lo, Raw(lhs.t, rhs_code)))
        elif isinstance(lhs.t, (ir.Comp, ir.Stack)):  # in place: BMv2's assign_header & co.
            self.emit(f"{self.x(lhs)}._asg({rhs_code})")
        elif _array_elem(lhs):
            self.emit(f"{self.x(lhs.base)}.put({self.x(lhs.index)}, {rhs_code})")
        else:
            self.emit(f"{self.x(lhs)} = {rhs_code}")

    def _Assign(self, s: ir.Assign) -> None:
        self.assign(s.lhs, self.x(s.rhs))

    def _AssignSlice(self, s: ir.AssignSlice) -> None:
        t = s.lhs.t
        w = s.hi - s.lo + 1
        keep = t.mask ^ (((1 << w) - 1) << s.lo)
        lc = self.x(s.lhs)
        code = f"({bits(lc, t)} & {keep}) | ({bits(self.x(s.rhs), s.rhs.t)} << {s.lo})"
        self.assign(s.lhs, wrap(code, t) if t.signed else "(" + code + ")")

    def _VarDecl(self, s: ir.VarDecl) -> None:
        if s.init is None:
            self.emit(f"{s.name} = {default(s.t, self.g.err_oob)}")
        elif isinstance(s.t, (ir.Comp, ir.Stack)):
            if isinstance(s.init, ir.StructInit):
                self.emit(f"{s.name} = {self.x(s.init)}")
            else:
                self.emit(f"{s.name} = _fresh({default(s.t, self.g.err_oob)}, {self.x(s.init)})")
        else:
            self.emit(f"{s.name} = {self.x(s.init)}")

    def _if(self, cond: str, s: ir.If) -> None:
        self.emit(f"if {cond}:")
        self.nested(s.then)
        if s.els:
            self.emit("else:")
            self.nested(s.els)

    def _If(self, s: ir.If) -> None:
        self._if(self.x(s.cond), s)

    def _Switch(self, s: ir.Switch) -> None:
        v = self.g.fresh("_sw")
        if s.table is not None:
            self.emit(f"{v} = T_{self.g.cid(s.table)}(L)[1]")
        else:
            self.emit(f"{v} = {self.x(s.value)}")
        self._cases(v, s)

    def _cases(self, v: str, s: ir.Switch) -> None:
        first = True
        for labels, body in s.cases:
            if labels is None and s.table is not None:  # no action ran (-1): BMv2 skips the switch
                self.emit(f"{'if' if first else 'elif'} {v} >= 0:")
            elif labels is None:
                self.emit("if True:" if first else "else:")
            else:
                keys = [str(k) if s.table is not None else self.x(ir.Const(s.value.t, k)) for k in labels]
                cond = " or ".join(f"{v} == {k}" for k in keys)
                self.emit(f"{'if' if first else 'elif'} {cond}:")
            self.nested(body)
            first = False
            if labels is None:
                break

    def _Loop(self, s: ir.Loop) -> None:
        """``continue`` goes back to the top, where the update runs from the second time on."""
        first = self.g.fresh("_lf")
        self.emit(f"{first} = True")
        self.emit("while True:")
        self.level += 1
        if s.update:
            self.emit(f"if not {first}:")
            self.nested(s.update)
        self.emit(f"{first} = False")
        self.stmts(s.body)
        self.level -= 1

    def _Break(self, s: ir.Break) -> None:
        self.emit("break")

    def _Continue(self, s: ir.Continue) -> None:
        self.emit("continue")

    def _Exit(self, s: ir.Exit) -> None:
        self.emit("raise _Exit()")

    def _Return(self, s: ir.Return) -> None:
        self.emit(self.g.return_code(None if s.value is None else self.x(s.value)))

    def _SetValid(self, s: ir.SetValid) -> None:
        h = self.x(s.hdr)
        if s.valid:
            self.emit(f"if not {h}._v: {h}._inval()")
            self.emit(f"{h}._v = True")
        else:
            self.emit(f"{h}._v = False")

    # ------------------------------------------------------------ calls
    def _compound_copy(self, prm: ir.Param, a: ir.Expr, out) -> tuple[str, list[str]]:
        """p4c's local for a header/struct/stack argument: a fresh value, assigned from the
        argument (BMv2's assignment) unless ``out``; returns its name and the copy-out lines."""
        tmp = self.g.fresh("_cc")
        self.emit(f"{tmp} = {default(prm.t, self.g.err_oob)}")
        if prm.direction != "out":
            self.emit(f"{tmp}._asg({self.x(a)})")
        back: list[str] = []
        if prm.direction != "in":
            StmtGen(self.g, back, 0).assign(out if out is not None else a, tmp)
        return tmp, back

    def call(self, fn: str, params: list[ir.Param], args: list[ir.Expr], outs: list,
             ret: ir.Expr | None = None, lead: str = "", value: bool = False,
             copy_on_exit: bool = False, after: list[ir.Stmt] | None = None) -> None:
        """``fn(lead, args)`` as p4c lowers a call: every directional argument is a copy (compound
        ones in a fresh local, scalar out/inout ones returned by the callee as a tuple, after its
        value when ``value``: functions), copied back after the call, and also when it exits if
        ``copy_on_exit`` (an action called from a control or table: ``RemoveActionParameters``;
        the callee hands its outs over in ``_Exit.outs``)."""
        outs = outs + [None] * (len(params) - len(outs))
        cargs: list[str] = []
        compound: dict[int, list[str]] = {}
        for i, (prm, a) in enumerate(zip(params, args, strict=False)):
            if isinstance(prm.t, (ir.Comp, ir.Stack)) and prm.direction in ("in", "inout", "out"):
                tmp, compound[i] = self._compound_copy(prm, a, outs[i])
                cargs.append(tmp)
            else:
                cargs.append(self.x(a))
        call = f"{fn}({', '.join(([lead] if lead else []) + cargs)})"
        so = scalar_outs(params)

        def backs(src: str, first: int) -> list[str]:
            lines: list[str] = []
            g, k = StmtGen(self.g, lines, 0), first
            for i in range(len(params)):
                if i in so:
                    g.assign(outs[i] if outs[i] is not None else args[i], f"{src}[{k}]")
                    k += 1
                lines += compound.get(i, [])
            g.stmts(after or [])  # ir.ActionCall.after
            return lines

        r = self.g.fresh("_r") if so or ret is not None else None
        line = f"{r} = {call}" if r is not None else call
        if copy_on_exit and (so or compound or after):
            self._try_exit([line], backs("_e.outs", 0))
        else:
            self.emit(line)
        if ret is not None:
            self.assign(ret, f"{r}[0]" if so else r)
        for ln in backs(r or "", int(value)):
            self.emit(ln)

    def _try_exit(self, body: list[str], on_exit: list[str]) -> None:
        """``body``; when it exits, ``on_exit`` first, then the exit goes on."""
        self.emit("try:")
        for ln in body:
            self.emit("    " + ln)
        self.emit("except _Exit as _e:")
        for ln in on_exit:
            self.emit("    " + ln)
        self.emit("    raise")

    def _ActionCall(self, s: ir.ActionCall) -> None:
        act = self.g.prog.actions[s.action]
        self.call(f"A_{self.g.cid(act.name)}", act.params, s.args, s.outs, lead="L",
                  copy_on_exit=self.g.fn_kind != "action", after=s.after)

    def _FuncCall(self, s: ir.FuncCall) -> None:
        f = self.g.prog.functions[s.func]
        self.call(f"F_{self.g.cid(f.name)}", f.params, s.args, s.outs, s.ret, value=True)

    def _TableApply(self, s: ir.TableApply) -> None:
        call = f"T_{self.g.cid(s.table)}(L)"
        self.emit(f"{s.hit_var} = {call}[0]" if s.hit_var else call)

    def _ControlApply(self, s: ir.ControlApply) -> None:
        """A sub-control: its arguments substituted (compound ones by reference, scalar copy-out
        also after an ``exit``) or through p4c's temporaries (``inlining.py``)."""
        b = self.g.prog.blocks[s.control]
        v = self.g.fresh("_L")
        self.emit(f"{v} = L.i_{self.g.cid(b.name)}")  # the instance's frame (see ir.ControlApply)
        backs: list[str] = []
        for prm, a, out in zip(b.params, s.args, s.outs, strict=True):
            if a is None:  # an `out` temporary: keeps what the previous apply left
                StmtGen(self.g, backs, 0).assign(out, f"{v}.p_{prm.name}")
                continue
            if isinstance(prm.t, (ir.Comp, ir.Stack)) and not s.substituted and prm.direction:
                tmp = f"{v}.q_{prm.name}"  # the instance's temporary (ir.ControlApply)
                self.stmts(instance_temp_in(prm, a, Raw(prm.t, tmp)))
                self.emit(f"{v}.p_{prm.name} = {tmp}")
                if prm.direction != "in":
                    StmtGen(self.g, backs, 0).assign(out if out is not None else a, tmp)
                continue
            self.emit(f"{v}.p_{prm.name} = {self.x(a)}")
            if out is not None and not isinstance(prm.t, (ir.Comp, ir.Stack)):
                StmtGen(self.g, backs, 0).assign(out, f"{v}.p_{prm.name}")
        StmtGen(self.g, backs, 0).stmts(s.after)  # a varbit argument's copy back (ir.ControlApply)
        call = f"C_{self.g.cid(s.code or b.name)}({v})"  # this site's copy of the body (ir/calcs.py)
        if s.substituted and backs:
            self._try_exit([call], backs)
        else:
            self.emit(call)
        for ln in backs:
            self.emit(ln)

    # ------------------------------------------------------------ parser / deparser
    def _Extract(self, s: ir.Extract) -> None:
        cls = s.hdr.t.t.pyname
        vb = "" if s.varbits is None else f", {self.x(s.varbits)}"
        self.emit(f"X_{cls}({self.g.pk}, {self.x(s.hdr)}{vb})")

    def _ExtractNext(self, s: ir.ExtractNext) -> None:
        v = self.g.fresh("_s")
        elem = s.stack.t.elem
        vb = "" if s.varbits is None else f", {self.x(s.varbits)}"
        self.emit(f"{v} = {self.x(s.stack)}")
        if s.member is None:
            self.emit(f"X_{elem.pyname}({self.g.pk}, {v}.next(){vb})")
        else:  # a stack of header unions: extract into one member, invalidate the others
            mt = next(ft for f, ft in elem.fields if pyfield(f) == s.member)
            self.emit(f"X_{mt.pyname}({self.g.pk}, {v}.next().{s.member}{vb})")
            for f, _ft in elem.fields:
                if pyfield(f) != s.member:
                    self.emit(f"{v}.h[{v}.n].{pyfield(f)}._v = False")
        self.emit(f"{v}.n += 1")

    def _StackShift(self, s: ir.StackShift) -> None:
        self.emit(f"{self.x(s.stack)}.{'push_front' if s.push else 'pop_front'}({s.count})")

    def _Advance(self, s: ir.Advance) -> None:
        if s.peek:
            pk = self.g.pk
            self.emit(f"if {pk}.pos + {self.x(s.bits)} > {pk}.nbits: raise _Reject({self.g.err_short})")
            return
        self.emit(f"_adv({self.g.pk}, {self.x(s.bits)}, {self.g.err_short})")

    def _Verify(self, s: ir.Verify) -> None:
        self.emit(f"if not {self.x(s.cond)}: raise _Reject({self.x(s.error)})")

    def _Emit(self, s: ir.Emit) -> None:
        self.emit(f"E_{s.hdr.t.t.pyname}({self.g.pk}.parts, {self.x(s.hdr)})")

    # ------------------------------------------------------------ externs
    def _ExternCall(self, s: ir.ExternCall) -> None:
        getattr(self, "_x_" + s.name.replace(".", "_"))(s)

    def _x_mark_to_drop(self, s) -> None:
        std = self.x(s.args[0]) if s.args else "_C.std"  # bare: this pass's (BMv2's drop)
        self.emit(f"{std}.egress_spec = 511")
        self.emit(f"{std}.mcast_grp = 0")

    def _x_register_read(self, s) -> None:
        out = self.x(s.out)
        self.assign(s.out, f"{self.g.obj(s.inst)}.read({self.x(s.args[0])}, {out})")

    def _x_register_write(self, s) -> None:
        self.emit(f"{self.g.obj(s.inst)}.write({self.x(s.args[0])}, {self.x(s.args[1])})")

    def _x_counter_count(self, s) -> None:
        self.emit(f"{self.g.obj(s.inst)}.count({self.x(s.args[0])}, _ST.cur_len)")

    def _x_meter_execute(self, s) -> None:
        out = self.x(s.out)
        col = f"{self.g.obj(s.inst)}.execute({self.x(s.args[0])}, {out}, _ST.cur_len, _ST.now_us())"
        self.assign(s.out, wrap(col, s.out.t) if isinstance(s.out.t, ir.Bits) else col)

    def _x_direct_meter_read(self, s) -> None:
        # the colour of the owning table's hit; after a miss BMv2 writes nothing, so the target
        # keeps its value.  When the table writes it on each hit (ir.Table.meter_target), p4c's
        # read() is no statement at all.
        if self.g.prog.tables[self.g.prog.externs[s.inst].table].meter_target is not None:
            return
        out = self.x(s.out)
        col = f"(_ST.dm_color if _ST.dm_color >= 0 else {out})"
        self.assign(s.out, wrap(col, s.out.t) if isinstance(s.out.t, ir.Bits) else col)

    def _pack(self, items) -> str:
        """``_pack(values, widths)`` of a field list; a varbit adds its current length, a field
        of an invalid header nothing (width 0)."""
        vals = "".join(bits(self.x(e), e.t) + ", " for e, _w, _v in items)
        widths = ""
        for _e, w, valid in items:
            width = str(w) if isinstance(w, int) else self.x(w[1])
            widths += (f"({width} if {self.x(valid)} else 0)" if valid is not None else width) + ", "
        return f"_pack(({vals}), ({widths}))"

    @staticmethod
    def _hash_fn(s) -> str:
        """The function computing a calculation: a custom CRC is its call site's own (``_CRC``,
        by BMv2 calculation name), the other algorithms are shared."""
        if s.extra["algo"] in ("crc16_custom", "crc32_custom"):
            return f"_CRC[{s.extra['calc']!r}]"
        return f"_HASH[{s.extra['algo']!r}]"

    def _x_hash(self, s) -> None:
        base, items, mx = s.args
        h = f"{self._hash_fn(s)}({self._pack(items)})"
        if isinstance(mx, ir.Const):  # BMv2: base + hash % max (max 0: the hash itself)
            val = f"{self.x(base)} + {h} % {mx.value}" if mx.value else f"{self.x(base)} + {h}"
        else:
            m = self.x(mx)
            val = f"{self.x(base)} + ({h} % {m} if {m} else {h})"
        self.assign(s.out, wrap(val, s.out.t))

    def _checksum(self, s, payload: bool) -> None:
        cond, items = s.args
        data = self._pack(items) + (" + _C.payload" if payload else "")
        h = f"({self._hash_fn(s)}({data}) & {s.out.t.mask})"
        if s.name.startswith("verify"):
            self.emit(f"if {self.x(cond)} and {h} != {self.x(s.out)}: _C.checksum_error = 1")
        else:
            self.emit(f"if {self.x(cond)}:")
            self.level += 1
            self.assign(s.out, h)
            self.level -= 1

    def _field_list(self, fl: int) -> str:
        """What pipeline.PacketFlow preserves: None, a field list id, or the field names."""
        if fl < 0:
            return "None"
        if fl >= 1 << 20:  # an old-style list expression (clone3, resubmit, recirculate)
            return repr(tuple(self.g.prog.field_lists[fl]))
        return str(fl)

    def _x_clone(self, s) -> None:
        ty, sess = s.args
        self.emit(f"_C.clone = ({self.x(ty)}, {self.x(sess)}, {self._field_list(s.extra['fl'])})")

    def _x_resubmit(self, s) -> None:
        self.emit(f"_C.resubmit = {self._field_list(s.extra['fl'])}")

    def _x_recirculate(self, s) -> None:
        self.emit(f"_C.recirculate = {self._field_list(s.extra['fl'])}")

    def _x_random(self, s) -> None:
        lo, hi = s.args
        self.assign(s.out, f"_rand({self.x(lo)}, {self.x(hi)})")

    def _x_digest(self, s) -> None:
        vals = "".join(bits(self.x(e), e.t) + ", " for e, _w in s.args[0])
        self.emit(f"_C.digests.append(({s.extra['type']!r}, ({vals})))")

    def _x_truncate(self, s) -> None:
        self.emit(f"_C.truncate = {self.x(s.args[0])}")

    def _x_log_msg(self, s) -> None:
        if self.g.trace:
            self.emit(f"_C.trace.append({'log: ' + s.extra['msg']!r})")

    def _x_assert(self, s) -> None:
        self.emit(f"if not {self.x(s.args[0])}: _C.trace.append('{s.name} failed')")

    _x_assume = _x_assert


__all__ = ["StmtGen", "scalar_outs"]

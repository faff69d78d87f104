"""Lowering: the checked program (front end + Python generator's metadata) to the typed IR.

Runs after ``softswitch.check.program.Program`` accepted the program, so every construct here is
already type-checked; this pass only computes the types the IR carries (widths and signedness
of every expression, the width every literal takes) and resolves names to IR objects.  A
construct the IR does not cover raises ``Unsupported`` naming it (and its source position).
"""

from __future__ import annotations

from lark import Tree

from ..check.decls import ann_dict
from ..check.fields import pyfield
from ..check.matchkeys import entry_norms
from ..check.types import BitT, BoolT, EnumT, ErrorT, HeaderT, NamedT, StructLikeT, StructT, VarbitT
from ..frontend.specialize import CHECK_ONLY
from . import nodes as ir
from .body import _Body
from .calcs import name_calculations
from .calls import varbit_through_box
from .common import Unsupported, _pos, _qualify, _Scope, init_varbit, irtype, varbit_box, varbit_var
from .walk import direct_meter_target


class Lowering:
    """Builds ``ir.Program`` from a checked ``softswitch.check.program.Program``."""

    def __init__(self, prog):
        self.p = prog
        self.d = prog.decls
        self.blocks: dict[str, ir.Block] = {}
        self.actions: dict[str, ir.Action] = {}
        # top-level actions whose body cannot be lowered, refused only where used (p4c drops
        # an action nothing uses before the back end sees it)
        self.unlowered: dict[str, Unsupported] = {}
        self.tables: dict[str, ir.Table] = {}
        self.functions: dict[str, ir.Function] = {}
        self.externs: dict[str, ir.Extern] = {}
        self.field_lists: dict[int, list[str]] = {}
        self.digests: list[StructLikeT] = []
        self.value_sets: list[str] = []
        self.varbit_boxes: dict[int, StructT] = {}  # varbit<N> variables (common.varbit_var)
        self.block_ptypes: dict[str, list] = {}  # block -> its parameters' P4 types
        self.tmp = 0

    def run(self) -> ir.Program:
        p = self.p
        for fname, flds in _annotated_field_lists(p).items():
            self.field_lists[fname] = flds
        for inst in p.extern_insts.values():
            self._extern(inst)
        top: dict = {name: ("action", info) for name, info in p._top.actions.items()}
        for d in self.d.global_externs:  # top-level register/counter/meter instances
            sym = p.gscope.names.get(str(d.children[3].children[0]))
            if sym is not None and sym.kind == "extern":
                top[str(d.children[3].children[0])] = ("extern", sym.info.name)
        self.top_scope = _Scope(None, top)
        for name, tree in self.d.functions.items():
            if not _check_only(tree):
                self._function(name, tree)
        for info in p._top.actions.values():
            try:
                self._action(info, self.top_scope, None)
            except Unsupported as e:
                self.actions.pop(info.name, None)
                self.unlowered[info.name] = e
        roles = {}
        for role in ("parser", "verify", "ingress", "egress", "compute", "deparser"):
            bname = p.block_names[role]
            roles[role] = bname
            tree = self.d.parsers[bname] if role == "parser" else self.d.controls[bname]
            self._block(bname, tree, "parser" if role == "parser" else "control")
        headers = [t for t in self.d.header_order] + list(self.varbit_boxes.values())
        for t in headers:
            irtype(t, "")
        for name, t in self.tables.items():
            dm = p.tables[name].direct_meter
            if dm:
                t.meter_target = direct_meter_target([self.actions[a] for a in t.actions], dm)
        out = ir.Program(headers, self.blocks, roles, self.actions, self.tables, self.functions,
                         self.externs, list(self.d.errors), self.field_lists, self.digests,
                         self.value_sets, p.hdr_t, p.meta_t, p.std_t)
        out.calcs = name_calculations(out, set(getattr(p, "identifiers", ())), list(self.d.controls))
        return out

    # ------------------------------------------------------------ declarations
    def _extern(self, inst) -> None:
        o = inst.obj
        if inst.extern == "register":
            self.externs[inst.name] = ir.Extern(inst.name, "register", o.size, o.width, o.signed)
        elif inst.extern == "counter":
            self.externs[inst.name] = ir.Extern(inst.name, inst.extern, o.size)
        elif inst.extern == "meter":
            self.externs[inst.name] = ir.Extern(inst.name, inst.extern, o.size, meter_kind=o.kind)
        elif inst.extern not in ("action_profile", "action_selector"):  # profiles live in ir.Table
            self.externs[inst.name] = ir.Extern(inst.name, inst.extern, 0, table=getattr(o, "table", None))

    def _params(self, params, varbit_in: tuple[str, ...] = ()) -> list[ir.Param]:
        """IR parameters; one of type ``varbit<N>`` with a direction in ``varbit_in`` is passed in
        a struct of its own (value and current length, ``common.varbit_arg``; out/inout ones
        through ``calls.varbit_through_box``), others are refused (their length would be lost:
        only what the front end leaves, e.g. a V1Switch block's)."""
        out = []
        for p in params:
            if isinstance(p.type, VarbitT):
                if p.direction not in varbit_in:
                    raise Unsupported(f"parameter {p.name} of type {p.type} with direction "
                                      f"'{p.direction or 'none'}' (its current length would be lost)")
                out.append(ir.Param(p.name, ir.Comp(varbit_box(self.varbit_boxes, p.type)), p.direction))
            else:
                out.append(ir.Param(p.name, irtype(p.type, f"parameter {p.name}"), p.direction))
        return out

    @staticmethod
    def _arg(pp: ir.Param, p, by_ref: bool):
        """What an action's or function's parameter stands for in its body."""
        ref = ir.Ref(pp.t, "arg", p.name, by_ref)
        if not isinstance(p.type, VarbitT):
            return ref
        f = ir.Field(irtype(p.type), ref, "v")  # the value in its struct (varbit_box)
        f.ptype = p.type
        return f

    def _function(self, name: str, tree) -> None:
        info = self.p.functions[name]
        params = self._params(info.params, ("in", "", "out", "inout"))
        ret = None if type(info.ret).__name__ == "VoidT" else irtype(info.ret, f"return of {name}")
        sc = _Scope(self.top_scope, {})  # the top-level instances a function may use
        for pp, p in zip(params, info.params, strict=True):
            sc.names[p.name] = ("val", self._arg(pp, p, p.direction in ("out", "inout")
                                                 or isinstance(pp.t, (ir.Comp, ir.Stack))))  # by pointer
        fn = ir.Function(name, ret, params, [])
        self.functions[name] = fn
        g = _Body(self, sc, "function", None)
        g.ret = info.ret
        fn.body = g.block(tree.children[5])

    def _action(self, info, scope: _Scope, control: str | None) -> None:
        params = self._params(info.params, ("in", "out", "inout"))
        sc = _Scope(scope, {})
        for pp, p in zip(params, info.params, strict=True):
            by_ref = p.direction in ("out", "inout") or isinstance(pp.t, (ir.Comp, ir.Stack))
            sc.names[p.name] = ("val", self._arg(pp, p, by_ref))
        act = ir.Action(info.name, control, params, [])
        self.actions[info.name] = act
        g = _Body(self, sc, "control", control)
        act.body = g.block(info.node.children[3])

    def _block(self, qname: str, tree: Tree, kind: str) -> ir.Block:
        ann, nm, tps, params_node, ctor, *rest = tree.children
        params = self.d.params(params_node)
        # a sub-control's varbit parameter travels in a struct of its own (calls._control_apply)
        vb = ("in", "out", "inout") if kind == "control" and qname not in self.p.block_names.values() else ()
        blk = ir.Block(qname, kind, self._params(params, vb), [], [], [])
        self.blocks[qname] = blk
        self.block_ptypes[qname] = [p.type for p in params]
        sc = _Scope(self.top_scope, {})
        for p, ip in zip(params, blk.params, strict=True):
            if isinstance(p.type, NamedT) and p.type.name in ("packet_in", "packet_out"):
                sc.names[p.name] = ("packet", p.type.name)
            elif isinstance(p.type, VarbitT):
                ref = ir.Ref(ip.t, "param", p.name, True)
                ref.ptype = ip.t.t
                f = ir.Field(irtype(p.type), ref, "v")  # the value in its struct (varbit_box)
                f.ptype = p.type
                sc.names[p.name] = ("val", f)
            else:
                by_ref = isinstance(ip.t, (ir.Comp, ir.Stack))
                sc.names[p.name] = ("val", ir.Ref(ip.t, "param", p.name, by_ref))
        g = _Body(self, sc, kind, qname)
        g.tree = tree  # apply sites of sub-control instances (inlining.substitutes_arguments)
        if kind == "parser":
            self._parser(blk, g, rest)
            return blk
        for loc in rest[:-2]:
            self._control_local(blk, g, loc)
        blk.body = g.block(rest[-1])
        return blk

    def _local_var(self, blk: ir.Block, g: _Body, loc) -> None:
        _a, tnode, nmn, init = loc.children
        t = self.d.resolve_type(tnode)
        name = str(nmn.children[0])
        if isinstance(t, VarbitT):
            ref, f = varbit_var(self.varbit_boxes, "var", name, t)
            blk.vars.append((name, ref.t))
            g.scope.names[name] = ("val", f)
            if init is not None:
                blk.init += init_varbit(f, g.expr_to(init, t))
            return
        it = irtype(t, f"variable {name}")
        ref = ir.Ref(it, "var", name)
        blk.vars.append((name, it))
        g.scope.names[name] = ("val", ref)
        if init is not None:
            blk.init.append(ir.Assign(ref, g.expr_to(init, t)))

    def _const(self, g: _Body, loc) -> None:
        _a, tnode, nmn, init = loc.children
        t = self.d.resolve_type(tnode)
        g.scope.names[str(nmn.children[0])] = ("val", g.expr_to(init, t))

    def _control_local(self, blk: ir.Block, g: _Body, loc) -> None:
        k = loc.data
        if k == "var_decl":
            self._local_var(blk, g, loc)
        elif k == "const_decl":
            self._const(g, loc)
        elif k == "instantiation":
            ann, tnode, _args, nm = loc.children
            t = self.d.resolve_type(tnode)
            local = str(nm.children[0])
            qname = _qualify(blk.name, local, ann_dict(ann, self.d))
            tname = getattr(t, "name", None)
            if tname in self.d.controls:
                self._block(qname, self.d.controls[tname], "control")
                g.scope.names[local] = ("control", qname)
            else:
                g.scope.names[local] = ("extern", qname)
        elif k == "action_decl":
            ann, nm, _p, _b = loc.children
            local = str(nm.children[0])
            qname = _qualify(blk.name, local, ann_dict(ann, self.d))
            info = self.p.actions[qname]
            g.scope.names[local] = ("action", info)
            self._action(info, g.scope, blk.name)
        elif k == "table_decl":
            self._table(blk, g, loc)
        else:
            raise Unsupported(f"control declaration {k}{_pos(loc)}")

    def _table(self, blk: ir.Block, g: _Body, node) -> None:
        ann, nm, *props = node.children
        local = str(nm.children[0])
        qname = _qualify(blk.name, local, ann_dict(ann, self.d))
        info = self.p.tables[qname]
        keys, sel, valid = [], [], []
        knodes = [k for p in props if p.data == "tp_key" for k in p.children[1:]]
        kexprs = [k.children[0] for k in knodes if str(k.children[1].children[0]) != "selector"]
        sexprs = [k.children[0] for k in knodes if str(k.children[1].children[0]) == "selector"
                  and info.selector_keys]  # none when the table has no selector (left out)
        for ki, kx in zip(info.keys, kexprs, strict=True):
            e, t = g.expr(kx)
            e = g.to_bits(e, t) if not isinstance(t, BoolT) else ir.Cast(ir.Bits(1), e)
            keys.append(ir.Key(ki.name, ki.match_kind, ki.width, e))
        for ki, kx in zip(info.selector_keys, sexprs, strict=True):
            e, t = g.expr(kx)
            valid.append(_header_validity(e))
            e = g.to_bits(e, t) if not isinstance(t, BoolT) else ir.Cast(ir.Bits(1), e)
            sel.append(ir.Key(ki.name, ki.match_kind, ki.width, e))
        bound, bound_pre, bound_after = [], [], []
        alist = [ar for p in props if p.data == "tp_actions" for ar in p.children[1:]]
        for a in info.actions:
            if a.name in self.unlowered:
                raise self.unlowered[a.name]
            ar = next((x for x in alist if str(x.children[1].children[0]) == a.local), None)
            given = ar.children[2] if ar is not None else None
            args = [x for x in (given.children if given is not None else []) if x is not None]
            dirp = [p for p in a.params if p.direction]
            row: list[ir.Expr] = []
            pre: list[ir.Stmt] = []
            post: list[ir.Stmt] = []
            for p, x in zip(dirp, args, strict=False):
                if isinstance(p.type, VarbitT) and p.direction != "in":  # through a struct
                    before, box, after = varbit_through_box(g, p, x)
                    pre, post = pre + before, post + after
                    row.append(box)
                else:
                    row.append(g.lvalue(x) if p.direction != "in" else g.arg_to(x, p.type))
            bound.append(row)
            bound_pre.append(pre)
            bound_after.append(post)
        prof = info.profile
        dm = self.p.extern_insts[info.direct_meter].obj.kind + 1 if info.direct_meter else 0
        self.tables[qname] = ir.Table(qname, blk.name, keys, [a.name for a in info.actions], bound,
                                      info.direct_counter is not None, info.size,
                                      profile=prof.name if prof else None, algo=prof.algo if prof else None,
                                      selector=sel, selector_valid=valid,
                                      direct_meter=dm, fixed_rows=_fixed_rows(info),
                                      bound_pre=bound_pre, bound_after=bound_after)
        g.scope.names[local] = ("table", qname)

    # ------------------------------------------------------------ parsers
    def _parser(self, blk: ir.Block, g: _Body, rest) -> None:
        states = [x for x in rest if isinstance(x, Tree) and x.data == "parser_state"]
        for loc in rest:
            if isinstance(loc, Tree) and loc.data == "var_decl":
                self._local_var(blk, g, loc)
            elif isinstance(loc, Tree) and loc.data == "const_decl":
                self._const(g, loc)
            elif isinstance(loc, Tree) and loc.data == "value_set_decl":
                ann, _t, _size, nm = loc.children
                qname = _qualify(blk.name, str(nm.children[0]), ann_dict(ann, self.d))
                self.value_sets.append(qname)
                g.scope.names[str(nm.children[0])] = ("valueset", len(self.value_sets) - 1)
            elif isinstance(loc, Tree) and loc.data != "parser_state":
                raise Unsupported(f"parser declaration {loc.data}{_pos(loc)}")
        for s in states:
            _ann, _kw, nm, *body = s.children
            trans = body[-1]
            outer = g.scope
            g.scope = _Scope(outer, {})
            try:
                stmts = g.stmts(body[:-1])
                st = ir.State(str(nm.children[0]), stmts, [], [])
                if trans is None:
                    st.cases = [ir.SelectCase([], "reject")]
                    st.nomatch = False
                elif trans.data == "trans_direct":
                    st.cases = [ir.SelectCase([], str(trans.children[0].children[0]))]
                    st.nomatch = False
                else:
                    self._select(g, st, trans.children[0])
            finally:
                g.scope = outer
            blk.states.append(st)

    def _select(self, g: _Body, st: ir.State, sel) -> None:
        exprs_node, *cases = sel.children
        ktypes, ftypes = [], []
        for e in exprs_node.children:
            if e is None:
                continue
            x, t = g.expr(e)
            if isinstance(t, BoolT):
                x, t = ir.Cast(ir.Bits(1), x), BitT(1)
            x = g.to_bits(x, t)
            st.keys.append(x)
            ktypes.append(x.t)
            ftypes.append(t)
        for case in cases:
            ks, nxt = case.children
            items = ks.children if ks.data == "ks_tuple" else [ks]
            vs = self._vs(g, items[0]) if len(items) == 1 else None
            if vs is not None and len(ktypes) > 1:
                cells = [("vsall", vs)] + [None] * (len(ktypes) - 1)
                st.cases.append(ir.SelectCase(cells, str(nxt.children[0])))
                continue
            if len(items) == 1 and len(ktypes) > 1 and items[0].data == "ks_default":
                items = items * len(ktypes)
            conds = []
            for it, kt, ft in zip(items, ktypes, ftypes, strict=True):
                conds.append(self._ks(g, it, kt, ft))
            st.cases.append(ir.SelectCase(conds, str(nxt.children[0])))
            if all(c is None for c in conds):
                st.nomatch = False
                break

    def _ks(self, g: _Body, it, kt: ir.Bits, ft):
        bt = ft if isinstance(ft, (ErrorT, EnumT)) else BitT(kt.width, kt.signed)  # error/enum codes

        def const(node) -> int:
            e = g.expr_to(node, bt)
            if not isinstance(e, ir.Const):
                raise Unsupported(f"select case value that is not a constant{_pos(node)}")
            return e.value & kt.mask

        if it.data == "ks_default":
            return None
        vs = self._vs(g, it)
        if vs is not None:
            return ("vs", vs)
        if it.data == "ks_mask":
            v, m = const(it.children[0]), const(it.children[1])
            return None if m == 0 else ("mask", v & m, m)
        if it.data == "ks_range":
            return ("range", const(it.children[0]), const(it.children[1]))
        return ("mask", const(it.children[0]), kt.mask)

    @staticmethod
    def _vs(g: _Body, it) -> int | None:
        """Id of the parser value set a keyset item names, if it names one."""
        if it.data != "ks_value" or not isinstance(it.children[0], Tree) or it.children[0].data != "ident":
            return None
        ent = g.scope.lookup(str(it.children[0].children[-1]))
        return ent[1] if ent is not None and ent[0] == "valueset" else None

    def fresh(self, base: str) -> str:
        self.tmp += 1
        return f"{base}_{self.tmp}"


def _check_only(tree: Tree) -> bool:
    """Is ``tree`` the copy of a generic function made only to check its body (specialize.py)?"""
    anns = tree.children[0]
    return isinstance(anns, Tree) and any(str(a.children[0]) == "@" + CHECK_ONLY for a in anns.children)


def _annotated_field_lists(prog) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for (sname, fname), ann in prog.decls.field_annotations.items():
        if sname != prog.meta_t.name:
            continue
        for idx in ann.get("field_list", []):
            if isinstance(idx, int):
                out.setdefault(idx, []).append(pyfield(fname))
    return out


__all__ = ["Lowering", "Unsupported", "irtype"]


def _fixed_rows(info) -> list[tuple[tuple[int, ...], int, tuple[int, ...]]] | None:
    """The rows of a table no control-plane write can change (``const entries``, exact keys
    only, no direct counter or meter, no action profile), in lookup order; None for any other."""
    if (not info.entries_const or any(k.match_kind != "exact" for k in info.keys)
            or info.direct_counter is not None or info.direct_meter is not None
            or info.profile is not None or not info.keys):
        return None
    return [(tuple(v for v, _m in norm), info.actions.index(a), tuple(int(x) for x in args))
            for norm, (_vals, a, args, _prio) in zip(entry_norms(info), info.const_entries, strict=True)]


def _header_validity(e: ir.Expr) -> ir.Expr | None:
    """A selector key that is a header field: the header's validity (BMv2 hashes the fields of
    valid headers only); ``None`` for metadata and other always-present values."""
    if isinstance(e, ir.Field) and isinstance(e.base.t, ir.Comp) and isinstance(e.base.t.t, HeaderT):
        return ir.Valid(ir.Bool(), e.base)
    if isinstance(e, ir.Valid):   # `h.isValid()` is BMv2's field h.$valid$: skipped when invalid
        return ir.Valid(ir.Bool(), e.base)
    return None

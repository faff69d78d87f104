"""Parsers: each state becomes a Python function returning the next state (None = accept)."""

from __future__ import annotations

from lark import Tree

from .codegen import BlockGen
from .exprs import Sym, is_const
from .layout import default_code, init_code
from .types import BitT, BoolT, EnumT, ErrorT, IntLitT, P4Type, StackT, StructLikeT


class ParserGen(BlockGen):
    def __init__(self, prog, name: str, tree: Tree):
        super().__init__(prog, name, tree, "parser")

    def generate(self) -> str:
        ann, nm, tps, params_node, ctor, *rest = self.tree.children
        self.params = self.d.params(params_node)
        self.declare_params(self.params)
        states = [x for x in rest if isinstance(x, Tree) and x.data == "parser_state"]
        locals_ = [x for x in rest if isinstance(x, Tree) and x.data != "parser_state"]
        init: list[str] = []
        for loc in locals_:
            if loc.data == "var_decl":
                _a, tnode, nmn, iv = loc.children
                t = self.d.resolve_type(tnode)
                vname = str(nmn.children[0])
                c = self.ex_to(iv, t) if iv is not None else default_code(t, self.prog.err_oob)
                if isinstance(t, (StructLikeT, StackT)) and iv is not None and not c.startswith("_mk("):
                    c = init_code(t, c, self.prog.err_oob)
                init.append(f"L.v_{vname} = {c}")
                self.scope.declare(vname, Sym("var", t, f"L.v_{vname}", True))
            elif loc.data == "const_decl":
                _a, tnode, nmn, iv = loc.children
                t = self.d.resolve_type(tnode)
                c = self.ex_to(iv, t)
                self.scope.declare(str(nmn.children[0]), Sym("const", t, c, False))
            elif loc.data == "value_set_decl":
                self.value_set(loc)
            else:
                tname = getattr(self.d.resolve_type(loc.children[1]), "name", "")
                what = "sub-parser instances" if tname in self.d.parsers else "extern instances in parsers"
                raise self.err(loc, f"{what} are not supported by this target")
        self.state_fn: dict[str, str] = {}
        for s in states:
            sname = str(s.children[2].children[0])
            if sname in ("accept", "reject"):
                raise self.err(s, f"state {sname} cannot be redefined")
            if sname in self.state_fn:
                raise self.err(s, f"duplicate state {sname}")
            self.state_fn[sname] = f"PS_{self.prog.pyident(self.name)}_{sname}"
        if "start" not in self.state_fn:
            raise self.err(self.tree, f"parser {self.name} has no start state")
        for s in states:
            self.state(s)
        fn = f"P_{self.prog.pyident(self.name)}"
        self.em(f"def {fn}(L):")
        self.em.level += 1
        for ln in init:
            self.em(ln)
        self.em(f"st = {self.state_fn['start']}")
        self.em("while st is not None:")
        self.em("    st = st(L)")
        self.em.level -= 1
        self.em("")
        return fn

    def value_set(self, loc: Tree) -> None:
        """``value_set<T>(size) name;``: T is bit<W> or a struct of bit<W> fields (one per select key)."""
        from .decls import ann_dict
        from .externs import ValueSet

        ann, tnode, size_node, nm = loc.children
        t = self.d.resolve_type(tnode)
        local = str(nm.children[0])
        if isinstance(t, BitT):
            fields = [(local, t.width, "exact")]
        elif isinstance(t, StructLikeT) and all(isinstance(ft, BitT) for _, ft in t.fields):
            fields = []
            for fname, ft in t.fields:
                fa = self.d.field_annotations.get((t.name, fname), {})
                kind = fa["match"][0] if fa.get("match") and isinstance(fa["match"][0], str) else "exact"
                fields.append((fname, ft.width, kind))
        else:
            raise self.err(loc, f"value_set element type must be bit<W> or a struct of bit<W>, not {t}")
        size = self.ec()._const_of(size_node)
        qname = self.qualify(local, ann_dict(ann, self.d))
        vs = ValueSet(qname, size, fields)
        pyname = f"VS_{self.prog.pyident(qname)}"
        self.prog.ns[pyname] = vs
        self.prog.value_sets[qname] = vs
        self.scope.declare(local, Sym("valueset", t, pyname, False, vs))

    def _vs_item(self, it: Tree):
        if it.data != "ks_value":
            return None
        e = it.children[0]
        if isinstance(e, Tree) and e.data == "ident":
            sym = self.scope.lookup(str(e.children[-1]))
            if sym is not None and sym.kind == "valueset":
                return sym
        return None

    def target(self, name: str, node) -> str:
        if name == "accept":
            return "None"
        if name == "reject":
            return "_REJECT"
        if name not in self.state_fn:
            raise self.err(node, f"undeclared parser state {name}")
        return self.state_fn[name]

    def state(self, s: Tree) -> None:
        ann, _kw, nm, *body = s.children
        sname = str(nm.children[0])
        trans = body[-1]
        self.em(f"def {self.state_fn[sname]}(L):")
        self.em.level += 1
        if self.prog.trace:
            self.em(f"_C.trace.append('parser state {sname}')")
        outer = self.scope
        self.scope = type(outer)(outer)
        try:
            self.stmts(body[:-1])
            if trans is None:  # P4_16: a state without a transition statement goes to reject
                self.em("return _REJECT")
            elif trans.data == "trans_direct":
                self.em(f"return {self.target(str(trans.children[0].children[0]), trans)}")
            else:
                self.select(trans.children[0])
        finally:
            self.scope = outer
        self.em.level -= 1
        self.em("")

    def select(self, sel: Tree) -> None:
        exprs_node, *cases = sel.children
        self.opaque_keys: dict[str, P4Type] = {}
        keys = [self.ex(e) for e in exprs_node.children if e is not None]
        kvars = []
        for i, (c, t) in enumerate(keys):
            if isinstance(t, BoolT):
                c = f"int({c})"
                t = BitT(1)
            if isinstance(t, EnumT) and t.underlying is not None:
                t = t.underlying
            if isinstance(t, (ErrorT, EnumT)):  # exact values only (p4c); held as 32-bit codes
                self.opaque_keys[f"k{i}"] = t
                t = BitT(32)
            if isinstance(t, IntLitT) or not isinstance(t, BitT):
                raise self.err(exprs_node, f"select key of type {t} is not supported")
            v = f"k{i}"
            self.em(f"{v} = {c}" if not t.signed else f"{v} = {c} & {t.mask}")
            kvars.append((v, t))
        has_default = False
        for case in cases:
            ks, nxt = case.children
            items = ks.children if ks.data == "ks_tuple" else [ks]
            vs = self._vs_item(items[0]) if len(items) == 1 else None
            if vs is not None:
                if len(vs.info.fields) != len(kvars):
                    raise self.err(case, f"value set {vs.info.name} has {len(vs.info.fields)} fields for "
                                         f"{len(kvars)} select keys")
                keys = "".join(f"{v}, " for v, _ in kvars)
                self.em(f"if {vs.code}.match(({keys})): return {self.target(str(nxt.children[0]), case)}")
                continue
            if len(items) == 1 and len(kvars) > 1 and items[0].data == "ks_default":
                items = items * len(kvars)
            if len(items) != len(kvars):
                raise self.err(case, f"select case has {len(items)} values for {len(kvars)} keys")
            conds = []
            for it, (v, t) in zip(items, kvars, strict=False):
                conds += self.ks_cond(it, v, t)
            tgt = self.target(str(nxt.children[0]), case)
            if not conds:
                self.em(f"return {tgt}")
                has_default = True
                break
            self.em(f"if {' and '.join(conds)}: return {tgt}")
        if not has_default:
            self.em(f"raise _Reject({self.prog.err_nomatch})")

    def ks_cond(self, it: Tree, v: str, t: BitT) -> list[str]:
        opaque = self.opaque_keys.get(v)
        if opaque is not None and it.data in ("ks_mask", "ks_range"):
            raise self.err(it, f"select on a value of type {opaque}: only exact values and default")

        def const(node) -> int:
            c = self.ex_to(node, opaque or t)
            if not is_const(c):
                raise self.err(node, "select case values must be compile-time constants")
            return int(c) & t.mask

        if it.data == "ks_default":
            return []
        vs = self._vs_item(it)
        if vs is not None:
            if len(vs.info.fields) != 1:
                raise self.err(it, f"value set {vs.info.name} needs {len(vs.info.fields)} select keys")
            return [f"{vs.code}.match(({v},))"]
        if it.data == "ks_mask":
            val, mask = const(it.children[0]), const(it.children[1])
            if mask == 0:
                return []
            return [f"({v} & {mask}) == {val & mask}"]
        if it.data == "ks_range":
            lo, hi = const(it.children[0]), const(it.children[1])
            return [f"{lo} <= {v} <= {hi}"]
        return [f"{v} == {const(it.children[0])}"]

"""Checks of parsers: locals, value sets, states, transitions and select cases (the python and C
state machines are generated from the typed IR, ``softswitch/pygen`` and ``softswitch/native``)."""

from __future__ import annotations

from dataclasses import dataclass

from lark import Tree

from ..frontend.selects import BOOL_LABEL
from .decls import ann_dict
from .exprs import Sym, is_const
from .statements import BlockChecker
from .types import BitT, BoolT, EnumT, ErrorT, IntLitT, P4Type, StructLikeT


@dataclass(frozen=True)
class ValueSetDecl:
    """A parser value set as declared; the target holds its members (``externs.ValueSet``)."""

    name: str
    size: int
    fields: list[tuple[str, int, str]]  # (control-plane name, width, match kind)


class ParserChecker(BlockChecker):
    def __init__(self, prog, name: str, tree: Tree):
        super().__init__(prog, name, tree, "parser")

    def generate(self) -> None:
        ann, nm, tps, params_node, ctor, *rest = self.tree.children
        self.params = self.d.params(params_node)
        self.declare_params(self.params)
        states = [x for x in rest if isinstance(x, Tree) and x.data == "parser_state"]
        locals_ = [x for x in rest if isinstance(x, Tree) and x.data != "parser_state"]
        for loc in locals_:
            if loc.data == "var_decl":
                _a, tnode, nmn, iv = loc.children
                t = self.d.resolve_type(tnode)
                vname = str(nmn.children[0])
                if iv is not None:
                    self.ex_to(iv, t)
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
        self.states: set[str] = set()
        for s in states:
            sname = str(s.children[2].children[0])
            if sname in ("accept", "reject"):
                raise self.err(s, f"state {sname} cannot be redefined")
            if sname in self.states:
                raise self.err(s, f"duplicate state {sname}")
            self.states.add(sname)
        if "start" not in self.states:
            raise self.err(self.tree, f"parser {nm.children[0]} has no start state")
        for s in states:
            self.state(s)
        self._reaches_final(states, nm)

    def _reaches_final(self, states: list[Tree], nm) -> None:
        """Some path from ``start`` must end in accept or reject (a state without a transition
        rejects); p4c: "Parser never reaches accept or reject state"."""
        succ: dict[str, list[str]] = {}
        for s in states:
            t = s.children[-1]
            if not (isinstance(t, Tree) and t.data in ("trans_direct", "trans_select")):
                succ[str(s.children[2].children[0])] = ["reject"]
            elif t.data == "trans_direct":
                succ[str(s.children[2].children[0])] = [str(t.children[0].children[0])]
            else:  # a select no case matches rejects (error.NoMatch)
                succ[str(s.children[2].children[0])] = ["reject"]
            if any(str(c.children[0].children[-1]) == "verify" for c in s.find_data("call")
                   if isinstance(c.children[0], Tree) and c.children[0].data == "ident"):
                succ[str(s.children[2].children[0])].append("reject")
        seen, todo = {"start"}, ["start"]
        while todo:
            for n in succ.get(todo.pop(), []):
                if n in ("accept", "reject"):
                    return
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        raise self.err(nm, f"parser {nm.children[0]}: Parser never reaches accept or reject state")

    def value_set(self, loc: Tree) -> None:
        """``value_set<T>(size) name;``: T is bit<W> or a struct of bit<W> fields (one per select key)."""
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
        vs = ValueSetDecl(qname, size, fields)
        pyname = f"VS_{self.prog.pyident(qname)}"
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

    def target(self, name: str, node) -> None:
        if name not in ("accept", "reject") and name not in self.states:
            raise self.err(node, f"undeclared parser state {name}")

    def state(self, s: Tree) -> None:
        ann, _kw, nm, *body = s.children
        trans = body[-1]
        outer = self.scope
        self.scope = type(outer)(outer)
        try:
            self.stmts(body[:-1])
            if trans is not None and trans.data == "trans_direct":
                self.target(str(trans.children[0].children[0]), trans)
            elif trans is not None:  # (no transition statement: P4_16's reject)
                self.select(trans.children[0])
        finally:
            self.scope = outer

    def select(self, sel: Tree) -> None:
        exprs_node, *cases = sel.children
        kts: list[tuple[BitT, P4Type | None]] = []  # key type, and the error/enum type of opaque keys
        bool_keys: list[bool] = []
        for e in exprs_node.children:
            if e is None:
                continue
            _c, t = self.ex(e)
            opaque = None
            bool_keys.append(isinstance(t, BoolT))
            if isinstance(t, BoolT):
                t = BitT(1)
            if isinstance(t, EnumT) and t.underlying is not None:
                t = t.underlying
            if isinstance(t, (ErrorT, EnumT)):  # exact values only (p4c); held as 32-bit codes
                opaque, t = t, BitT(32)
            if isinstance(t, IntLitT) or not isinstance(t, BitT):
                raise self.err(exprs_node, f"select key of type {t} is not supported")
            kts.append((t, opaque))
        for case in cases:
            ks, nxt = case.children
            items = ks.children if ks.data == "ks_tuple" else [ks]
            vs = self._vs_item(items[0]) if len(items) == 1 else None
            if vs is not None:
                if len(vs.info.fields) != len(kts):
                    raise self.err(case, f"value set {vs.info.name} has {len(vs.info.fields)} fields for "
                                         f"{len(kts)} select keys")
                self.target(str(nxt.children[0]), case)
                continue
            if len(items) == 1 and len(kts) > 1 and items[0].data == "ks_default":
                items = items * len(kts)
            if len(items) != len(kts):
                raise self.err(case, f"select case has {len(items)} values for {len(kts)} keys")
            for it, is_bool in zip(items, bool_keys, strict=False):
                self._label_kind(it, is_bool)
            matches_all = all([self.ks_check(it, t, o) for it, (t, o) in zip(items, kts, strict=False)])
            self.target(str(nxt.children[0]), case)
            if matches_all:  # a default: later cases are never reached
                break

    def _label_kind(self, it: Tree, is_bool: bool) -> None:
        """A ``bool`` key is matched by ``true``/``false``, a ``bit<1>`` key by numbers."""
        v = it.children[0] if it.data == "ks_value" else None
        if not (isinstance(v, Tree) and v.data == "int_lit"):
            return
        if (v.children[0].type == BOOL_LABEL) != is_bool:
            label = ("true" if str(v.children[0]) == "1w1" else "false") if not is_bool \
                else str(v.children[0])
            raise self.err(it, f"select label {label} does not match a key of type "
                               f"{'bool' if is_bool else 'bit<W>'}")

    def ks_check(self, it: Tree, t: BitT, opaque: P4Type | None) -> bool:
        """Check one keyset item; True when it matches every key value."""
        if opaque is not None and it.data in ("ks_mask", "ks_range"):
            raise self.err(it, f"select on a value of type {opaque}: only exact values and default")

        def const(node) -> int:
            c = self.ex_to(node, opaque or t)
            if not is_const(c):
                raise self.err(node, "select case values must be compile-time constants")
            return int(c) & t.mask

        if it.data == "ks_default":
            return True
        vs = self._vs_item(it)
        if vs is not None:
            if len(vs.info.fields) != 1:
                raise self.err(it, f"value set {vs.info.name} needs {len(vs.info.fields)} select keys")
            return False
        if it.data == "ks_mask":
            const(it.children[0])
            return const(it.children[1]) == 0
        if it.data == "ks_range":
            lo, hi = const(it.children[0]), const(it.children[1])
            if t.signed:  # compare as signed values
                lo, hi = (v - (1 << t.width) if v >> (t.width - 1) else v for v in (lo, hi))
            if hi < lo:
                raise self.err(it, f"{t.width}w{lo:#x}-{t.width}w{hi:#x}: Range end is less than "
                                   "start.")
            return False
        const(it.children[0])
        return False

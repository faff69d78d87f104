"""Checks of controls: local declarations, actions, tables and the apply block (the code is
generated from the typed IR, ``softswitch/pygen`` and ``softswitch/native``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lark import Tree

from . import declarations, entries, v1model_rules
from .decls import ann_dict
from .exprs import DuplicateName, Scope, Sym, is_const
from .fields import field_width
from .implementation import table_profile
from .matchkeys import entry_norms
from .statements import ActionInfo, BlockChecker, KeyInfo, TableInfo, text_of
from .types import BitT, BoolT, EnumT, ErrorT, IntLitT, NamedT, StackT, StructLikeT, VarbitT


@dataclass
class _TableProps:
    """A table's properties as read, before its TableInfo exists."""

    keys: list[KeyInfo] = field(default_factory=list)
    key_nodes: list[Tree] = field(default_factory=list)
    actions: list[ActionInfo] = field(default_factory=list)
    act_ann: list[dict] = field(default_factory=list)
    listed: dict[str, list] = field(default_factory=dict)  # action -> its directional arguments
    default: Tree | None = None
    default_const: bool = False
    entries_node: list | None = None
    entries_const: bool = False
    size: int = 1024
    dcounter: str | None = None
    dmeter: str | None = None
    profile: object = None
    prio_props: dict[str, Tree] = field(default_factory=dict)


class ControlChecker(BlockChecker):
    def __init__(self, prog, name: str, tree: Tree):
        super().__init__(prog, name, tree, "control")

    def generate(self) -> str:
        """Check the control; returns the name the checks give its instances' apply calls."""
        ann, nm, tps, params_node, ctor, *rest = self.tree.children
        if ctor is not None and ctor.children[0] is not None and ctor.children[0].children:
            raise self.err(self.tree, "control constructor parameters are not supported")
        self.params = self.d.params(params_node)
        self.declare_params(self.params)
        locals_ = rest[:-2]
        body = rest[-1]
        for loc in locals_:
            try:
                self.local(loc)
            except DuplicateName as e:
                raise self.err(loc, f"duplicate declaration of {e.args[0]}") from None
        self.block(body)
        return f"C_{self.prog.pyident(self.name)}"

    def local(self, loc: Tree) -> None:
        if True:
            k = loc.data
            if k == "var_decl":
                _a, tnode, nmn, init = loc.children
                t = self.d.resolve_type(tnode)
                vname = str(nmn.children[0])
                if init is not None:
                    self.ex_to(init, t)
                self.scope.declare(vname, Sym("var", t, f"L.v_{vname}", True))
            elif k == "const_decl":
                _a, tnode, nmn, init = loc.children
                t = self.d.resolve_type(tnode)
                c = self.ex_to(init, t)
                if not is_const(c) and c not in ("True", "False"):
                    raise self.err(loc, "constant is not a compile-time constant")
                self.scope.declare(str(nmn.children[0]), Sym("const", t, c, False))
            elif k == "instantiation":
                if not self.sub_control(loc):
                    self.prog.externs.instantiate(self, loc)
            elif k == "action_decl":
                self.action(loc)
            elif k == "table_decl":
                self.table(loc)
            else:
                raise self.err(loc, f"unsupported control declaration {k}")

    def sub_control(self, loc: Tree) -> bool:
        """``MyCtl() inst;`` inside a control: generate that control under this instance's name."""
        ann, tnode, args_node, nm = loc.children
        t = self.d.resolve_type(tnode)
        tname = getattr(t, "name", None)
        if tname not in self.d.controls:
            return False
        if args_node is not None and any(a is not None for a in args_node.children):
            raise self.err(loc, "control constructor arguments are not supported")
        local = str(nm.children[0])
        qname = self.qualify(local, ann_dict(ann, self.d))
        sub = ControlChecker(self.prog, qname, self.d.controls[tname])
        fn = sub.generate()
        self.scope.declare(local, Sym("control", NamedT(tname), fn, False, sub))
        return True

    # ------------------------------------------------------------ actions
    def action(self, node: Tree, top_level: bool = False) -> ActionInfo:
        ann, nm, params_node, body = node.children
        local = str(nm.children[0])
        annd = ann_dict(ann, self.d)
        name = local if top_level else self.qualify(local, annd)
        if top_level and annd.get("name") and isinstance(annd["name"][0], str):
            name = annd["name"][0].lstrip(".")
        params = self.d.params(params_node)
        seen_data = False
        for p in params:
            if not p.direction:
                seen_data = True
            elif seen_data:
                raise self.err(p.node, f"action {local}: directional parameter {p.name} after a "
                                       "directionless one")
            if not p.direction and not isinstance(p.type, (BitT, BoolT)) and \
                    not (isinstance(p.type, EnumT) and p.type.underlying):
                raise self.err(p.node, f"action parameter {p.name}: control-plane data must be "
                                       "bit<W>/int<W>/bool")
        pyfn = f"A_{self.prog.pyident(name)}"
        info = ActionInfo(name, local, pyfn, params, annd, None if top_level else self.name, node)
        if local in self.actions:
            raise self.err(node, f"duplicate action {local}")
        self.actions[local] = info
        if not top_level:
            self.scope.declare(local, Sym("action", BoolT(), pyfn, False, info))
        outer = self.scope
        self.scope = Scope(outer)
        for p in params:
            writable = bool(p.direction) and p.direction != "in"
            self.scope.declare(p.name, Sym("var", p.type, f"a_{p.name}", writable,
                                           info=p))
        self.in_action = info
        try:
            self.block(body)
        finally:
            self.in_action = None
            self.scope = outer
        declarations.claim_name(self, self.prog.actions, name, node, "action")
        self.prog.actions[name] = info
        return info

    def find_action(self, name: str, node) -> ActionInfo:
        if name in self.actions:
            return self.actions[name]
        info = self.prog.top_action(name, node)
        if info is None:
            raise self.err(node, f"undeclared action {name}")
        return info

    # ------------------------------------------------------------ tables
    def table(self, node: Tree) -> None:
        ann, nm, *props = node.children
        local = str(nm.children[0])
        annd = ann_dict(ann, self.d)
        qname = self.qualify(local, annd)
        tp = _TableProps()
        if not any(p.data == "tp_actions" for p in props):  # p4c: no actions property, NoAction only
            tp.actions, tp.act_ann = [self.find_action("NoAction", node)], [{"defaultonly": []}]
        declarations.unique_properties(self, local, props)
        declarations.actions_listed_first(self, local, props, node)
        for p in props:
            self._table_property(p, local, qname, tp)
        if not tp.actions:
            raise self.err(node, f"table {local} has no actions")
        declarations.unique_key_names(self, local, tp.keys, tp.key_nodes)
        keys, selector_keys = self._split_selector_keys(node, local, tp)
        info = TableInfo(qname, local, self.name, keys, tp.actions, tp.act_ann, None, tp.default_const, [],
                         tp.entries_const, tp.size, tp.dcounter, tp.dmeter, annd,
                         f"T_{self.prog.pyident(qname)}", node)
        self._table_default(info, tp, node)
        info.selector_keys, info.profile = selector_keys, tp.profile
        if tp.profile is not None and tp.default is not None:  # p4c's BMv2 back end ignores it
            self.d.warn(node, "unsupported", f"Target does not support default_action for {local} "
                                             "(due to action profiles)")
        info.priority_rule = entries.priority_rule(self, tp.prio_props)
        if tp.entries_node:
            info.const_entries = self._table_entries(info, tp)
            entry_norms(info)  # the target's canonical keys: refused here, not when a switch starts
        self.tables[local] = info
        self.scope.declare(local, Sym("table", NamedT("__table__"), info.pyname, False, info))
        declarations.claim_name(self, self.prog.tables, qname, node, "table")
        self.prog.tables[qname] = info

    def _table_property(self, p: Tree, local: str, qname: str, tp: _TableProps) -> None:
        """Read one table property into ``tp``."""
        if p.data == "tp_key":
            for k in p.children[1:]:
                tp.keys.append(self._table_key(k))
                tp.key_nodes.append(k)
        elif p.data == "tp_actions":
            for ar in p.children[1:]:
                aann, anm, aargs = ar.children
                a = self.find_action(str(anm.children[0]), ar)
                if a in tp.actions:
                    raise self.err(ar, f"action {a.local} listed twice in table {local}")
                tp.actions.append(a)
                tp.act_ann.append(ann_dict(aann, self.d))
                self.bind_directional(a, aargs, ar)
                given = aargs.children if aargs is not None else []
                tp.listed[a.name] = [x for x in given if x is not None]
        elif p.data == "tp_default":
            _dann, dconst, ar = p.children
            tp.default_const, tp.default = dconst is not None, ar
        elif p.data == "tp_entries":
            _eann, econst, _kw, *ents = p.children
            tp.entries_const, tp.entries_node = econst is not None, ents
        elif p.data == "tp_generic":
            self._table_generic_property(p, local, qname, tp)

    def _table_key(self, k: Tree) -> KeyInfo:
        """One key element: its match kind, width and the code that reads it."""
        kexpr, kind_node, kann = k.children
        kind = str(kind_node.children[0])
        if kind not in self.d.match_kinds:
            raise self.err(k, f"unknown match kind {kind}")
        code, t = self.ex(kexpr)
        if isinstance(t, BoolT):
            code, w = f"int({code})", 1
        elif isinstance(t, BitT):
            w = t.width
            if t.signed:
                code = f"({code} & {t.mask})"
        elif isinstance(t, EnumT) and t.underlying is not None:
            w = t.underlying.width
        elif isinstance(t, (EnumT, ErrorT)):
            w = 32  # their codes, as the IR holds them
        elif isinstance(t, (NamedT, IntLitT, StructLikeT, StackT)):
            raise self.err(k, f"table key of type {t}: keys must be bit<W>, int<W>, bool, "
                              "an enum or error")
        elif isinstance(t, VarbitT) and kind != "exact":
            raise self.err(k, f"table key of type {t} cannot be matched with {kind} "
                              "(a varbit key matches exactly)")
        else:
            w = field_width(t)
        kd = ann_dict(kann, self.d)
        declarations.key_needs_name(self, kexpr, kd, k)
        kname = kd["name"][0] if kd.get("name") else text_of(kexpr)
        return KeyInfo(kname, kind, w, code, kd, t)

    def _table_generic_property(self, p: Tree, local: str, qname: str, tp: _TableProps) -> None:
        """``size``, direct counters and meters, ``implementation``, priority properties."""
        gann, gname, gexpr = p.children
        pname = str(gname.children[0])
        if pname == "size":
            tp.size = self.ec()._const_of(gexpr)
            if tp.size < 0:
                raise self.err(p, f"table {local}: size {tp.size} must not be negative")
        elif pname in ("counters", "meters"):
            is_ident = isinstance(gexpr, Tree) and gexpr.data == "ident"
            sym = self.scope.lookup(str(gexpr.children[-1]) if is_ident else "")
            want = "direct_counter" if pname == "counters" else "direct_meter"
            if sym is None or sym.kind != "extern" or sym.info.extern != want:
                raise self.err(p, f"table property {pname} must name a {want} instance")
            v1model_rules.one_table_per_direct_resource(self, sym, qname, p)
            if pname == "counters":
                tp.dcounter = sym.info.name
            else:
                tp.dmeter = sym.info.name
            sym.info.table = qname
            sym.info.obj.table = qname  # calls.StatefulExtern
        elif pname == "implementation":
            tp.profile = table_profile(self, p, ann_dict(gann, self.d), gexpr, qname)
        elif pname in ("largest_priority_wins", "priority_delta"):
            tp.prio_props[pname] = gexpr
        elif pname not in ("support_timeout", "max_group_size", "psa_direct_counter"):
            raise self.err(p, f"unknown table property {pname}")

    def _split_selector_keys(self, node: Tree, local: str, tp: _TableProps
                             ) -> tuple[list[KeyInfo], list[KeyInfo]]:
        """(match keys, selector keys), with the checks p4c's BMv2 back end makes on them."""
        selector_keys = [k for k in tp.keys if k.match_kind == "selector"]
        keys = [k for k in tp.keys if k.match_kind != "selector"]
        if selector_keys and tp.profile is None:
            selector_keys = []  # p4c's BMv2 back end and P4Info leave them out of a plain table
        elif selector_keys and not tp.profile.with_selector:
            raise self.err(node, f"table {local}: selector keys need implementation = action_selector(...)")
        if tp.profile is not None and tp.entries_node:
            raise self.err(node, f"table {local}: entries in the program on a table with an action "
                                 "profile are not supported by this target")
        if sum(1 for k in keys if k.match_kind == "lpm") > 1:
            raise self.err(node, f"table {local} has more than one lpm key")
        return keys, selector_keys

    def _table_default(self, info: TableInfo, tp: _TableProps, node: Tree) -> None:
        """The default action as written, else NoAction (added to the table as @defaultonly)."""
        if tp.default is not None:
            info.default = self.action_call(info, tp.default)
            dargs = [x for x in (tp.default.children[2].children if tp.default.children[2] is not None
                                 else []) if x is not None]
            declarations.same_directional_args(self, info.default[0], dargs,
                                               tp.listed.get(info.default[0].name, []), tp.default)
            return
        noact = self.find_action("NoAction", node)
        if noact not in tp.actions:
            tp.actions.append(noact)
            tp.act_ann.append({"defaultonly": []})
        info.default = (noact, ())

    def _table_entries(self, info: TableInfo, tp: _TableProps) -> list:
        """The entries of the program, with their priorities, checked as p4c checks them."""
        out: list = []
        prios = entries.priorities(self, info, tp.entries_node, tp.entries_const, info.priority_rule)
        for ent, prio in zip(tp.entries_node, prios, strict=True):
            _c, _p, ks, ar, _ea = ent.children
            a, args = self.action_call(info, ar, in_entry=True)
            given = [x for x in (ar.children[2].children if ar.children[2] is not None else [])
                     if x is not None]
            declarations.same_directional_args(self, a, given, tp.listed.get(a.name, []), ar, "entry action")
            out.append((entries.keyset_values(self, info, ks), a, args, prio))
        entries.warn_shadowed(self, info, [(e.children[2], ce[0]) for e, ce in
                                           zip(tp.entries_node, out, strict=True)])
        return out

    def bind_directional(self, a: ActionInfo, args_node, node) -> None:
        """Check the directional arguments an action gets in a table's action list."""
        dirp = [p for p in a.params if p.direction]
        args = [x for x in (args_node.children if args_node is not None else []) if x is not None]
        if len(args) != len(dirp):
            if args or dirp:
                raise self.err(node, f"action {a.local} in a table list must bind exactly its "
                                     f"{len(dirp)} directional parameters, got {len(args)}")
        for p, arg in zip(dirp, args, strict=False):
            if p.direction == "in":
                self.ex_to(arg, p.type)
            else:
                t = self.lvalue(arg)
                if not isinstance(t, type(p.type)):
                    raise self.err(arg, f"argument type {t} does not match parameter {p.name}: {p.type}")

    def action_call(self, info: TableInfo, ar: Tree,
                    in_entry: bool = False) -> tuple[ActionInfo, tuple[int, ...]]:
        aann, anm, aargs = ar.children
        a = self.find_action(str(anm.children[0]), ar)
        if a not in info.actions:
            raise self.err(ar, f"action {a.local} is not in the actions of table {info.local}")
        scope = info.action_annotations[info.actions.index(a)]
        if in_entry and "defaultonly" in scope:
            raise self.err(ar, f"action {a.local} is @defaultonly in table {info.local}: "
                               "not allowed in entries")
        if not in_entry and "tableonly" in scope:
            raise self.err(ar, f"action {a.local} is @tableonly in table {info.local}: it cannot be the "
                               "default action")
        args = [x for x in (aargs.children if aargs is not None else []) if x is not None]
        dirp = [p for p in a.params if p.direction]
        datap = a.data_params
        if len(args) == len(dirp) + len(datap):
            args = args[len(dirp):]
        if len(args) != len(datap):
            raise self.err(ar, f"action {a.local} expects {len(datap)} action-data arguments, "
                               f"got {len(args)}")
        vals = []
        for p, x in zip(datap, args, strict=False):
            c = self.ex_to(x, p.type)
            if not is_const(c) and c not in ("True", "False"):
                raise self.err(x, "action arguments in table properties must be constants")
            vals.append(int(c) if not isinstance(p.type, BoolT) else (c == "True"))
        return a, tuple(vals)

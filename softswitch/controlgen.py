"""Checks of controls: local declarations, actions, tables and the apply block (the code is
generated from the typed IR, ``softswitch/pygen`` and ``softswitch/native``)."""

from __future__ import annotations

from lark import Tree

from . import checks, checks_v1model, entries
from .codegen import ActionInfo, BlockGen, KeyInfo, TableInfo, text_of
from .decls import ann_dict
from .exprs import DuplicateName, Scope, Sym, is_const
from .implementation import table_profile
from .layout import field_width
from .types import BitT, BoolT, EnumT, ErrorT, IntLitT, NamedT, StackT, StructLikeT, VarbitT


class ControlGen(BlockGen):
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
        sub = ControlGen(self.prog, qname, self.d.controls[tname])
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
        checks.claim_name(self, self.prog.actions, name, node, "action")
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
        pyname = f"T_{self.prog.pyident(qname)}"
        keys: list[KeyInfo] = []
        actions: list[ActionInfo] = []
        act_ann: list[dict] = []
        if not any(p.data == "tp_actions" for p in props):  # p4c: no actions property, NoAction only
            actions, act_ann = [self.find_action("NoAction", node)], [{"defaultonly": []}]
        default = None
        default_const = False
        const_entries: list = []
        entries_const = False
        size = 1024
        dcounter = dmeter = None
        entries_node = None
        prio_props: dict[str, Tree] = {}
        key_nodes: list[Tree] = []
        listed: dict[str, list] = {}   # action -> its directional arguments in the actions list
        profile = None
        checks.unique_properties(self, local, props)
        checks.actions_listed_first(self, local, props, node)
        for p in props:
            if p.data == "tp_key":
                for k in p.children[1:]:
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
                    checks.key_needs_name(self, kexpr, kd, k)
                    kname = kd["name"][0] if kd.get("name") else text_of(kexpr)
                    keys.append(KeyInfo(kname, kind, w, code, kd, t))
                    key_nodes.append(k)
            elif p.data == "tp_actions":
                for ar in p.children[1:]:
                    aann, anm, aargs = ar.children
                    a = self.find_action(str(anm.children[0]), ar)
                    if a in actions:
                        raise self.err(ar, f"action {a.local} listed twice in table {local}")
                    actions.append(a)
                    act_ann.append(ann_dict(aann, self.d))
                    self.bind_directional(a, aargs, ar)
                    given = aargs.children if aargs is not None else []
                    listed[a.name] = [x for x in given if x is not None]
            elif p.data == "tp_default":
                dann, dconst, ar = p.children
                default_const = dconst is not None
                default = ar
            elif p.data == "tp_entries":
                eann, econst, _kw, *ents = p.children
                entries_const = econst is not None
                entries_node = ents
            elif p.data == "tp_generic":
                gann, gname, gexpr = p.children
                pname = str(gname.children[0])
                if pname == "size":
                    size = self.ec()._const_of(gexpr)
                    if size < 0:
                        raise self.err(p, f"table {local}: size {size} must not be negative")
                elif pname in ("counters", "meters"):
                    is_ident = isinstance(gexpr, Tree) and gexpr.data == "ident"
                    ident = str(gexpr.children[-1]) if is_ident else ""
                    sym = self.scope.lookup(ident)
                    want = "direct_counter" if pname == "counters" else "direct_meter"
                    if sym is None or sym.kind != "extern" or sym.info.extern != want:
                        raise self.err(p, f"table property {pname} must name a {want} instance")
                    checks_v1model.one_table_per_direct_resource(self, sym, qname, p)
                    if pname == "counters":
                        dcounter = sym.info.name
                    else:
                        dmeter = sym.info.name
                    sym.info.table = qname
                    sym.info.obj.table = qname
                elif pname == "implementation":
                    profile = table_profile(self, p, ann_dict(gann, self.d), gexpr, qname)
                elif pname in ("largest_priority_wins", "priority_delta"):
                    prio_props[pname] = gexpr
                elif pname in ("support_timeout", "max_group_size", "psa_direct_counter"):
                    pass
                else:
                    raise self.err(p, f"unknown table property {pname}")
        if not actions:
            raise self.err(node, f"table {local} has no actions")
        checks.unique_key_names(self, local, keys, key_nodes)
        selector_keys = [k for k in keys if k.match_kind == "selector"]
        keys = [k for k in keys if k.match_kind != "selector"]
        if selector_keys and profile is None:
            selector_keys = []  # p4c's BMv2 back end and P4Info leave them out of a plain table
        elif selector_keys and not profile.with_selector:
            raise self.err(node, f"table {local}: selector keys need implementation = action_selector(...)")
        if profile is not None and entries_node:
            raise self.err(node, f"table {local}: entries in the program on a table with an action "
                                 "profile are not supported by this target")
        if sum(1 for k in keys if k.match_kind == "lpm") > 1:
            raise self.err(node, f"table {local} has more than one lpm key")
        info = TableInfo(qname, local, self.name, keys, actions, act_ann, None, default_const, [],
                         entries_const, size, dcounter, dmeter, annd, pyname, node)
        if default is not None:
            info.default = self.action_call(info, default)
            dargs = [x for x in (default.children[2].children if default.children[2] is not None else [])
                     if x is not None]
            checks.same_directional_args(self, info.default[0], dargs,
                                         listed.get(info.default[0].name, []), default)
        else:
            # P4_16: the default action is NoAction; p4c adds it to the table as @defaultonly
            noact = self.find_action("NoAction", node)
            if noact not in actions:
                actions.append(noact)
                act_ann.append({"defaultonly": []})
            info.default = (noact, ())
        info.selector_keys, info.profile = selector_keys, profile
        if profile is not None and default is not None:  # p4c's BMv2 back end ignores it
            self.d.warn(node, "unsupported", f"Target does not support default_action for {local} "
                                             "(due to action profiles)")
        info.priority_rule = entries.priority_rule(self, prio_props)
        if entries_node:
            prios = entries.priorities(self, info, entries_node, entries_const, info.priority_rule)
            for ent, prio in zip(entries_node, prios, strict=True):
                _c, _p, ks, ar, _ea = ent.children
                a, args = self.action_call(info, ar, in_entry=True)
                given = [x for x in (ar.children[2].children if ar.children[2] is not None else [])
                         if x is not None]
                checks.same_directional_args(self, a, given, listed.get(a.name, []), ar, "entry action")
                const_entries.append((entries.keyset_values(self, info, ks), a, args, prio))
            entries.warn_shadowed(self, info, [(e.children[2], ce[0]) for e, ce in
                                               zip(entries_node, const_entries, strict=True)])
        info.const_entries = const_entries
        self.tables[local] = info
        self.scope.declare(local, Sym("table", NamedT("__table__"), pyname, False, info))
        checks.claim_name(self, self.prog.tables, qname, node, "table")
        self.prog.tables[qname] = info
        self.prog.new_table_runtime(info)

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

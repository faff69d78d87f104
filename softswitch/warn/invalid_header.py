"""Runs the header-validity analysis of ``validity.py`` (p4c's ``[--Wwarn=invalid_header]``)
over what p4c keeps of a program: each control and function from its parameters, each parser
to a fixpoint over its states before anything is reported.  A block using a construct the
analysis does not follow reports nothing (see ``validity.py``).
"""

from __future__ import annotations

from lark import Tree

from ..frontend.storage import Types
from ..frontend.treenav import direction_of, name_of, params_of, type_name_of
from .header_validity import NO, YES, Bail, Ctx, Defs, Flow, Var, Warn, lookup


def _targets(state: Tree | None) -> list[str]:
    out = []
    for t in (state.iter_subtrees() if state is not None else []):
        if t.data == "trans_direct":
            out.append(name_of(t.children[0]))
        elif t.data == "select_case":
            out.append(name_of(t.children[1]))
    return out


class Analysis:
    """Runs ``Flow`` over the controls, parsers and functions p4c keeps."""

    def __init__(self, tree: Tree, warn: Warn, live: set[tuple[str | None, str]]):
        self.tree = tree
        self.live = live
        self.types = Types(tree)
        self.found: list[tuple[Tree, str, str]] = []
        self.globals: dict[str, Var] = {}
        self.actions: dict[str, Tree] = {}
        self.functions: dict[str, Tree] = {}
        self.extern_funcs: dict[str, list[list[Tree]]] = {}
        self.externs: dict[str, dict[str, list[list[Tree]]]] = {}
        self.blocks: dict[str, list[Tree]] = {}
        self.objects: dict[str, str | None] = {}
        self._warn = warn
        for d in tree.children:
            if not isinstance(d, Tree):
                continue
            if d.data == "action_decl":
                self.actions[name_of(d.children[1])] = d
            elif d.data == "function_decl":
                self.functions[name_of(d.children[2])] = d
            elif d.data == "extern_func_decl":
                self.extern_funcs.setdefault(name_of(d.children[2]), []).append(params_of(d.children[4]))
            elif d.data == "extern_decl":
                ms: dict[str, list[list[Tree]]] = {}
                for m in d.children[3:]:
                    if isinstance(m, Tree) and m.data == "method_proto":
                        ms.setdefault(name_of(m.children[1].children[1]), []).append(
                            params_of(m.children[1].children[3]))
                self.externs[name_of(d.children[1])] = ms
            elif d.data in ("control_decl", "parser_decl"):
                self.blocks[name_of(d.children[1])] = params_of(d.children[3])
            elif d.data == "instantiation":
                self.objects[name_of(d.children[3])] = type_name_of(d.children[1])
            elif d.data == "const_decl":
                nm = d.children[2]
                self.globals[name_of(nm)] = Var((nm.meta.line, nm.meta.column), ("s",))

    def warn(self, node, kind: str, text: str) -> None:
        self.found.append((node, kind, text))

    def method_params(self, obj: str | None, method: str, nargs: int, ctx: Ctx, env) -> list[Tree] | None:
        tname = ctx.objects.get(obj) if obj is not None else None
        if obj is not None and lookup(env, obj) is not None and obj not in ctx.objects:
            return None
        if method == "apply" and tname in self.blocks:
            return self.blocks[tname]
        cands = [c for c in self.externs.get(tname or "", {}).get(method, []) if len(c) == nargs]
        return cands[0] if len(cands) == 1 else None

    def outer(self, act: Tree, env: list[dict]) -> list[dict]:
        """The scopes an action's body sees: a top-level action only the globals, a control's
        action the control's (its outermost scopes in ``env``)."""
        return [self.globals] if any(act is a for a in self.actions.values()) else env[:2]

    def constant(self, e) -> bool:
        """Whether ``e`` is made of literals and global constants only (p4c folds it)."""
        for t in (e.iter_subtrees() if isinstance(e, Tree) else []):
            if t.data in ("member", "index", "call", "tcall") or \
                    t.data == "ident" and str(t.children[-1]) not in self.globals:
                return False
        return True

    def run(self) -> None:
        for d in self.tree.children:
            if not isinstance(d, Tree) or d.data not in ("control_decl", "parser_decl", "function_decl"):
                continue
            nm = d.children[2 if d.data == "function_decl" else 1]
            if (None, name_of(nm)) not in self.live:
                continue
            before = len(self.found)
            try:
                getattr(self, d.data[:-5])(d)
            except (Bail, LookupError, TypeError, AttributeError, ValueError):
                # a construct not followed (or malformed in a way the checks after this one
                # report): the warnings stay off, the program's compilation goes on
                del self.found[before:]
        for node, kind, text in self.found:
            self._warn(node, kind, text)

    def _block_scope(self, params, locals_: list) -> tuple[Ctx, dict, Defs]:
        ctx = Ctx({n: a for n, a in self.actions.items()}, {}, dict(self.objects))
        scope: dict = {}
        hd = Defs()
        for p in params_of(params):
            tn = type_name_of(p.children[2])
            if tn is not None and (tn in self.externs or tn in ("packet_in", "packet_out")):
                ctx.objects[name_of(p.children[3])] = tn
                continue
            t = self.types.of(p.children[2])
            if t is None:
                raise Bail()
            v = Var((p.children[3].meta.line, p.children[3].meta.column), t)
            scope[name_of(p.children[3])] = v
        for c in locals_:
            if not isinstance(c, Tree):
                continue
            if c.data == "action_decl":
                ctx.actions[name_of(c.children[1])] = c
            elif c.data == "table_decl":
                ctx.tables[name_of(c.children[1])] = c
            elif c.data == "instantiation":
                ctx.objects[name_of(c.children[3])] = type_name_of(c.children[1])
        return ctx, scope, hd

    def _start(self, flow: Flow, params, scope: dict, locals_: list, env: list[dict]) -> None:
        """Parameters' validity, then the block's variables (reset or initialised in order)."""
        for p in params_of(params):
            v = scope.get(name_of(p.children[3]))
            if v is not None:
                flow.set_all((v.key,), v.type, False, NO if direction_of(p) == "out" else YES)
        for c in locals_:
            if isinstance(c, Tree) and c.data in ("var_decl", "var_decl_arr", "const_decl"):
                flow.stmt(c, env)

    def control(self, d: Tree) -> None:
        locals_ = d.children[5:-2]
        ctx, scope, hd = self._block_scope(d.children[3], locals_)
        flow = Flow(self, ctx, hd, True)
        env: list[dict] = [self.globals, scope]
        self._start(flow, d.children[3], scope, locals_, env)
        flow.stmts(d.children[-1].children, env)

    def function(self, d: Tree) -> None:
        if d.children[3] is not None:
            raise Bail()  # generic: its types are not known here
        ctx, scope, hd = self._block_scope(d.children[4], [])
        flow = Flow(self, ctx, hd, True)
        env: list[dict] = [self.globals, scope]
        self._start(flow, d.children[4], scope, [], env)
        flow.stmts(d.children[5].children, env)

    def parser(self, d: Tree) -> None:
        items = [c for c in d.children[5:] if isinstance(c, Tree)]
        states = {name_of(c.children[2]): c for c in items if c.data == "parser_state"}
        ctx, scope, hd = self._block_scope(d.children[3], items)
        start = Flow(self, ctx, hd, False)
        env: list[dict] = [self.globals, scope]
        self._start(start, d.children[3], scope, items, env)
        ins: dict[str, Defs] = {"start": start.hd}
        work = ["start"]
        while work:  # p4c's worklist: nothing is reported until every state's entry is known
            s = work.pop()
            out = self._state(ctx, states.get(s), ins[s].clone(), env, False)
            for t in _targets(states.get(s)):
                if t not in states:
                    continue
                new = out.clone() if t not in ins else ins[t].meet_quiet(out)
                if t not in ins or new != ins[t]:
                    ins[t] = new
                    work.append(t)
        for s, d_in in ins.items():
            self._state(ctx, states.get(s), d_in.clone(), env, True)

    def _state(self, ctx: Ctx, st: Tree | None, hd: Defs, env: list[dict], report: bool) -> Defs:
        if st is None:
            return hd
        flow = Flow(self, ctx, hd, report)
        env.append({})
        for c in st.children[3:]:
            if isinstance(c, Tree) and c.data == "trans_select":
                flow.expr(c.children[0].children[0], env)
            elif isinstance(c, Tree) and c.data != "trans_direct":
                flow.stmt(c, env)
        env.pop()
        return flow.hd



def check(tree: Tree, decls, live: set[tuple[str | None, str]]) -> None:
    """Record p4c's invalid-header warnings (``decls.warn``) for what p4c keeps (``live``)."""
    Analysis(tree, decls.warn, live).run()


__all__ = ["check"]

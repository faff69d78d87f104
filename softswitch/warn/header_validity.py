"""p4c's ``[--Wwarn=invalid_header]`` warning (``SimplifyDefUse``, its ``HeaderDefinitions``):
a field of a header read or written where the header is invalid
(``accessing a field of an invalid header h``) or may be invalid (``... of a potentially invalid
header h``).

The validity of each header (a header variable or parameter, or a header field of a struct,
nested) is Yes, No or Maybe, followed the way p4c does it:

- at the start of a control, parser or function its ``in``/``inout`` parameters are valid and
  its ``out`` ones invalid; header variables start invalid (p4c's ``ResetHeaders``);
- ``setValid()``/``setInvalid()``, assignments (``{#}`` invalid, a struct or list expression or a
  call valid, another header as that one), the ``out``/``inout`` arguments of extern calls and
  of control/parser ``apply`` (valid) and action calls (the action is followed, its parameters
  bound as assignments) change it; a user function call changes nothing;
- after ``if``/``switch`` each header keeps a value only if every branch agrees (else Maybe);
  a table apply follows each of its actions, and -- as p4c, whose state object the table's
  analysis replaces rather than updates -- what the actions do is not seen after the apply;
- after ``h.isValid()`` nothing is reported on ``h`` until the end of the enclosing ``if``,
  ``switch`` or table (p4c's "not report" set);
- a parser's states are followed to a fixpoint (the meet of all incoming transitions) before
  anything is reported.

Header stacks and unions are not followed (nothing is reported on their elements); a block
using a construct this module does not follow (a loop, a call it cannot resolve, a value of
an unknown or generic type) reports nothing at all, so the check never warns where p4c would
not.  Only what p4c keeps is analysed (``unused.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from lark import Tree

from ..check.statements import text_of
from ..frontend.literals import parse_int
from ..frontend.storage import Type, Types
from ..frontend.treenav import direction_of, name_of, params_of

Warn = Callable[[Tree, str, str], None]
YES, NO, MAYBE = "Y", "N", "M"
_PURE = {"minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"}


class Bail(Exception):
    """A construct this module does not follow: report nothing for the block."""



# ---------------------------------------------------------------- the validity state
@dataclass
class Defs:
    """p4c's ``HeaderDefinitions``: header location -> Yes/No/Maybe (absent: Maybe), and the
    headers an ``isValid()`` has been called on."""

    defs: dict[tuple, str] = field(default_factory=dict)
    quiet: set[tuple] = field(default_factory=set)

    def clone(self) -> Defs:
        return Defs(dict(self.defs), set(self.quiet))

    def find(self, loc: tuple) -> str:
        return YES if loc in self.quiet else self.defs.get(loc, MAYBE)

    def set(self, loc: tuple, v: str) -> None:
        self.defs[loc] = v
        self.quiet.discard(loc)

    def meet(self, other: Defs) -> Defs:
        return Defs({k: v if other.defs.get(k, MAYBE) == v else MAYBE for k, v in self.defs.items()})

    def meet_quiet(self, other: Defs) -> Defs:
        """The meet, keeping the quiet headers of both (at a parser state's entry: p4c keeps
        those of the first incoming transition only; more quiet means fewer warnings)."""
        out = self.meet(other)
        out.quiet = self.quiet | other.quiet
        return out


# ---------------------------------------------------------------- one block
@dataclass
class Var:
    key: tuple      # the declaration's position: the root of its locations
    type: Type | None


@dataclass
class Ctx:
    """What names mean in one control, parser or function."""

    actions: dict[str, Tree]
    tables: dict[str, Tree]
    objects: dict[str, str | None]   # instance or extern-typed parameter -> its type name


class Program(Protocol):
    """What ``Flow`` needs of the whole program (``validity_check.Analysis``)."""

    types: Types
    actions: dict[str, Tree]
    functions: dict[str, Tree]
    extern_funcs: dict[str, list[list[Tree]]]
    blocks: dict[str, list[Tree]]

    def warn(self, node, kind: str, text: str) -> None: ...

    def method_params(self, obj: str | None, method: str, nargs: int, ctx: Ctx,
                      env: list[dict]) -> list[Tree] | None: ...

    def outer(self, act: Tree, env: list[dict]) -> list[dict]: ...

    def constant(self, e) -> bool: ...


class Flow:
    """Follows validity through statements; ``hd`` is shared with the caller when following a
    called action, as p4c shares its state object."""

    def __init__(self, an: Program, ctx: Ctx, hd: Defs, report: bool):
        self.an = an
        self.ctx = ctx
        self.hd = hd
        self.report = report
        self.unreachable = False

    # ------------------------------------------------------------ locations
    def loc(self, e, env: list[dict]) -> tuple[tuple | None, Type | None, bool]:
        """(location, type, opaque) of an lvalue; opaque: inside a stack or union (not
        followed); location None: not a variable (a call's result...)."""
        if isinstance(e, Tree) and e.data == "ident":
            v = lookup(env, str(e.children[-1]))
            return (None, None, False) if v is None else ((v.key,), v.type, False)
        if isinstance(e, Tree) and e.data == "member":
            base, bt, opaque = self.loc(e.children[0], env)
            if base is None or bt is None or bt[0] not in ("h", "st", "u"):
                return None, None, opaque
            m = name_of(e.children[1])
            fs = self.an.types.fields(bt)
            if m not in fs:
                return None, None, opaque
            return base + (m,), fs[m], opaque or bt[0] == "u"
        if isinstance(e, Tree) and e.data == "index":
            base, bt, _opaque = self.loc(e.children[0], env)
            if base is None or bt is None or bt[0] != "stack":
                return None, None, True
            i = e.children[1]
            idx = parse_int(str(i.children[0]))[0] if isinstance(i, Tree) and i.data == "int_lit" else "*"
            return base + (idx,), bt[1], True
        return None, None, False

    def find(self, e, env: list[dict]) -> str:
        loc, t, opaque = self.loc(e, env)
        if loc is None or opaque or t is None or t[0] != "h":
            return YES
        return self.hd.find(loc)

    def set_all(self, loc: tuple | None, t: Type | None, opaque: bool, v: str) -> None:
        """p4c's ``setValueToStorage``: a header, or every header inside a struct."""
        if loc is None or t is None or opaque:
            return
        if t[0] == "h":
            self.hd.set(loc, v)
        elif t[0] == "st":
            for f, ft in self.an.types.fields(t).items():
                self.set_all(loc + (f,), ft, False, v)

    def assign(self, dst: tuple | None, dt: Type | None, opaque: bool, src, src_loc, env) -> None:
        """p4c's ``processHeadersInAssignment``: ``src`` an expression, or (``src_loc``) the
        location of a parameter."""
        if dt is None:
            raise Bail()
        if dt[0] not in ("h", "st") or opaque or dst is None:
            return
        if src_loc is not None:
            if dt[0] == "h":
                self.hd.set(dst, self.hd.find(src_loc))
            else:
                for f, ft in self.an.types.fields(dt).items():
                    self.assign(dst + (f,), ft, False, None, src_loc + (f,), env)
            return
        while isinstance(src, Tree) and src.data == "cast":
            src = src.children[-1]
        kind = src.data if isinstance(src, Tree) else ""
        if dt[0] == "h":
            v = NO if kind == "invalid_hdr" else self.find(src, env) if kind in ("ident", "member", "index") \
                else YES
            self.hd.set(dst, v)
            return
        if kind in ("call", "tcall"):
            self.set_all(dst, dt, False, YES)
        elif kind == "struct_expr":
            given = {str(kv.children[0]): kv.children[1] for kv in src.children
                     if isinstance(kv, Tree) and kv.data == "kv"}
            for f, ft in self.an.types.fields(dt).items():
                if f not in given:
                    raise Bail()
                self.assign(dst + (f,), ft, False, given[f], None, env)
        elif kind == "list_expr":
            items = [c for c in (src.children[0].children if src.children and isinstance(
                src.children[0], Tree) else []) if c is not None]
            fs = list(self.an.types.fields(dt).items())
            if len(items) != len(fs):
                raise Bail()
            for (f, ft), item in zip(fs, items, strict=True):
                self.assign(dst + (f,), ft, False, item, None, env)
        elif kind in ("ident", "member", "index"):
            sl, _st, sop = self.loc(src, env)
            if sl is None or sop:
                raise Bail()
            for f, ft in self.an.types.fields(dt).items():
                self.assign(dst + (f,), ft, False, None, sl + (f,), env)
        else:
            raise Bail()

    # ------------------------------------------------------------ statements
    def stmts(self, items, env: list[dict]) -> None:
        env.append({})
        for st in items:
            self.stmt(st, env)
        env.pop()

    def stmt(self, st, env: list[dict]) -> None:
        if self.unreachable or not isinstance(st, Tree):
            return
        k = st.data
        if k in ("var_decl", "var_decl_arr"):
            self.declare(st, env)
        elif k == "const_decl":
            nm = st.children[2]
            env[-1][name_of(nm)] = Var((nm.meta.line, nm.meta.column), ("s",))
        elif k in ("assign_stmt", "op_assign_stmt"):
            lhs, rhs = st.children[0], st.children[-1]
            self.expr(lhs, env)
            if k == "op_assign_stmt":
                self.expr(lhs, env)
            self.expr(rhs, env)
            if k == "assign_stmt" and not (isinstance(lhs, Tree) and lhs.data == "slice"):
                loc, t, opaque = self.loc(lhs, env)
                if loc is None:
                    raise Bail()
                self.assign(loc, t, opaque, rhs, None, env)
        elif k == "call_stmt":
            self.expr(st.children[0], env)
        elif k == "if_stmt":
            self.if_stmt(st, env)
        elif k == "switch_stmt":
            self.switch(st, env)
        elif k in ("block", "annotated_block"):
            self.stmts((st if k == "block" else st.children[-1]).children, env)
        elif k == "return_stmt":
            if st.children and st.children[0] is not None:
                self.expr(st.children[0], env)
            self.unreachable = True
        elif k == "exit_stmt":
            self.unreachable = True
        elif k != "empty_stmt":
            raise Bail()  # loops, break/continue...

    def declare(self, st: Tree, env: list[dict]) -> None:
        _ann, t, nm = st.children[:3]
        init = st.children[-1]
        vt = self.an.types.of(t)
        if st.data == "var_decl_arr":
            vt = ("stack", vt) if vt is not None else None
        if vt is None:
            raise Bail()
        var = Var((nm.meta.line, nm.meta.column), vt)
        if init is not None and not (isinstance(init, Tree) and init.data == "dims"):
            self.expr(init, env)
            env[-1][name_of(nm)] = var
            self.assign((var.key,), vt, False, init, None, env)
        else:
            env[-1][name_of(nm)] = var
            self.set_all((var.key,), vt, False, NO)   # p4c's ResetHeaders

    def if_stmt(self, st: Tree, env: list[dict]) -> None:
        if self.an.constant(st.children[0]):
            raise Bail()  # p4c folds it first and follows one branch only
        before = self.hd.clone()
        self.expr(st.children[0], env)
        after_cond = self.hd.clone()
        self.stmts([st.children[1]], env)
        then_unreachable = self.unreachable
        self.unreachable = False
        if st.children[2] is not None:
            self.hd, after_cond = after_cond, self.hd
            self.stmts([st.children[2]], env)
        self.unreachable = then_unreachable and self.unreachable
        self.hd = self.hd.meet(after_cond)
        self.hd.quiet = set(before.quiet)

    def switch(self, st: Tree, env: list[dict]) -> None:
        before = self.hd.clone()
        self.expr(st.children[0], env)
        after = self.hd.clone()
        final: Defs | None = None
        all_unreachable, default = True, False
        for case in st.children[1:]:
            if not isinstance(case, Tree) or case.children[1] is None:
                continue
            label = case.children[0]
            default |= isinstance(label, Tree) and label.data == "label_default"
            self.unreachable = False
            self.hd = after.clone()
            self.stmts(case.children[1].children, env)
            all_unreachable &= self.unreachable
            final = self.hd if final is None else final.meet(self.hd)
        self.unreachable = all_unreachable
        if final is not None:
            self.hd = final if default else final.meet(after)
        self.hd.quiet = set(before.quiet)

    # ------------------------------------------------------------ expressions
    def expr(self, e, env: list[dict]) -> None:
        if not isinstance(e, Tree):
            return
        k = e.data
        if k in ("call", "tcall"):
            self.call(e, env)
        elif k == "member":
            base = e.children[0]
            self.expr(base, env)
            _loc, bt, _opaque = self.loc(base, env)
            if bt is not None and bt[0] == "h" and self.report:
                v = self.find(base, env)
                if v != YES:
                    what = "an invalid" if v == NO else "a potentially invalid"
                    self.an.warn(base, "invalid_header",
                                 f"accessing a field of {what} header {text_of(base)}")
        elif k in ("type_member", "error_member", "int_lit", "string_lit", "true_lit", "false_lit", "ident",
                   "name", "type_name"):
            return
        else:
            for c in e.children:
                self.expr(c, env)

    def call(self, e: Tree, env: list[dict]) -> None:
        callee = e.children[0]
        given = e.children[-1].children if isinstance(e.children[-1], Tree) else []
        if any(isinstance(a, Tree) and a.data == "named_arg" for a in given):
            raise Bail()
        args = [a for a in given if a is not None]
        if isinstance(callee, Tree) and callee.data == "member":
            base, method = callee.children[0], name_of(callee.children[1])
            self.expr(base, env)
            loc, bt, opaque = self.loc(base, env)
            if bt is not None and bt[0] in ("h", "u", "stack"):
                if method in ("isValid", "setValid", "setInvalid") and bt[0] == "h" and loc is not None \
                        and not opaque:
                    if method == "isValid":
                        self.hd.quiet.add(loc)
                    else:
                        self.hd.set(loc, YES if method == "setValid" else NO)
                elif method not in {"isValid", "setValid", "setInvalid", "push_front", "pop_front"} | _PURE:
                    raise Bail()
                return
            obj = str(base.children[-1]) if isinstance(base, Tree) and base.data == "ident" else None
            if method == "apply" and obj in self.ctx.tables and lookup(env, obj) is None:
                self.table(self.ctx.tables[obj], env)
                return
            params = self.an.method_params(obj, method, len(args), self.ctx, env)
            if params is None:
                raise Bail()
            self.opaque_call(params, args, env)
            return
        if isinstance(callee, Tree) and callee.data == "type_member":
            params = self.an.blocks.get(str(callee.children[0].children[-1]))
            if params is None or name_of(callee.children[1]) != "apply":
                raise Bail()
            self.opaque_call(params, args, env)
            return
        name = str(callee.children[-1]) if isinstance(callee, Tree) and callee.data == "ident" else None
        if name in self.ctx.actions:
            self.action_call(self.ctx.actions[name], args, env)
        elif name in self.an.functions:
            self.function_call(self.an.functions[name], args, env)
        elif name in self.an.extern_funcs:
            cands = [c for c in self.an.extern_funcs[name] if len(c) == len(args)]
            if len(cands) != 1:
                raise Bail()
            self.opaque_call(cands[0], args, env)
        else:
            raise Bail()

    def opaque_call(self, params: list[Tree], args: list, env: list[dict]) -> None:
        """An extern, control or parser call: in arguments are read, out/inout ones become
        valid (every header inside)."""
        pairs = list(zip(params, args, strict=False))
        for p, a in pairs:
            if direction_of(p) != "out":
                self.expr(a, env)
        for p, a in pairs:
            if direction_of(p) in ("out", "inout"):
                self.expr(a, env)
                self.set_all(*self.loc(a, env), YES)

    def function_call(self, fn: Tree, args: list, env: list[dict]) -> None:
        for p, a in zip(params_of(fn.children[4]), args, strict=False):
            if direction_of(p) != "out":
                self.expr(a, env)
        for p, a in zip(params_of(fn.children[4]), args, strict=False):
            if direction_of(p) in ("out", "inout"):
                self.expr(a, env)

    def action_call(self, act: Tree, args: list, env: list[dict], from_table: bool = False) -> None:
        """An action called here: arguments bound as assignments to its parameters, its body
        followed with this state (shared, as p4c's child visitor shares it)."""
        params = params_of(act.children[2])
        scope: dict = {}
        for p in params:
            t = self.an.types.of(p.children[2])
            if t is None:
                raise Bail()
            scope[name_of(p.children[3])] = Var((p.children[3].meta.line, p.children[3].meta.column), t)
        pairs = list(zip(params, args, strict=False))
        for p, a in pairs:
            v = scope[name_of(p.children[3])]
            if direction_of(p) != "out":
                self.expr(a, env)
            if direction_of(p) == "out":
                self.set_all((v.key,), v.type, False, NO)
            else:
                self.assign((v.key,), v.type, False, a, None, env)
        for p in params[len(args):]:
            if direction_of(p) == "":
                v = scope[name_of(p.children[3])]
                self.set_all((v.key,), v.type, False, YES)
        child = Flow(self.an, self.ctx, self.hd, self.report)
        child.stmts(act.children[3].children, [*self.an.outer(act, env), scope])
        for p, a in pairs:
            if direction_of(p) in ("out", "inout"):
                self.expr(a, env)
                v = scope[name_of(p.children[3])]
                self.assign(*self.loc(a, env), None, (v.key,), env)

    def table(self, t: Tree, env: list[dict]) -> None:
        """A table apply: its keys read with this state, each action followed on a copy; the
        copies are dropped (p4c replaces, rather than updates, the caller's state)."""
        for prop in t.children[2:]:
            if isinstance(prop, Tree) and prop.data == "tp_key":
                for ke in prop.children:
                    if isinstance(ke, Tree) and ke.data == "key_elem":
                        self.expr(ke.children[0], env)
        after_key = self.hd
        for prop in t.children[2:]:
            if isinstance(prop, Tree) and prop.data == "tp_actions":
                for ref in prop.children:
                    if not (isinstance(ref, Tree) and ref.data == "action_ref"):
                        continue
                    act = self.ctx.actions.get(name_of(ref.children[1]))
                    if act is None:
                        raise Bail()
                    args = [a for a in (ref.children[2].children if len(ref.children) > 2 and isinstance(
                        ref.children[2], Tree) else []) if a is not None]
                    child = Flow(self.an, self.ctx, after_key.clone(), self.report)
                    child.action_call(act, args, env)
        self.hd = after_key


def lookup(env: list[dict], name: str) -> Var | None:
    """The variable a name means in ``env`` (innermost scope first)."""
    for scope in reversed(env):
        if name in scope:
            return scope[name]
    return None


__all__ = ["Bail", "Ctx", "Defs", "Flow", "Var", "lookup", "YES", "NO", "MAYBE"]

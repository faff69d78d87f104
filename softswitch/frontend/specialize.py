"""Rewrites of p4c's front end that need declared types, done on the syntax tree before both
generators (python and IR -> C), so neither has to know these constructs:

- tuple types become structs ``tuple_N { T0 f0; T1 f1; ... }`` (p4c's EliminateTuples), and an
  index ``t[i]`` of a tuple (``i`` a literal) the field ``t.fi``;
- constants of struct, header or tuple type are folded into their uses (p4c's constant
  folding): ``P.x`` becomes the initialiser of field ``x`` (cast to its type), a whole ``P``
  the initialiser cast to ``P``'s type; the declaration goes away;
- generic functions are specialised per call (p4c's SpecializeGenericFunctions): the type
  arguments given (``f<bit<8>>(x)``) or inferred from the arguments' declared types; each
  distinct set of type arguments gets one copy ``f<bit<8>>`` declared before the first
  declaration that calls it, with the type parameters substituted; the generic declaration
  itself goes away. Every generic function is also type-checked as p4c does, where it is
  declared: one copy whose type parameters are opaque empty structs.

Names are tracked by scope (parameters, locals, constants in the order they are declared), so
a local that shadows a constant is left alone.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from lark import Token, Tree

from ..api import P4CompileError
from .declared_types import Bind, TypeIndex, name_of, type_text
from .literals import parse_int

Err = Callable[[object, str], P4CompileError]
Env = dict[str, Bind]

#: annotation of the copy of a generic function checked with opaque type parameters: checked
#: like any function, never lowered to code (nothing calls it)
CHECK_ONLY = "__generic_body_check"
_NAMED = {"var_decl": (2, 1), "const_decl": (2, 1), "param": (3, 2), "instantiation": (3, 1)}
_SHADOW = {"action_decl": 1, "table_decl": 1, "value_set_decl": 3}


def _mk(data: str, children: list, like) -> Tree:
    return Tree(data, children, like.meta if isinstance(like, Tree) else None)


def _ident(name: str, like) -> Tree:
    return _mk("ident", [Token("IDENTIFIER", name)], like)


class Specializer:
    """One pass over a whole program (see the module docstring)."""

    def __init__(self, tree: Tree, err: Err, origins: dict[str, Tree] | None = None):
        self.tree = tree
        self.err = err
        self.origins = origins or {}  # specialised generic struct name -> its use S<...>
        self.types = TypeIndex()
        self.genv: Env = {}
        self.generics: dict[str, Tree] = {}
        self.specs: dict[tuple[str, tuple[str, ...]], str] = {}
        self.pending: list[Tree] = []
        self.tuples: dict[str, str] = {}
        self.tvars: frozenset[str] = frozenset()  # type variables of the extern being walked
        self.declared = {name_of(d.children[1]) for d in tree.children if isinstance(d, Tree)
                         and d.data in ("struct_decl", "header_decl", "header_union_decl")}

    def run(self) -> None:
        out: list = []
        where: dict[str, int] = {}
        for d in self.tree.children:
            if isinstance(d, Tree) and d.data == "function_decl" and d.children[3] is not None:
                tvs = [name_of(c) for c in d.children[3].children if isinstance(c, Tree)]
                dup = next((t for i, t in enumerate(tvs) if t in tvs[:i]), None)
                if dup is not None:
                    raise self.err(d.children[3], f"duplicate type parameter {dup}")
                self.generics[name_of(d.children[2])] = d
                where[name_of(d.children[2])] = len(out)
                continue
            out += self.top(d)
        for name, pos in sorted(where.items(), key=lambda kv: -kv[1]):  # every one, called or not
            out[pos:pos] = self.uncalled(self.generics[name], out)
        self.tree.children = out

    def uncalled(self, decl: Tree, out: list) -> list:
        """A generic function checked as p4c checks it where it is declared, whether or not
        something calls it (spec: operations on values of a type variable): a copy whose type
        parameters are opaque types (empty structs named after them), so its body may only
        copy, compare and pass its ``T`` values, as for every ``T`` (no arithmetic, casts or
        methods).  Returns the declarations to insert."""
        taken = {name_of(c) for d in out if isinstance(d, Tree) for c in d.children[:4]
                 if isinstance(c, Tree) and c.data == "name"} | self.declared
        binding: dict[str, Tree] = {}
        structs: list[Tree] = []
        tvars = [name_of(c) for c in decl.children[3].children if isinstance(c, Tree)]
        for tv in tvars:
            sname, k = tv, 0
            while sname in taken:
                k += 1
                sname = f"{tv}_{k}"
            taken.add(sname)
            self.declared.add(sname)
            st = _mk("struct_decl", [None, Tree("name", [Token("TYPE_IDENTIFIER", sname)])], decl)
            self.types.add_decl(st)
            structs.append(st)
            binding[tv] = _mk("type_name", [Token("TYPE_IDENTIFIER", sname)], decl)
        saved, self.pending = self.pending, []
        spec = f"{name_of(decl.children[2])}<{', '.join(tvars)}>"
        while spec in self.specs.values() or spec in taken:  # a call's copy may have that name
            spec += "'"
        self.pending_copy(decl, spec, binding)
        copy_ = self.pending.pop()
        mark = _mk("annotation", [Token("ANNOT", "@" + CHECK_ONLY)], decl)
        anns = copy_.children[0].children if isinstance(copy_.children[0], Tree) else []
        copy_.children[0] = _mk("annotations", [*anns, mark], decl)
        self.pending = saved
        return structs + self.top(copy_)

    def top(self, d) -> list:
        """A top-level declaration, preceded by the tuple structs and specialisations it needs."""
        if not isinstance(d, Tree):
            return [d]
        saved, self.pending = self.pending, []
        d = self.walk(d, self.genv)
        before: list = []
        for p in self.pending:
            before += p if isinstance(p, list) else self.top(p)
        self.pending = saved
        keep = self.declare(d, self.genv)
        self.types.add_decl(d)
        if not keep and d.data == "const_decl":
            return before + self.top(self.const_check(d))
        return before + ([d] if keep else [])

    def const_check(self, d: Tree) -> Tree:
        """A folded constant is gone before the checks see it: p4c checks its initialiser
        against its type even when nothing uses it, so it leaves a check-only function
        ``void f() { T v = NAME; }`` (``NAME`` folds to the initialiser cast to ``T``)."""
        name = name_of(d.children[2])
        var = _mk("var_decl", [None, copy.deepcopy(d.children[1]),
                               _mk("name", [Token("IDENTIFIER", "v")], d), _ident(name, d.children[3])], d)
        mark = _mk("annotations", [_mk("annotation", [Token("ANNOT", "@" + CHECK_ONLY)], d)], d)
        return _mk("function_decl", [mark, _mk("t_void", [Token("VOID", "void")], d),
                                     _mk("name", [Token("IDENTIFIER", f"__const_check_{name}")], d),
                                     None, _mk("params", [None], d), _mk("block", [var], d)], d)

    # ------------------------------------------------------------ scopes
    def declare(self, c, env: Env) -> bool:
        """Record what ``c`` declares in ``env``; False when ``c`` is a folded constant."""
        if not isinstance(c, Tree):
            return True
        if c.data in _NAMED:
            ni, ti = _NAMED[c.data]
            t = c.children[ti]
            value = None
            if c.data == "const_decl" and self._compound(t):
                value = c.children[3]
            env[name_of(c.children[ni])] = Bind(t, value)
            return value is None
        if c.data in ("params", "ctor_params"):
            for p in (c.children if c.data == "params" else c.children[0].children):
                if isinstance(p, Tree):
                    self.declare(p, env)
        elif c.data in _SHADOW:
            env[name_of(c.children[_SHADOW[c.data]])] = Bind(None)
        elif c.data == "function_decl":
            env[name_of(c.children[2])] = Bind(None)
        return True

    def _compound(self, t) -> bool:
        return self.types.struct_fields(t) is not None

    def walk(self, node, env: Env):
        if not isinstance(node, Tree):
            return node
        if node.data == "tuple_type":
            return self.tuple_struct(node)
        tps = next((c for c in node.children if isinstance(c, Tree) and c.data == "type_params"), None)
        if tps is not None:  # an extern's (or its method's) type variables: tuple<T, T> stays
            saved = self.tvars
            self.tvars = saved | {name_of(c) for c in tps.children if isinstance(c, Tree)}
            try:
                return self._walk_children(node, env)
            finally:
                self.tvars = saved
        return self._walk_children(node, env)

    def _walk_children(self, node: Tree, env: Env):
        local = dict(env)
        kids: list = []
        for c in node.children:
            c = self.walk(c, local)
            if node.data != "params" and not self.declare(c, local):
                continue
            kids.append(c)
        node.children = kids
        return self.rewrite(node, env)

    # ------------------------------------------------------------ expressions
    def rewrite(self, e: Tree, env: Env):
        d = e.data
        if d == "index" and isinstance(e.children[1], Tree) and e.children[1].data == "int_lit":
            t = self.types.resolve(self._type(e.children[0], env))
            if isinstance(t, Tree) and t.data == "type_name" and str(t.children[-1]) in self.tuples.values():
                i = parse_int(str(e.children[1].children[0]))[0]
                n = len(self.types.fields[str(t.children[-1])])
                if i >= n:
                    raise self.err(e.children[1], f"index {i} out of range for a tuple of {n} elements")
                e = _mk("member", [e.children[0], Tree("name", [Token("IDENTIFIER", f"f{i}")])], e)
                d = "member"
        if d in ("ident", "member"):
            folded = self.fold(e, env)
            if folded is not None:
                return self.as_expr(*folded, e)
        if d in ("call", "tcall"):
            return self.generic_call(e, env)
        return e

    def _type(self, e, env: Env):
        return self.types.type_of(e, env)

    def fold(self, e, env: Env) -> tuple[Tree, Tree] | None:
        """(type, initialiser) of an expression that is a folded constant or a part of one."""
        if e.data == "ident":
            b = env.get(str(e.children[-1]))
            return (b.type, b.value) if b is not None and b.value is not None else None
        if e.data == "cast" and isinstance(e.children[1], Tree) \
                and e.children[1].data in ("list_expr", "struct_expr", "dots_expr") \
                and self._compound(e.children[0]):
            return e.children[0], e.children[1]
        if e.data != "member" or not isinstance(e.children[0], Tree):
            return None
        base = self.fold(e.children[0], env)
        if base is None:
            return None
        fields = self.types.struct_fields(base[0]) or []
        init = base[1]
        while isinstance(init, Tree) and init.data == "cast":
            init = init.children[1]
        member = name_of(e.children[1])
        for i, (fname, ftype) in enumerate(fields):
            if fname != member:
                continue
            if isinstance(init, Tree) and init.data == "dots_expr":  # `...`: every field too
                return ftype, init
            if isinstance(init, Tree) and init.data == "struct_expr":
                for kv in init.children:
                    if isinstance(kv, Tree) and str(kv.children[0]) == member:
                        return ftype, kv.children[1]
                if isinstance(init.children[-1], Token):  # {a = x, ...}: left out, a default
                    return ftype, _mk("dots_expr", [init.children[-1]], init)
            elif isinstance(init, Tree) and init.data == "list_expr":
                items = [x for x in init.children[0].children if x is not None]
                dots = items and isinstance(items[-1], Tree) and items[-1].data == "dots_expr"
                if i < len(items) - dots:
                    return ftype, items[i]
                if dots:  # {x, ...}: the fields after the items take defaults
                    return ftype, items[-1]
            return None
        return None

    def as_expr(self, t: Tree, init: Tree, like: Tree) -> Tree:
        """A folded value as an expression of type ``t`` (reported at ``like``)."""
        v = copy.deepcopy(init)
        rt = self.types.resolve(t)
        if isinstance(v, Tree) and v.data in ("list_expr", "struct_expr", "dots_expr") \
                or isinstance(rt, Tree) and rt.data in ("t_bit", "t_int") and not (
                    isinstance(v, Tree) and v.data == "cast"):
            v = _mk("cast", [copy.deepcopy(t), v], like)
        return v

    # ------------------------------------------------------------ tuples
    def tuple_struct(self, t: Tree) -> Tree:
        elems = [self.walk(a, self.genv) for a in t.children[0].children]
        if self.tvars and any(s.data == "type_name" and str(s.children[-1]) in self.tvars
                              for a in elems if isinstance(a, Tree) for s in a.iter_subtrees()):
            t.children[0].children = elems  # generic: a struct per use would need T bound
            return t
        key = ", ".join(type_text(a) for a in elems)
        if key not in self.tuples:
            n = len(self.tuples)
            while f"tuple_{n}" in self.declared:
                n += 1
            name = f"tuple_{n}"
            self.declared.add(name)
            self.tuples[key] = name
            fields = [_mk("field", [None, copy.deepcopy(a), Tree("name", [Token("IDENTIFIER", f"f{i}")])], t)
                      for i, a in enumerate(elems)]
            decl = _mk("struct_decl", [None, Tree("name", [Token("TYPE_IDENTIFIER", name)])] + fields, t)
            self.types.add_decl(decl)
            self.pending.append([decl])
        return _mk("type_name", [Token("TYPE_IDENTIFIER", self.tuples[key])], t)

    # ------------------------------------------------------------ generic functions
    def generic_call(self, e: Tree, env: Env) -> Tree:
        f = e.children[0]
        if not (isinstance(f, Tree) and f.data == "ident"):
            return e
        name = str(f.children[-1])
        decl = self.generics.get(name)
        if decl is None or name in env and env[name].type is not None:
            return e
        tvars = [name_of(c) for c in decl.children[3].children if isinstance(c, Tree)]
        binding: dict[str, Tree] = {}
        if e.data == "tcall":
            given = next(c for c in e.children if isinstance(c, Tree) and c.data == "type_args").children
            if len(given) != len(tvars):
                raise self.err(e, f"{name} has {len(tvars)} type parameters, {len(given)} given")
            for tv, ta in zip(tvars, given, strict=True):
                if ta.data != "t_dontcare":
                    binding[tv] = ta
        params = [p for p in (decl.children[4].children if decl.children[4] is not None else [])
                  if p is not None]
        args = [a for a in (e.children[-1].children if e.children[-1] is not None else []) if a is not None]
        untyped: list[tuple[Tree, Tree, Tree]] = []
        for i, a in enumerate(args):
            p = self._param_for(a, i, params)
            if p is None or a.data == "dontcare_arg":
                continue
            value = a.children[1] if a.data == "named_arg" else a
            at = self._type(value, env)
            if at is None:
                untyped.append((p, value, a))
            self.unify(p.children[2], at, set(tvars), binding, a)
        for p, value, a in untyped:  # what typed arguments left open (a list expression also
            pt = p.children[2]          # fits a struct or tuple another argument decided)
            if not (pt.data == "type_name" and str(pt.children[-1]) in binding):
                self.unify(pt, self._untyped_type(value, env), set(tvars), binding, a)
        missing = [tv for tv in tvars if tv not in binding]
        if missing:
            raise self.err(e, f"cannot infer type argument {missing[0]} of {name}; give it "
                              f"explicitly ({name}<...>(...))")
        ints = self._int_params(e, name, decl, params, args, binding, env)
        targs = tuple(type_text(binding[tv]) for tv in tvars)
        key = targs + tuple(f"{pn}={_lit_text(v)}" for pn, v in ints.items())
        spec = self.specs.get((name, key))
        if spec is None:
            spec = f"{name}<{', '.join(targs)}>" + (f"#{len(self.specs)}" if ints else "")
            self.specs[(name, key)] = spec
            self.types.functions[spec] = self.pending_copy(decl, spec, binding)
            self._constant_params(self.types.functions[spec], ints)
        kept = [a for i, a in enumerate(args) if self._pname(a, i, params) not in ints]
        arglist = _mk("args", kept or [None], e.children[-1]) if ints else e.children[-1]
        return _mk("call", [_ident(spec, f), arglist], e)

    def _pname(self, a: Tree, i: int, params: list[Tree]) -> str | None:
        p = self._param_for(a, i, params)
        return name_of(p.children[3]) if p is not None else None

    def _int_params(self, e, name: str, decl: Tree, params: list[Tree], args: list[Tree],
                    binding: dict[str, Tree], env: Env) -> dict[str, Tree]:
        """A type variable bound to ``int`` (an untyped literal argument): p4c rejects it in the
        return type (a run-time value needs a width) and for out/inout parameters; an in or
        directionless parameter of type int is a compile-time constant, so the copy declares it
        as a local constant with the literal or top-level constant passed (one copy per value).
        Returns name -> value."""
        ints = {tv for tv, t in binding.items() if isinstance(t, Tree) and t.data == "t_int_inf"}
        if not ints:
            return {}
        if self._mentions(decl.children[1], ints):
            tv = next(iter(ints))
            raise self.err(e, f"{name}: 'int' type can only be unified with 'int', 'bit<>', or "
                              f"'signed<>' types, not with '<returned type>' (return type {tv} is "
                              f"bound to int by an untyped literal argument; give {tv} explicitly)")
        out: dict[str, Tree] = {}
        for i, a in enumerate(args):
            p = self._param_for(a, i, params)
            if p is None or not self._mentions(p.children[2], ints):
                continue
            value = a.children[1] if a.data == "named_arg" else a
            literal = isinstance(value, Tree) and value.data == "int_lit" or self._global_int(value, env)
            if p.children[1] is not None and str(p.children[1]) in ("out", "inout") or not literal:
                raise self.err(a, f"{name}: parameter {name_of(p.children[3])} would have type int, "
                                  "which only a compile-time constant may have; give the type "
                                  "argument explicitly")
            out[name_of(p.children[3])] = value
        return out

    def _global_int(self, value, env: Env) -> bool:
        """Is ``value`` the name of a top-level ``int`` constant (visible in the function too)?"""
        if not (isinstance(value, Tree) and value.data == "ident"):
            return False
        b = env.get(str(value.children[-1]))
        return b is not None and b is self.genv.get(str(value.children[-1])) \
            and isinstance(b.type, Tree) and b.type.data == "t_int_inf"

    @staticmethod
    def _mentions(t, tvs: set[str]) -> bool:
        return isinstance(t, Tree) and any(
            isinstance(c, Tree) and c.data == "type_name" and str(c.children[-1]) in tvs
            for c in t.iter_subtrees())

    @staticmethod
    def _constant_params(copy_: Tree, ints: dict[str, Tree]) -> None:
        """In the specialised copy, the int parameters become local constants."""
        if not ints:
            return
        plist = copy_.children[4]
        consts = []
        for p in [p for p in plist.children if p is not None]:
            if name_of(p.children[3]) in ints:
                plist.children.remove(p)
                consts.append(_mk("const_decl", [None, p.children[2], p.children[3],
                                                 copy.deepcopy(ints[name_of(p.children[3])])], p))
        body = copy_.children[5]
        body.children[0:0] = consts

    def _untyped_type(self, value, env: Env) -> Tree | None:
        """The type p4c gives an argument without a declared type: a list expression is a tuple
        of its items' types (P4 spec, list expressions), when each is known."""
        if isinstance(value, Tree) and value.data == "int_lit":
            return _mk("t_int_inf", [], value)  # an untyped literal: T is int (p4c binds it so)
        if isinstance(value, Tree) and value.data == "list_expr":
            items = [x for x in value.children[0].children if x is not None]
            types = [self._type(x, env) or self._untyped_type(x, env) for x in items]
            if items and all(t is not None for t in types):
                return _mk("tuple_type", [Tree("type_args", [copy.deepcopy(t) for t in types])], value)
        return None

    @staticmethod
    def _param_for(a: Tree, i: int, params: list[Tree]) -> Tree | None:
        if a.data == "named_arg":
            return next((p for p in params if name_of(p.children[3]) == str(a.children[0])), None)
        return params[i] if i < len(params) else None

    def unify(self, pt, at, tvars: set[str], binding: dict[str, Tree], where) -> None:
        """Bind the type variables in parameter type ``pt`` to the parts of argument type ``at``."""
        if at is None or not isinstance(pt, Tree):
            return
        if pt.data == "type_name" and str(pt.children[-1]) in tvars:
            tv = str(pt.children[-1])
            if tv in binding and type_text(binding[tv]) != type_text(at):
                raise self.err(where, f"type variable {tv} cannot be both {type_text(binding[tv])} "
                                      f"and {type_text(at)}")
            binding[tv] = at
            return
        at = self.types.resolve(at) if at.data == "type_name" and pt.data != "type_name" else at
        if pt.data == "specialized_type" and isinstance(at, Tree) and at.data == "type_name":
            at = self.origins.get(str(at.children[-1]), at)  # S_0 is S<bit<8>> (generictypes.py)
        if isinstance(at, Tree) and at.data == pt.data and pt.data in ("stack_type", "tuple_type",
                                                                       "specialized_type"):
            pk = pt.children[-1].children if pt.data != "stack_type" else pt.children[:1]
            ak = at.children[-1].children if at.data != "stack_type" else at.children[:1]
            for p, a in zip(pk, ak, strict=False):
                self.unify(p, a, tvars, binding, where)

    def pending_copy(self, decl: Tree, spec: str, binding: dict[str, Tree]) -> Tree:
        """The specialised copy of ``decl``: queued to be declared before the current one."""
        new = copy.deepcopy(decl)
        for node in list(new.iter_subtrees()):
            for i, c in enumerate(node.children):
                if isinstance(c, Tree) and c.data == "type_name" and str(c.children[-1]) in binding:
                    node.children[i] = copy.deepcopy(binding[str(c.children[-1])])
        new.children[2] = Tree("name", [Token("IDENTIFIER", spec)])
        new.children[3] = None
        self.pending.append(new)
        return new


def _lit_text(v: Tree) -> str:
    return str(v.children[0]) if isinstance(v, Tree) and v.children else ""


def specialize(tree: Tree, err: Err, origins: dict[str, Tree] | None = None) -> None:
    """Rewrite ``tree`` in place (see the module docstring); ``origins`` names the generic use
    each specialised struct or header stands for (``S_0`` -> ``S<bit<8>>``), for inference."""
    Specializer(tree, err, origins).run()

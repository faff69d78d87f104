"""Instances of parsers and controls, as p4c's front end handles them.

``Sub.apply(args)`` of a control or parser type (a direct application) becomes an instance
``Sub() Sub_inst;`` of the applying block.  Sub-parser instances are inlined into the parser
that applies them.

``Sub() sub;`` in a parser and ``sub.apply(packet, hdr.x);`` in one of its states become:
the statements before the call, then a transition into a renamed copy of Sub's states; Sub's
``accept`` continues with a new state holding the statements after the call and the original
transition; ``reject`` stays a reject.  Sub's parameters are replaced by the arguments and its
locals are renamed into the caller once per instance: as p4c's inliner declares them, they are
shared by the instance's apply sites (a second apply sees what the first left).  As p4c's
inliner does (``inlining.substitutes_arguments``), the arguments replace the parameters when
every apply site of the instance passes the same, non-overlapping arguments; otherwise each
directional parameter is a local of the instance, copied in before the sub-parser's start
(``in``/``inout``; an ``out`` one has its headers made invalid) and out when its ``accept``
continues.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from lark import Token, Tree

from ..api import P4CompileError
from .declared_types import Bind, TypeIndex, clearly_different, type_text
from .extern_params import extern_params, passed_instances
from .inlining import substitutes_arguments
from .literals import parse_int

Err = Callable[[object, str], P4CompileError]


def _name(node) -> str:
    return str(node.children[0]) if isinstance(node, Tree) else str(node)


def _name_tree(s: str) -> Tree:
    return Tree("name", [Token("IDENTIFIER", s)])


def _direction(param: Tree) -> str:
    return str(param.children[1].children[0]) if isinstance(param.children[1], Tree) else ""


def _is_state(x) -> bool:
    return isinstance(x, Tree) and x.data == "parser_state"


def _is_trans(x) -> bool:
    return isinstance(x, Tree) and x.data in ("trans_direct", "trans_select")


def _apply_of(stmt, instances: dict[str, str]) -> tuple[str, list] | None:
    """``(instance, arguments)`` when ``stmt`` is ``inst.apply(...)`` of a sub-parser instance."""
    if not (isinstance(stmt, Tree) and stmt.data == "call_stmt"):
        return None
    call = stmt.children[0]
    if not (isinstance(call, Tree) and call.data == "call"):
        return None
    f = call.children[0]
    if not (isinstance(f, Tree) and f.data == "member" and _name(f.children[1]) == "apply"
            and isinstance(f.children[0], Tree) and f.children[0].data == "ident"):
        return None
    inst = str(f.children[0].children[-1])
    if inst not in instances:
        return None
    args = call.children[1]
    return inst, [a for a in (args.children if args is not None else []) if a is not None]


def _substitute(node, values: dict[str, Tree]):
    """Replace identifiers (expression positions only) by copies of their values."""
    if not isinstance(node, Tree):
        return node
    if node.data == "ident" and str(node.children[-1]) in values:
        return copy.deepcopy(values[str(node.children[-1])])
    node.children = [_substitute(c, values) for c in node.children]
    return node


def _retarget(state: Tree, rename: dict[str, str]) -> None:
    for t in state.iter_subtrees():
        if t.data == "trans_direct":
            t.children[0] = _name_tree(rename.get(_name(t.children[0]), _name(t.children[0])))
        elif t.data == "select_case":
            t.children[1] = _name_tree(rename.get(_name(t.children[1]), _name(t.children[1])))


class SubParsers:
    """Inlines every sub-parser apply of one program (see the module docstring)."""

    def __init__(self, tree: Tree, err: Err):
        self.tree = tree
        self.err = err
        self.parsers = {_name(d.children[1]): d for d in tree.children
                        if isinstance(d, Tree) and d.data == "parser_decl"}
        self.types = {_name(d.children[-1] if d.data == "typedef_decl" else d.children[1]): d
                      for d in tree.children if isinstance(d, Tree) and d.data in
                      ("header_decl", "header_union_decl", "struct_decl", "typedef_decl")}
        self.n = 0
        self.declared: set[str] = set()  # instances whose locals are declared in their parser
        self.index = TypeIndex()
        for d in tree.children:
            if isinstance(d, Tree):
                self.index.add_decl(d)

    def run(self) -> None:
        for d in self.parsers.values():
            self._parser(d)

    def _parser(self, d: Tree) -> None:
        instances: dict[str, str] = {}
        for loc in d.children[5:]:
            if isinstance(loc, Tree) and loc.data == "instantiation":
                tname = self._type_name(loc.children[1])
                if tname in self.parsers:
                    instances[_name(loc.children[3])] = tname
        if not instances:
            return
        self.substituted = {i: substitutes_arguments(d, i, []) for i in instances}
        locals_ = [c for c in d.children[5:] if not _is_state(c) and not (
            isinstance(c, Tree) and c.data == "instantiation" and _name(c.children[3]) in instances)]
        work = [c for c in d.children[5:] if _is_state(c)]
        states: list[Tree] = []
        depth = 0
        while work:
            st = work.pop(0)
            body = st.children[3:-1]
            hit = next(((k, r) for k, s in enumerate(body) if (r := _apply_of(s, instances))), None)
            if hit is None:
                states.append(st)
                continue
            depth += 1
            if depth > 1000:
                raise self.err(st, "sub-parsers apply each other recursively")
            k, (inst, args) = hit
            self._check_args(d, st, instances[inst], args)
            new_states, new_locals, new_insts = self._inline(st, k, inst, instances[inst], args)
            locals_ += new_locals
            instances.update(new_insts)
            work = new_states + work
        d.children[5:] = locals_ + states

    def _check_args(self, d: Tree, st: Tree, sub_name: str, args: list) -> None:
        """An argument whose declared type differs from its parameter's (p4c type-checks the
        apply call; a substituted argument would otherwise never meet the parameter's type)."""
        env: dict[str, Bind] = {}
        params = d.children[3].children if d.children[3] is not None else []
        for p in params:
            if isinstance(p, Tree):
                env[_name(p.children[3])] = Bind(p.children[2])
        for loc in [*d.children[5:], *st.children[3:-1]]:
            if isinstance(loc, Tree) and loc.data in ("var_decl", "const_decl"):
                env[_name(loc.children[2])] = Bind(loc.children[1])
        sub = self.parsers[sub_name]
        sub_params = [p for p in (sub.children[3].children if sub.children[3] is not None else [])
                      if p is not None]
        for p, a in zip(sub_params, args, strict=False):
            at = self.index.type_of(a, env)
            if at is not None and clearly_different(self.index, p.children[2], at):
                raise self.err(a, f"type mismatch: cannot use {type_text(at)} where "
                                  f"{type_text(p.children[2])} is expected (cast needed)")

    @staticmethod
    def _type_name(t) -> str:
        if isinstance(t, Tree) and t.data == "specialized_type":
            t = t.children[0]
        return str(t.children[-1]) if isinstance(t, Tree) else str(t)

    def _resets(self, t, target, st: Tree, depth: int = 0) -> list[Tree]:
        """``target.setInvalid();`` for every header inside ``target`` of type node ``t``."""
        if depth > 64 or not isinstance(t, Tree):
            return []
        if t.data == "stack_type":
            n = t.children[1]
            if not (isinstance(n, Tree) and n.data == "int_lit"):
                return []
            out = []
            for i in range(parse_int(str(n.children[0]))[0]):
                elem = Tree("index", [copy.deepcopy(target), Tree("int_lit", [Token("INTEGER", str(i))])])
                out += self._resets(t.children[0], elem, st, depth + 1)
            return out
        d = self.types.get(str(t.children[-1])) if t.data == "type_name" else None
        if d is None:
            return []
        if d.data == "typedef_decl":
            return self._resets(d.children[2], target, st, depth + 1)
        if d.data == "header_decl":
            call = Tree("call", [Tree("member", [copy.deepcopy(target), _name_tree("setInvalid")]),
                                 Tree("args", [None])], st.meta)
            return [Tree("call_stmt", [call], st.meta)]
        out = []
        for f in d.children[2:]:
            if isinstance(f, Tree) and f.data == "field":
                member = Tree("member", [copy.deepcopy(target), _name_tree(_name(f.children[2]))])
                out += self._resets(f.children[1], member, st, depth + 1)
        return out

    def _inline(self, st: Tree, k: int, inst: str, sub_name: str, args: list):
        self.n += 1
        prefix = f"__{inst}{self.n}_"  # this apply site's states
        lprefix = f"__{inst}__"  # the instance's locals and temporaries, shared by its apply sites
        sub = copy.deepcopy(self.parsers[sub_name])
        params = [p for p in (sub.children[3].children if sub.children[3] is not None else [])
                  if p is not None]
        if len(params) != len(args):
            raise self.err(st, f"{inst}.apply expects {len(params)} arguments, got {len(args)}")
        if any(isinstance(a, Tree) and a.data in ("named_arg", "dontcare_arg") for a in args):
            raise self.err(st, "named or don't-care arguments of a sub-parser apply are not supported")
        values = {_name(p.children[3]): a for p, a in zip(params, args, strict=True)}
        sub_locals = [c for c in sub.children[5:] if not _is_state(c)]
        sub_states = [c for c in sub.children[5:] if _is_state(c)]
        new_insts: dict[str, str] = {}
        for loc in sub_locals:
            nm = loc.children[-1] if loc.data != "const_decl" and loc.data != "var_decl" else loc.children[2]
            old = _name(nm)
            values[old] = Tree("ident", [Token("IDENTIFIER", lprefix + old)])
            if loc.data == "const_decl" or loc.data == "var_decl":
                loc.children[2] = _name_tree(lprefix + old)
            else:
                loc.children[-1] = _name_tree(lprefix + old)
            if loc.data == "instantiation" and self._type_name(loc.children[1]) in self.parsers:
                new_insts[lprefix + old] = self._type_name(loc.children[1])
                self.substituted[lprefix + old] = substitutes_arguments(sub, old, [])
        if not self.substituted.get(inst, True):
            copy_in, copy_out = _temporaries(params, args, values, sub_locals, lprefix, st)
            # p4c resets an `out` temporary's headers at each apply (DoResetHeaders); its
            # scalars keep what the previous apply left
            copy_in = [r for p in params if _direction(p) == "out"
                       for r in self._resets(p.children[2], values[_name(p.children[3])], st)] + copy_in
        else:  # p4c's inliner resets an `out` argument it substitutes (DoResetHeaders)
            copy_out = []
            copy_in = [r for p, a in zip(params, args, strict=True) if _direction(p) == "out"
                       for r in self._resets(p.children[2], a, st)]
        # p4c moves the initialisers of a parser's locals into its start state (MoveInitializers):
        # they run at every apply
        for loc in sub_locals:
            if loc.data == "var_decl" and loc.children[3] is not None:
                target = Tree("ident", [Token("IDENTIFIER", _name(loc.children[2]))])
                copy_in.append(Tree("assign_stmt", [target, _substitute(loc.children[3], values)], st.meta))
                loc.children[3] = None
        if inst in self.declared:  # a later apply site of the instance: its locals exist
            sub_locals = []
        self.declared.add(inst)
        rename = {_name(s.children[2]): prefix + _name(s.children[2]) for s in sub_states}
        cont = prefix + "cont"
        rename["accept"] = cont
        for s in sub_states:
            _substitute(s, values)
            _retarget(s, rename)
            s.children[2] = _name_tree(rename[_name(s.children[2])])
        body, trans = st.children[3:-1], st.children[-1]
        head = Tree("parser_state", st.children[:3] + body[:k] + copy_in + [
            Tree("trans_direct", [_name_tree(prefix + "start")], st.meta)], st.meta)
        tail = Tree("parser_state", [None, Token("KW_STATE", "state"), _name_tree(cont)] + copy_out
                    + body[k + 1:] + [trans], st.meta)
        return [head] + sub_states + [tail], sub_locals, new_insts


def _temporaries(params, args, values, sub_locals, prefix, st):
    """p4c's temporaries for a sub-parser's directional parameters: a new local per parameter
    (an ``out`` one starts fresh: headers invalid), ``in``/``inout`` copied in before the call,
    ``out``/``inout`` copied back, in parameter order, when the sub-parser accepts."""
    copy_in, copy_out = [], []
    for p, a in zip(params, args, strict=True):
        direction = _direction(p)
        if not direction:
            continue
        tmp = prefix + "arg_" + _name(p.children[3])
        sub_locals.append(Tree("var_decl", [None, copy.deepcopy(p.children[2]), _name_tree(tmp), None],
                               p.meta))
        ref = Tree("ident", [Token("IDENTIFIER", tmp)])
        values[_name(p.children[3])] = ref
        if direction in ("in", "inout"):
            copy_in.append(Tree("assign_stmt", [copy.deepcopy(ref), copy.deepcopy(a)], st.meta))
        if direction in ("out", "inout"):
            copy_out.append(Tree("assign_stmt", [copy.deepcopy(a), copy.deepcopy(ref)], st.meta))
    return copy_in, copy_out


def instantiate_direct_applies(tree: Tree) -> None:
    """``Sub.apply(args)`` of a control or parser type becomes an instance ``Sub() Sub_inst;``
    of the block that applies it, then ``Sub_inst.apply(args)`` (p4c's InstantiateDirectCalls)."""
    blocks = {_name(d.children[1]) for d in tree.children
              if isinstance(d, Tree) and d.data in ("control_decl", "parser_decl")}
    for d in tree.children:
        if not (isinstance(d, Tree) and d.data in ("control_decl", "parser_decl")):
            continue
        where = {"instantiation": 3, "var_decl": 2, "const_decl": 2, "action_decl": 1, "table_decl": 1}
        taken = {_name(c.children[where[c.data]]) for c in d.children[5:]
                 if isinstance(c, Tree) and c.data in where}
        insts = []
        for call in d.iter_subtrees_topdown():
            f = call.children[0] if call.data == "call" else None
            if not (isinstance(f, Tree) and f.data == "type_member" and _name(f.children[1]) == "apply"):
                continue
            tname = str(f.children[0].children[-1])
            if tname not in blocks:
                continue
            name = f"{tname}_inst"
            k = 0
            while name in taken:
                k += 1
                name = f"{tname}_inst_{k}"
            taken.add(name)
            tname_node = copy.deepcopy(f.children[0])
            insts.append(Tree("instantiation", [None, tname_node, None, _name_tree(name)], call.meta))
            inst = Tree("ident", [Token("IDENTIFIER", name)], f.meta)
            call.children[0] = Tree("member", [inst, f.children[1]], f.meta)
        d.children[5:5] = insts


_HOISTABLE = {"register", "counter", "meter"}  # stateful externs a sub-block may be given


def _p4_name(loc: Tree, block: str, local: str) -> str:
    """The control-plane name p4c gives instance ``local`` of ``block`` (``@name`` honoured)."""
    for a in (loc.children[0].children if loc.children[0] is not None else []):
        body = a.children[1] if len(a.children) > 1 else None
        if str(a.children[0]) == "@name" and body is not None and body.children \
                and isinstance(body.children[0], Tree) and body.children[0].data == "string_lit":
            given = str(body.children[0].children[0])[1:-1]
            return given if given.startswith(".") else f".{block}.{given}"
    return f".{block}.{local}"


def hoist_extern_arguments(tree: Tree) -> None:
    """``C(cnt) c;`` with ``cnt`` a register/counter/meter of the enclosing control: the
    instance moves to the top level (one object for the control and the copy of ``C``),
    keeping the control-plane name p4c gives it (``@name(".Ingress.cnt")``).  The same for
    one passed to a function's extern-typed parameter (``externparams.py`` binds the call)."""
    fparams = extern_params(tree)
    out: list = []
    for d in tree.children:
        if not (isinstance(d, Tree) and d.data == "control_decl"):
            out.append(d)
            continue
        block = _name(d.children[1])
        locs = {_name(loc.children[3]): loc for loc in d.children[5:]
                if isinstance(loc, Tree) and loc.data == "instantiation"
                and SubParsers._type_name(loc.children[1]) in _HOISTABLE}
        passed = {str(a.children[-1]) for loc in d.children[5:]
                  if isinstance(loc, Tree) and loc.data == "instantiation" and loc.children[2] is not None
                  for a in loc.children[2].children
                  if isinstance(a, Tree) and a.data == "ident" and str(a.children[-1]) in locs}
        passed |= passed_instances(d, fparams) & set(locs) if fparams else set()
        rename = {}
        for local in sorted(passed):
            loc = locs[local]
            glob = f"__{block}_{local}"
            ann = Tree("annotation", [Token("ANNOT", "@name"), Tree("annot_body", [
                Tree("string_lit", [Token("STRING_LIT", f'"{_p4_name(loc, block, local)}"')])])])
            kept = [a for a in (loc.children[0].children if loc.children[0] is not None else [])
                    if str(a.children[0]) != "@name"]
            loc.children[0] = Tree("annotations", kept + [ann])
            loc.children[3] = _name_tree(glob)
            d.children.remove(loc)
            out.append(loc)
            rename[local] = Tree("ident", [Token("IDENTIFIER", glob)])
        if rename:
            d.children[5:] = [_substitute(c, rename) for c in d.children[5:]]
        out.append(d)
    tree.children = out


def specialize_constructors(tree: Tree) -> None:
    """``Sub(3) s;`` of ``control Sub(...)(bit<8> k)``: a copy of Sub with ``k`` replaced by the
    argument and no constructor parameters, instantiated as ``Sub_k1() s;`` (p4c evaluates
    constructor arguments at compile time the same way).  P4Info names follow the instance."""
    decls = {_name(d.children[1]): d for d in tree.children if isinstance(d, Tree)
             and d.data in ("control_decl", "parser_decl") and d.children[4] is not None}
    if not decls:
        return
    blocks = {_name(d.children[1]) for d in tree.children
              if isinstance(d, Tree) and d.data in ("control_decl", "parser_decl")}
    copies: dict[str, list[Tree]] = {}
    for d in list(tree.children):
        if not (isinstance(d, Tree) and d.data in ("control_decl", "parser_decl")):
            continue
        for loc in d.children[5:]:
            if not (isinstance(loc, Tree) and loc.data == "instantiation"):
                continue
            tname = SubParsers._type_name(loc.children[1])
            if tname not in decls:
                continue
            given = loc.children[2].children if loc.children[2] is not None else []
            args = [a for a in given if a is not None]
            spec = copy.deepcopy(decls[tname])
            params = [p for p in spec.children[4].children[0].children if p is not None] \
                if spec.children[4].children and spec.children[4].children[0] is not None else []
            if len(params) != len(args):
                continue  # the generator reports the arity
            values = {_name(p.children[3]): a for p, a in zip(params, args, strict=True)}
            local = _block_instance_args(d, values, blocks)
            new = f"{tname}_k{sum(len(v) for v in copies.values()) + 1}"
            blocks.add(new)
            spec.children[1] = _name_tree(new)
            spec.children[4] = None
            spec.children[5:] = local + [_substitute(c, values) for c in spec.children[5:]]
            copies.setdefault(tname, []).append(spec)
            type_node = loc.children[1]
            loc.children[1] = Tree("type_name", [Token("TYPE_IDENTIFIER", new)], type_node.meta)
            loc.children[2] = None
    # a block with constructor parameters that no block instantiates stays only to be checked
    # (p4c type-checks an unused declaration too), unless the package instance (main) names it
    top = {str(t) for d in tree.children if isinstance(d, Tree) and d.data == "instantiation"
           for t in d.scan_values(lambda v: isinstance(v, Token) and v.type == "TYPE_IDENTIFIER")}
    anywhere = {str(t) for d in tree.find_data("instantiation")
                for t in d.scan_values(lambda v: isinstance(v, Token) and v.type == "TYPE_IDENTIFIER")}
    out = []
    for d in tree.children:
        block = isinstance(d, Tree) and d.data in ("control_decl", "parser_decl")
        name = _name(d.children[1]) if block else ""
        if name in decls:
            if name in copies:
                out += copies[name]
            elif name in top:
                out.append(d)
            elif name not in anywhere:
                out.append(_ctor_params_as_params(d))
            # else: instantiated with the wrong number of arguments; the generator says so
        else:
            out.append(d)
    tree.children = out


def _block_instance_args(d: Tree, values: dict[str, Tree], blocks: set[str]) -> list[Tree]:
    """Constructor arguments naming a control or parser instance of the enclosing block ``d``
    (``C2(c1) c2;``): the copy gets its own instance of that block under the parameter's name
    (taken out of ``values``).  p4c shares the one instance, which differs only in the state of
    externs declared inside it (README, known differences)."""
    insts = {_name(loc.children[3]): loc for loc in d.children[5:]
             if isinstance(loc, Tree) and loc.data == "instantiation"
             and SubParsers._type_name(loc.children[1]) in blocks}
    out = []
    for param, arg in list(values.items()):
        if isinstance(arg, Tree) and arg.data == "ident" and str(arg.children[-1]) in insts:
            inst = copy.deepcopy(insts[str(arg.children[-1])])
            inst.children[3] = _name_tree(param)
            out.append(inst)
            del values[param]
    return out


def _ctor_params_as_params(d: Tree) -> Tree:
    """An uninstantiated block with constructor parameters, for the checks only: its constructor
    parameters become directionless apply parameters (read-only values of their types)."""
    ctor = d.children[4].children[0] if d.children[4].children else None
    extra = [p for p in ctor.children if p is not None] if ctor is not None else []
    if extra:
        params = d.children[3]
        own = [p for p in params.children if p is not None]
        d.children[3] = Tree("params", own + extra, params.meta)
    d.children[4] = None
    return d


def inline_subparsers(tree: Tree, err: Err) -> None:
    """Rewrite ``tree`` in place; errors are ``err(node, message)``."""
    SubParsers(tree, err).run()

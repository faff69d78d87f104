"""p4c's checks on the blocks a package is instantiated with, on the syntax tree (before the
front-end rewrites drop what nothing uses): a parser or control passed for a package parameter
must have the shape of the parameter's parser/control type (p4c's type unification of the
package constructor call).  V1Switch's own blocks are checked against v1model with the roles
(``program.py``), with more precise messages; this covers every other package."""

from __future__ import annotations

from lark import Tree

_BLOCK_DECLS = {"parser_decl": "parser", "control_decl": "control"}
_TYPE_DECLS = {"parser_type_decl": "parser", "control_type_decl": "control"}
_V1MODEL_PACKAGE = "V1Switch"


def _name(node) -> str:
    return str(node.children[0]) if isinstance(node, Tree) else str(node)


def _params(node) -> list[Tree]:
    return [p for p in node.children if p is not None] if isinstance(node, Tree) else []


def _direction(p: Tree) -> str:
    return str(p.children[1].children[0]) if isinstance(p.children[1], Tree) else ""


def _type_params(d: Tree, i: int = 2) -> list[str]:
    tp = d.children[i]
    return [_name(c) for c in tp.children if isinstance(c, Tree)] if isinstance(tp, Tree) else []


def _type_args(t) -> list:
    """The type arguments of ``T<...>`` (none for a plain name)."""
    if not (isinstance(t, Tree) and t.data == "specialized_type"):
        return []
    targs = next((c for c in t.children if isinstance(c, Tree) and c.data == "type_args"), None)
    return [c for c in targs.children if c is not None] if targs is not None else []


def _subst(t, binding: dict):
    """``t`` with the type names bound in ``binding`` replaced (a new tree)."""
    if not isinstance(t, Tree):
        return t
    if t.data == "type_name" and _name(t) in binding:
        return binding[_name(t)]
    return Tree(t.data, [_subst(c, binding) for c in t.children], t.meta)


def _canon(t, typedefs: dict[str, Tree], depth: int = 0) -> str:
    """A text equal for equal types (typedefs expanded; ``type`` declarations stay distinct)."""
    if not isinstance(t, Tree):
        return str(t)
    if t.data == "type_name" and _name(t) in typedefs and depth < 32:
        return _canon(typedefs[_name(t)], typedefs, depth + 1)
    return t.data + "(" + ",".join(_canon(c, typedefs, depth) for c in t.children if c is not None) + ")"


def _names(t) -> set[str]:
    return {_name(s) for s in t.iter_subtrees() if s.data == "type_name"} if isinstance(t, Tree) else set()


_VALUE_DECLS = ("struct_decl", "header_decl", "header_union_decl", "enum_decl", "ser_enum_decl",
                "package_decl", "extern_decl")


def _value_type(pt, base, values: dict[str, str], pkg: Tree) -> str:
    """How a package parameter's type that no parser/control type names reads (a tuple, a
    struct, another package...), or "" when it may hold a block (a type parameter)."""
    if not isinstance(pt, Tree):
        return ""
    if pt.data not in ("type_name", "specialized_type"):
        return pt.data.removeprefix("t_").replace("_type", "")
    name = _name(base)
    if name in values:
        return f"{values[name].removesuffix('_decl').replace('_', ' ')} {name}"
    return ""


def _binding(inst: Tree, pkg: Tree, pt, btype: Tree) -> dict | None:
    """The types bound to ``btype``'s type parameters by parameter type ``pt`` of package
    ``pkg`` instantiated as ``inst``; the key "" holds the names still free (the package's
    type parameters without explicit arguments).  None when the arities do not line up."""
    ptps = _type_params(pkg)
    pargs = _type_args(inst.children[1])
    if pargs and len(pargs) != len(ptps):
        return None
    outer = dict(zip(ptps, pargs, strict=False))  # no arguments: inferred
    inner = [_subst(a, outer) for a in _type_args(pt)]
    btps = _type_params(btype)
    if len(inner) != len(btps):
        return None
    binding: dict = dict(zip(btps, inner, strict=True))
    binding[""] = set(ptps) - set(outer)
    return binding


def _block_of(arg, blocks: dict[str, Tree], instances: dict[str, Tree]) -> Tree | None:
    """The parser/control declaration an argument constructs (``g()``) or names (an instance)."""
    if isinstance(arg, Tree) and arg.data == "ctor_call":
        t = arg.children[0]
        return blocks.get(_name(t)) if isinstance(t, Tree) and t.data == "type_name" else None
    if isinstance(arg, Tree) and arg.data == "ident" and _name(arg) in instances:
        t = instances[_name(arg)].children[1]
        return blocks.get(_name(t)) if isinstance(t, Tree) and t.data == "type_name" else None
    return None


def _mismatch(block: Tree, btype: Tree, binding: dict | None, typedefs: dict[str, Tree]) -> str | None:
    """Why ``block`` does not fit parser/control type ``btype`` whose type parameters are
    bound by ``binding`` (None: unknown, types not compared); None when it fits."""
    kind, want = _BLOCK_DECLS[block.data], _TYPE_DECLS[btype.data]
    if kind != want:
        return f"a {kind} is not a {want}"
    have, need = _params(block.children[3]), _params(btype.children[3])
    if len(have) != len(need):
        return f"it has {len(have)} parameters, {_name(btype.children[1])} declares {len(need)}"
    for p, q in zip(have, need, strict=True):
        if _direction(p) != _direction(q):
            return (f"parameter {_name(p.children[3])} is '{_direction(p) or 'directionless'}', "
                    f"{_name(btype.children[1])} declares it '{_direction(q) or 'directionless'}' "
                    "(direction mismatch)")
        if binding is None or block.children[2] is not None:
            continue
        want_t = _subst(q.children[2], binding)
        if _names(want_t) & set(_type_params(btype)) or _names(want_t) & binding.get("", set()):
            continue  # still a type variable: inferred by p4c, not compared here
        if _canon(p.children[2], typedefs) != _canon(want_t, typedefs):
            return f"parameter {_name(p.children[3])} has another type than in {_name(btype.children[1])}"
    return None


class _Tables:
    """The top-level declarations the checks look up, by name."""

    def __init__(self, tree: Tree):
        tops = [d for d in tree.children if isinstance(d, Tree)]
        self.blocks = {_name(d.children[1]): d for d in tops if d.data in _BLOCK_DECLS}
        self.btypes = {_name(d.children[1]): d for d in tops if d.data in _TYPE_DECLS}
        self.packages = {_name(d.children[1]): d for d in tops if d.data == "package_decl"}
        self.instances = {_name(d.children[3]): d for d in tops if d.data == "instantiation"}
        self.values = {_name(d.children[1]): d.data for d in tops if d.data in _VALUE_DECLS}
        self.typedefs = {_name(d.children[3]): d.children[2] for d in tops
                         if d.data == "typedef_decl" and str(d.children[1]) == "typedef"}
        self.values.update({_name(d.children[3]): d.data for d in tops if d.data == "typedef_decl"
                            and isinstance(d.children[2], Tree)
                            and d.children[2].data not in ("type_name", "specialized_type")})

    def package_of(self, inst: Tree) -> Tree | None:
        t = inst.children[1]
        t = t.children[0] if isinstance(t, Tree) and t.data == "specialized_type" else t
        return self.packages.get(_name(t)) if isinstance(t, Tree) and t.data == "type_name" else None

    def btype_of(self, pt) -> Tree | None:
        base = pt.children[0] if isinstance(pt, Tree) and pt.data == "specialized_type" else pt
        return self.btypes.get(_name(base)) if isinstance(base, Tree) and base.data == "type_name" \
            else None

    def inferred(self, inst: Tree, pkg: Tree) -> dict[str, Tree]:
        """The type arguments of a package instance: explicit ones, else those its parser/
        control arguments give (a block parameter typed by a type parameter of the package)."""
        tps, explicit = _type_params(pkg), _type_args(inst.children[1])
        if explicit:
            return dict(zip(tps, explicit, strict=False))
        out: dict[str, Tree] = {}
        args = [a for a in inst.children[2].children if a is not None] if inst.children[2] else []
        for param, arg in zip(_params(pkg.children[3]), args, strict=False):
            btype, block = self.btype_of(param.children[2]), _block_of(arg, self.blocks, self.instances)
            if btype is None or block is None or block.children[2] is not None:
                continue
            bound = dict(zip(_type_params(btype), _type_args(param.children[2]), strict=False))
            for p, q in zip(_params(block.children[3]), _params(btype.children[3]), strict=False):
                tv = bound.get(_name(q.children[2])) if isinstance(q.children[2], Tree) \
                    and q.children[2].data == "type_name" else None
                if isinstance(tv, Tree) and tv.data == "type_name" and _name(tv) in tps:
                    out.setdefault(_name(tv), p.children[2])
        return out


def _package_argument(ctx, tabs: _Tables, inst: Tree, pkg: Tree, param: Tree, arg) -> None:
    """A package instance passed for a parameter of its own package type whose type arguments,
    once the outer package's explicit ones are substituted, differ from the instance's."""
    inner = tabs.instances.get(_name(arg)) if isinstance(arg, Tree) and arg.data == "ident" else None
    ipkg = tabs.package_of(inner) if inner is not None else None
    pt = param.children[2]
    if ipkg is None or not (isinstance(pt, Tree) and pt.data == "specialized_type") \
            or _name(pt.children[0]) != _name(ipkg.children[1]):
        return
    outer = dict(zip(_type_params(pkg), _type_args(inst.children[1]), strict=False))
    free = set(_type_params(pkg)) - set(outer)
    have = tabs.inferred(inner, ipkg)
    for tp, want in zip(_type_params(ipkg), _type_args(pt), strict=False):
        want = _subst(want, outer)
        if tp in have and not _names(want) & free \
                and _canon(want, tabs.typedefs) != _canon(have[tp], tabs.typedefs):
            raise ctx.err(arg, f"{_name(arg)}: cannot pass package {_name(ipkg.children[1])} "
                               f"instance {_name(arg)} as {_name(param.children[3])}: its type "
                               f"argument {tp} differs from the one "
                               f"{_name(pkg.children[1])} expects")


def package_block_arguments(ctx, tree: Tree) -> None:
    """Each parser/control argument of a package instantiation fits its parameter's type
    (p4c: "Cannot unify parser g to parser Filter"), and so does each package instance."""
    tabs = _Tables(tree)
    for inst in tabs.instances.values():
        pkg = tabs.package_of(inst)
        if pkg is None or _name(pkg.children[1]) == _V1MODEL_PACKAGE or inst.children[2] is None:
            continue
        args = [a for a in inst.children[2].children if a is not None]
        for param, arg in zip(_params(pkg.children[3]), args, strict=False):
            if isinstance(arg, Tree) and arg.data == "named_arg":
                break  # named arguments: matched by name, left to the type checker
            _package_argument(ctx, tabs, inst, pkg, param, arg)
            _block_argument(ctx, tabs, inst, pkg, param, arg)


def _block_argument(ctx, tabs: _Tables, inst: Tree, pkg: Tree, param: Tree, arg) -> None:
    pt = param.children[2]
    base = pt.children[0] if isinstance(pt, Tree) and pt.data == "specialized_type" else pt
    btype, block = tabs.btype_of(pt), _block_of(arg, tabs.blocks, tabs.instances)
    if block is None:
        return
    bname, bkind = _name(block.children[1]), _BLOCK_DECLS[block.data]
    if btype is None:
        what = _value_type(pt, base, tabs.values, pkg)
        if what:
            raise ctx.err(arg, f"{bname}: cannot pass {bkind} {bname} as "
                               f"{_name(param.children[3])} of type {what}")
        return
    why = _mismatch(block, btype, _binding(inst, pkg, pt, btype), tabs.typedefs)
    if why:
        raise ctx.err(arg, f"{bname}: cannot pass {bkind} {bname} as {_name(param.children[3])} "
                           f"of type {_TYPE_DECLS[btype.data]} {_name(btype.children[1])}: {why}")

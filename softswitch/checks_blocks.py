"""p4c's checks on the blocks a package is instantiated with, on the syntax tree (before the
front-end rewrites drop what nothing uses): a parser or control passed for a package parameter
must have the shape of the parameter's parser/control type (p4c's type unification of the
package constructor call).  V1Switch's own blocks are checked against v1model with the roles
(``program.py``), with more precise messages; this covers every other package."""

from __future__ import annotations

from lark import Token, Tree

_BLOCK_DECLS = {"parser_decl": "parser", "control_decl": "control"}
_TYPE_DECLS = {"parser_type_decl": "parser", "control_type_decl": "control"}
_V1MODEL_PACKAGE = "V1Switch"


def _name(node) -> str:
    return str(node.children[0]) if isinstance(node, Tree) else str(node)


def _params(node) -> list[Tree]:
    return [p for p in node.children if p is not None] if isinstance(node, Tree) else []


def _direction(p: Tree) -> str:
    return str(p.children[1].children[0]) if isinstance(p.children[1], Tree) else ""


def _builtin_text(t) -> str | None:
    """``bit<8>``-like text of a type that names no declaration (so typedefs cannot make two
    different texts one type), else None."""
    if not isinstance(t, Tree) or t.data in ("type_name", "specialized_type"):
        return None
    if any(s.data in ("type_name", "specialized_type") for s in t.iter_subtrees()):
        return None
    return t.data + "<" + ",".join(str(v) for v in t.scan_values(lambda v: isinstance(v, Token))) + ">"


def _block_of(arg, blocks: dict[str, Tree], instances: dict[str, Tree]) -> Tree | None:
    """The parser/control declaration an argument constructs (``g()``) or names (an instance)."""
    if isinstance(arg, Tree) and arg.data == "ctor_call":
        t = arg.children[0]
        return blocks.get(_name(t)) if isinstance(t, Tree) and t.data == "type_name" else None
    if isinstance(arg, Tree) and arg.data == "ident" and _name(arg) in instances:
        t = instances[_name(arg)].children[1]
        return blocks.get(_name(t)) if isinstance(t, Tree) and t.data == "type_name" else None
    return None


def _mismatch(block: Tree, btype: Tree, generic: bool) -> str | None:
    """Why ``block`` does not fit parser/control type ``btype`` (None when it does)."""
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
        if generic:
            continue
        a, b = _builtin_text(p.children[2]), _builtin_text(q.children[2])
        if a is not None and b is not None and a != b:
            return f"parameter {_name(p.children[3])} has another type than in {_name(btype.children[1])}"
    return None


def package_block_arguments(ctx, tree: Tree) -> None:
    """Each parser/control argument of a package instantiation fits its parameter's type
    (p4c: "Cannot unify parser g to parser Filter")."""
    tops = [d for d in tree.children if isinstance(d, Tree)]
    blocks = {_name(d.children[1]): d for d in tops if d.data in _BLOCK_DECLS}
    btypes = {_name(d.children[1]): d for d in tops if d.data in _TYPE_DECLS}
    packages = {_name(d.children[1]): d for d in tops if d.data == "package_decl"}
    instances = {_name(d.children[3]): d for d in tops if d.data == "instantiation"}
    for inst in instances.values():
        t = inst.children[1]
        t = t.children[0] if isinstance(t, Tree) and t.data == "specialized_type" else t
        pkg = packages.get(_name(t)) if isinstance(t, Tree) and t.data == "type_name" else None
        if pkg is None or _name(pkg.children[1]) == _V1MODEL_PACKAGE or inst.children[2] is None:
            continue
        args = [a for a in inst.children[2].children if a is not None]
        for param, arg in zip(_params(pkg.children[3]), args, strict=False):
            if isinstance(arg, Tree) and arg.data == "named_arg":
                break  # named arguments: matched by name, left to the type checker
            pt = param.children[2]
            base = pt.children[0] if isinstance(pt, Tree) and pt.data == "specialized_type" else pt
            btype = btypes.get(_name(base)) if isinstance(base, Tree) and base.data == "type_name" \
                else None
            block = _block_of(arg, blocks, instances)
            if btype is None or block is None:
                continue
            generic = pkg.children[2] is not None or btype.children[2] is not None \
                or base is not pt
            why = _mismatch(block, btype, generic)
            if why:
                raise ctx.err(arg, f"{_name(block.children[1])}: cannot pass "
                                   f"{_BLOCK_DECLS[block.data]} {_name(block.children[1])} as "
                                   f"{_name(param.children[3])} of type "
                                   f"{_TYPE_DECLS[btype.data]} {_name(btype.children[1])}: {why}")

"""How p4c's inliner binds the arguments of an applied control or sub-parser.

When every apply site of the instance passes the same arguments and no two arguments overlap in
storage, p4c replaces the callee's parameters by the arguments themselves: the callee's writes
land at once (an ``exit`` inside it leaves them done) and an ``out`` argument keeps its scalar
values.  Otherwise each parameter becomes a temporary copied in before the inlined body and out
after it (an ``exit`` skips that copy-out; an ``out`` one starts fresh).  Both generators and
the sub-parser inlining ask ``substitutes_arguments``.
"""

from __future__ import annotations

from lark import Tree

Path = tuple[str, ...]
ANY = "*"  # a run-time index: any element of the stack


def locations(e) -> set[Path]:
    """Storage an argument expression names or reads, as p4c's location sets: ``meta.a`` is
    ("meta", "a"); operators join their operands; literals and method calls name none."""
    if not isinstance(e, Tree):
        return set()
    if e.data == "ident":
        return {(str(e.children[-1]),)}
    if e.data in ("call", "tcall"):
        return set()
    if e.data == "member":
        name = str(e.children[1].children[0])
        base = locations(e.children[0])
        return base if name in ("next", "last") else {p + (name,) for p in base}
    if e.data == "index":
        base = locations(e.children[0])
        idx = e.children[1]
        key = str(idx.children[0]) if isinstance(idx, Tree) and idx.data == "int_lit" else ANY
        return {p + (key,) for p in base} | locations(idx)
    if e.data == "slice":
        return locations(e.children[0])
    out: set[Path] = set()
    for c in e.children:
        out |= locations(c)
    return out


def _overlap(p: Path, q: Path) -> bool:
    return all(a == b or ANY in (a, b) for a, b in zip(p, q, strict=False))


def aliasing(args: list) -> bool:
    """Do two arguments of one call overlap in storage (one is part of the other)?"""
    sets = [locations(a) for a in args]
    return any(_overlap(p, q) for i, s in enumerate(sets) for t in sets[i + 1:] for p in s for q in t)


def apply_sites(control: Tree, instance: str) -> list[list]:
    """The argument lists of every ``instance.apply(...)`` inside a control's syntax tree."""
    sites = []
    for n in control.iter_subtrees_topdown():
        if n.data != "call":
            continue
        callee, args = n.children
        if isinstance(callee, Tree) and callee.data == "member" \
                and str(callee.children[1].children[0]) == "apply":
            base = callee.children[0]
            if isinstance(base, Tree) and base.data == "ident" and str(base.children[-1]) == instance:
                sites.append([a for a in (args.children if args is not None else []) if a is not None])
    return sites


def substitutes_arguments(control: Tree, instance: str, args: list) -> bool:
    """True when p4c substitutes these arguments for the callee's parameters."""
    sites = apply_sites(control, instance) or [args]
    return all(s == sites[0] for s in sites) and not aliasing(sites[0])

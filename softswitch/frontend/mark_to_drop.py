"""v1model's deprecated ``mark_to_drop()`` (no argument): p4c accepts it (with a
``[--Wwarn=deprecated]`` warning) and drops through the ``standard_metadata_t`` in scope.

The rewrite gives each such call the nearest parameter of type ``standard_metadata_t``: the
enclosing action's or function's, else the enclosing control's (p4c's mid-end output passes
that one).  A call with none in scope (a top-level action's) is left as it is: BMv2's ``drop``
primitive acts on the standard metadata of the pass that runs it, and so do both backends
(``PacketCtx.std`` / ``PX.std``)."""

from __future__ import annotations

from lark import Token, Tree

STD_META = "standard_metadata_t"
NAME = "mark_to_drop"


def _params(node: Tree | None) -> list[Tree]:
    return [p for p in (node.children if node is not None else []) if isinstance(p, Tree)]


def _std_param(params: Tree | None) -> str | None:
    """The name of the first parameter of type ``standard_metadata_t``, if any."""
    for p in _params(params):
        t = p.children[2]
        if isinstance(t, Tree) and any(isinstance(v, Token) and str(v) == STD_META for v in t.children):
            return str(p.children[3].children[0])
    return None


def _rewrite(body: Tree, std: str | None) -> None:
    if std is None:
        return
    for call in body.find_data("call"):
        f = call.children[0]
        args = call.children[-1]
        empty = args is None or not [a for a in args.children if a is not None]
        if isinstance(f, Tree) and f.data == "ident" and str(f.children[-1]) == NAME and empty:
            arg = Tree("ident", [Token("IDENTIFIER", std)], f.meta)
            call.children[-1] = Tree("args", [arg], f.meta)


def deprecated_mark_to_drop(tree: Tree) -> None:
    """Rewrite ``tree`` in place (see the module docstring)."""
    for d in tree.children:
        if not isinstance(d, Tree):
            continue
        if d.data == "action_decl":
            _rewrite(d.children[3], _std_param(d.children[2]))
        elif d.data == "function_decl":
            _rewrite(d.children[-1], _std_param(d.children[4]))
        elif d.data == "control_decl":
            outer = _std_param(d.children[3])
            for loc in d.children[5:]:
                if isinstance(loc, Tree) and loc.data == "action_decl":
                    _rewrite(loc.children[3], _std_param(loc.children[2]) or outer)
            _rewrite(d.children[-1], outer)

"""p4c's ``[--Wwarn=deprecated]`` (its CheckDeprecated pass): a call of a function, extern
function or action declared ``@deprecated("message")`` is reported at the callee's name as
``NAME: Using deprecated feature NAME. message``.  An overloaded name (v1model's
``mark_to_drop()`` and ``mark_to_drop(standard_metadata)``) is reported only when the call's
argument count selects a deprecated declaration."""

from __future__ import annotations

from dataclasses import dataclass

from lark import Tree

from ..check.decls import ann_dict
from ..frontend.treenav import name_of, params_of

_DECLS = {"extern_func_decl": (2, 4), "function_decl": (2, 4), "action_decl": (1, 2)}


@dataclass(frozen=True)
class _Overload:
    required: int
    total: int
    message: str | None  # None: not deprecated


def _overloads(tree: Tree, decls) -> dict[str, list[_Overload]]:
    out: dict[str, list[_Overload]] = {}
    for d in tree.children:
        if not (isinstance(d, Tree) and d.data in _DECLS):
            continue
        name_at, params_at = _DECLS[d.data]
        params = params_of(d.children[params_at])
        msgs = ann_dict(d.children[0], decls).get("deprecated")
        out.setdefault(name_of(d.children[name_at]), []).append(_Overload(
            sum(1 for p in params if p.children[4] is None), len(params),
            (msgs[0] if msgs else "") if msgs is not None else None))
    return out


def check(tree: Tree, decls) -> None:
    """Record a ``deprecated`` warning (``decls.warn``) for each call of a deprecated declaration."""
    overloads = {n: o for n, o in _overloads(tree, decls).items()
                 if any(x.message is not None for x in o)}
    if not overloads:
        return
    for call in tree.iter_subtrees():
        if call.data not in ("call", "tcall"):
            continue
        callee = call.children[0]
        if not (isinstance(callee, Tree) and callee.data == "ident"):
            continue
        name = str(callee.children[-1])
        if name not in overloads:
            continue
        args = call.children[-1]
        n = len([a for a in (args.children if isinstance(args, Tree) else []) if a is not None])
        fits = [o for o in overloads[name] if o.required <= n <= o.total]
        if fits and all(o.message is not None for o in fits):
            decls.warn(callee, "deprecated", f"{name}: Using deprecated feature {name}. {fits[0].message}")


__all__ = ["check"]

"""Compile-time checks of a table's ``implementation`` (v1model ``action_profile``/``action_selector``).

The property names an instance declared in a control or at top level (``implementation = as;``,
which several tables may share) or constructs one in place (``implementation =
action_selector(HashAlgorithm.crc16, 32w1024, 32w14);``).  As p4c's control-plane generator names
them: an instance by its fully qualified name (``IngressI.as``; an ``@name`` on the property is
ignored), one constructed in place by the property's ``@name`` as written (``@name("ap_ws")``
gives ``ap_ws``); without one p4c refuses it ("anonymous table property").  ``selector`` keys need a
selector (a selector with none hashes no bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lark import Tree

PROFILE_EXTERNS = ("action_profile", "action_selector")


@dataclass
class ProfileInfo:
    """A profile as the program declares it (P4Info ``action_profiles``)."""

    name: str
    size: int
    with_selector: bool
    algo: str | None
    annotations: dict[str, list]
    tables: list[str] = field(default_factory=list)

    @property
    def max_group_size(self) -> int:
        """``@max_group_size(N)`` of a selector (0: no limit), as p4c puts it in P4Info."""
        v = self.annotations.get("max_group_size")
        return v[0] if self.with_selector and v and isinstance(v[0], int) else 0


def profile_info(name: str, base: str, vals: list, annotations: dict) -> ProfileInfo:
    """A profile from its constructor arguments (size; algorithm, size, output width)."""
    if base == "action_profile":
        return ProfileInfo(name, int(vals[0]), False, None, annotations)
    return ProfileInfo(name, int(vals[1]), True, str(vals[0]), annotations)


def table_profile(g, prop: Tree, annd: dict, gexpr, table: str) -> ProfileInfo:
    """The profile an ``implementation`` property gives ``table`` (registered in the program)."""
    prog = g.prog
    if isinstance(gexpr, Tree) and gexpr.data == "ident":
        sym = g.scope.lookup(str(gexpr.children[-1]))
        if sym is None or sym.kind != "extern" or sym.info.extern not in PROFILE_EXTERNS:
            raise g.err(prop, "table property implementation must name an action_profile or "
                              "action_selector instance")
        info = sym.info.obj
    elif isinstance(gexpr, Tree) and gexpr.data in ("call", "ctor_call"):
        base = _callee(gexpr)
        if base not in PROFILE_EXTERNS:
            raise g.err(prop, f"implementation = {base}(...): this target implements action_profile "
                              "and action_selector")
        args = [a for a in (gexpr.children[-1].children if gexpr.children[-1] is not None else [])
                if a is not None]
        vals = prog.calls.ctor_values(g, base, args, prop)
        names = annd.get("name")
        if not names:  # p4c's control-plane generator (P4Info) refuses it
            raise g.err(prop, f"Table '{table}' has an anonymous table property 'implementation' with "
                              "no name annotation, which is not supported by P4Runtime")
        name = str(names[0]).lstrip(".")
        info = profile_info(name, base, vals, {k: v for k, v in annd.items() if k != "name"})
    else:
        raise g.err(prop, "table property implementation must be an action_profile or action_selector")
    profiles = prog.profiles
    if info.name in profiles and profiles[info.name] is not info:
        raise g.err(prop, f"conflicting control plane name: {info.name} names two action profiles")
    profiles[info.name] = info
    if table not in info.tables:
        info.tables.append(table)
    return info


def _callee(call: Tree) -> str:
    c = call.children[0]
    while isinstance(c, Tree) and c.children:
        c = c.children[-1]
    return str(c)


__all__ = ["PROFILE_EXTERNS", "ProfileInfo", "profile_info", "table_profile"]

"""Compile-time checks p4c makes on control-plane names (kept apart from code generation).

p4c rejects two different objects that end up with one fully qualified control-plane name
("conflicting control plane name", e.g. two actions both ``@name(".foo")``) and two match
fields of one table with the same name (P4Info could not tell them apart).
"""

from __future__ import annotations

from typing import Any


def claim_name(gen, registry: dict[str, Any], name: str, node, what: str) -> None:
    """Reject ``name`` if ``registry`` already holds a different declaration under it."""
    old = registry.get(name)
    if old is not None and getattr(old, "node", None) is not node:
        raise gen.err(node, f"{what} {name}: conflicting control plane name")


def unique_key_names(gen, table: str, keys: list, nodes: list) -> None:
    """Two keys of one table may not have the same (``@name``-given or derived) name."""
    seen: dict[str, Any] = {}
    for k, node in zip(keys, nodes, strict=True):
        if k.name in seen:
            raise gen.err(node, f"table {table}: duplicate key name {k.name}")
        seen[k.name] = node


def unique_members(ctx, node, what: str, names: list[str], already: list[str] = ()) -> None:
    """Members of an enum / error / match_kind declaration are distinct (also across the
    ``error`` and ``match_kind`` declarations, which p4c merges)."""
    seen = set(already)
    for n in names:
        if n in seen:
            raise ctx.err(node, f"{what}: duplicate member {n}")
        seen.add(n)


def unique_properties(gen, table: str, props: list) -> None:
    """A table property may be given once (p4c: duplicate property)."""
    seen: set[str] = set()
    for p in props:
        name = {"tp_key": "key", "tp_actions": "actions", "tp_default": "default_action",
                "tp_entries": "entries"}.get(p.data) or str(p.children[1].children[0])
        if name in seen:
            raise gen.err(p, f"table {table}: duplicate property {name}")
        seen.add(name)

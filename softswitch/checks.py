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

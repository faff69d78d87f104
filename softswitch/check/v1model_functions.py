"""Checks of v1model extern function calls (mark_to_drop, hash, checksums, clone, digest...);
their code is generated from the typed IR (``softswitch/pygen``, ``softswitch/native``)."""

from __future__ import annotations

from lark import Tree

from .exprs import is_const
from .types import BitT, BoolT, EnumT, ErrorT, IntLitT, ListT, P4Type, StackT, StructLikeT, StructT, VarbitT


def check_field_list(g, code: str, t: P4Type, node, digest: bool = False) -> None:
    """Every scalar of a field list (list expression, struct or header) has a width.  A digest
    may also carry ``error`` and plain enum values: p4c's BMv2 back end sends their 32-bit codes
    (P4Info types them ``error`` / ``enum``)."""
    if isinstance(t, ListT):
        items = g.ec()._list_items.get(code)
        if items is None:
            raise g.err(node, "field list expression cannot be used here")
        for c, et in items:
            check_field_list(g, c, et, node, digest)
        return
    if isinstance(t, StructLikeT):
        for fname, ft in t.fields:
            check_field_list(g, f"{code}.{fname}", ft, node, digest)
        return
    if isinstance(t, StackT):
        check_field_list(g, code, t.elem, node, digest)
        return
    if digest and isinstance(t, (ErrorT, EnumT)):
        return
    if isinstance(t, VarbitT) and "." in code:  # a header's varbit field (its current length)
        return
    if isinstance(t, (BoolT, BitT)) or isinstance(t, EnumT) and t.underlying is not None:
        return
    if isinstance(t, IntLitT):
        raise g.err(node, "integer literal in a field list has no width (cast it)")
    raise g.err(node, f"value of type {t} cannot be part of a field list")


def _field_list(g, node) -> None:
    code, t = g.ex(node)
    check_field_list(g, code, t, node)


def _preserved_names(g, node) -> None:
    """Old-style field lists: ``{meta.a, meta.b}`` or the whole user metadata struct."""
    items = node.children[0].children if isinstance(node, Tree) and node.data == "list_expr" else [node]
    for it in items:
        if it is None:
            continue
        _c, t = g.ex(it)
        if not (isinstance(it, Tree) and it.data == "member") and not isinstance(t, StructT):
            raise g.err(it, "a preserved field list may name only user metadata fields")


def _algo(g, node) -> None:
    code, t = g.ex(node)
    if not (isinstance(t, EnumT) and t.name == "HashAlgorithm") or not is_const(code):
        raise g.err(node, "hash algorithm must be a HashAlgorithm constant")


def _std(g, node) -> None:
    t = g.lvalue(node)
    if not (isinstance(t, StructT) and t.name == "standard_metadata_t"):
        raise g.err(node, f"expected standard_metadata_t, got {t}")


def _u32(g, node) -> None:
    g.ex_to(node, BitT(32))


def _bits_lvalue(g, node, what: str) -> BitT:
    t = g.lvalue(node)
    if not isinstance(t, BitT):
        raise g.err(node, f"{what} must be bit<W>, got {t}")
    return t


def _clone_type(g, node) -> None:
    _c, t = g.ex(node)
    if not (isinstance(t, EnumT) and t.name == "CloneType"):
        raise g.err(node, "clone type must be CloneType.I2E or CloneType.E2E")


def v1_function(calls, g, name: str, args, n, targs=None) -> list[str]:
    """Check a call of a v1model extern function (statement form; nothing to emit)."""
    if name == "mark_to_drop":
        if args:  # no argument: no standard_metadata_t in scope to give it (markdrop.py)
            _std(g, args[0])
    elif name == "hash":
        ot = _bits_lvalue(g, args[0], "hash result")
        _algo(g, args[1])
        if isinstance(g.ex(args[2])[1], IntLitT):
            g.ex_to(args[2], ot)
        _field_list(g, args[3])
        mx, mx_t = g.ex(args[4])
        if isinstance(mx_t, IntLitT):  # max's type parameter M is bound by nothing else
            raise g.err(args[4], f"{mx}: could not infer a width (hash max)")
        if not isinstance(mx_t, BitT):
            raise g.err(args[4], f"hash max must be an integer, got {mx_t}")
    elif name in ("verify_checksum", "verify_checksum_with_payload", "update_checksum",
                  "update_checksum_with_payload"):
        g.ec().expect_bool(args[0])
        _field_list(g, args[1])
        _algo(g, args[3])
        if name.startswith("verify"):
            _cc, ct = g.ex(args[2])
            if not isinstance(ct, BitT):
                raise g.err(args[2], f"checksum field must be bit<W>, got {ct}")
        else:
            _bits_lvalue(g, args[2], "checksum field")
    elif name in ("clone", "clone_preserving_field_list"):
        _clone_type(g, args[0])
        _u32(g, args[1])
        if len(args) == 3:
            g.ec()._const_of(args[2])
    elif name in ("resubmit", "recirculate", "clone3"):
        _preserved_names(g, args[-1])
        if name == "clone3":
            _clone_type(g, args[0])
            _u32(g, args[1])
    elif name in ("resubmit_preserving_field_list", "recirculate_preserving_field_list"):
        g.ec()._const_of(args[0])
    elif name == "random":
        t = _bits_lvalue(g, args[0], "random result")
        g.ex_to(args[1], t)
        g.ex_to(args[2], t)
    elif name == "digest":
        _u32(g, args[0])  # the receiver: in bit<32> (p4c checks it; BMv2 ignores its value)
        code, t = g.ex(args[1])
        if targs is not None and len(targs.children) == 1:
            want = g.d.resolve_type(targs.children[0])
            code = g.ec().convert(code, t, want, args[1])
            t = want
        if not isinstance(t, StructT):
            raise g.err(args[1], f"digest data must be a struct, got {t}")
        check_field_list(g, code, t, args[1], digest=True)
        g.prog.digests.setdefault(t.name, t)
    elif name == "truncate":
        _u32(g, args[0])
    elif name in ("assert", "assume"):
        g.ec().expect_bool(args[0])
    elif name != "log_msg":
        raise g.err(n, f"extern {name} is not supported")
    return []


__all__ = ["v1_function", "check_field_list"]

"""Code generation for v1model extern functions (mark_to_drop, hash, checksums, clone, digest...)."""

from __future__ import annotations

from .exprs import is_const
from .layout import field_width, pyfield
from .types import BitT, BoolT, EnumT, HeaderT, IntLitT, ListT, P4Type, StackT, StructLikeT, StructT, VarbitT


def flatten(g, code: str, t: P4Type, node) -> list[tuple[str, int | str]]:
    """(code, width) of every scalar in a field list (list expression, struct or header); the width
    of a varbit field is the code of its current length."""
    if isinstance(t, ListT):
        items = g.ec()._list_items.get(code)
        if items is None:
            raise g.err(node, "field list expression cannot be used here")
        out = []
        for c, et in items:
            out += flatten(g, c, et, node)
        return out
    if isinstance(t, StructLikeT):
        out = []
        for fname, ft in t.fields:
            out += flatten(g, f"{code}.{pyfield(fname)}", ft, node)
        return out
    if isinstance(t, VarbitT) and "." in code:  # a varbit contributes its current length (BMv2)
        return [(code, f"{code.rsplit('.', 1)[0]}._vbl")]
    if isinstance(t, StackT):
        out = []
        for i in range(t.size):
            out += flatten(g, f"{code}.h[{i}]", t.elem, node)
        return out
    if isinstance(t, BoolT):
        return [(f"int({code})", 1)]
    if isinstance(t, BitT):
        return [(f"({code} & {t.mask})" if t.signed else code, t.width)]
    if isinstance(t, EnumT) and t.underlying is not None:
        return [(code, t.underlying.width)]
    if isinstance(t, IntLitT):
        raise g.err(node, "integer literal in a field list has no width (cast it)")
    raise g.err(node, f"value of type {t} cannot be part of a field list")


def _pack(g, node) -> str:
    code, t = g.ex(node)
    flat = flatten(g, code, t, node)
    vals = "".join(c + ", " for c, _ in flat)
    widths = "".join(f"{w}, " for _, w in flat)
    return f"_pack(({vals}), ({widths}))"


def _preserved_names(g, node) -> tuple[str, ...]:
    """Old-style field lists: ``{meta.a, meta.b}`` or the whole user metadata struct."""
    from lark import Tree

    items = node.children[0].children if isinstance(node, Tree) and node.data == "list_expr" else [node]
    names: list[str] = []
    for it in items:
        if it is None:
            continue
        _c, t = g.ex(it)
        if isinstance(it, Tree) and it.data == "member":
            names.append(pyfield(str(it.children[1].children[0])))
        elif isinstance(t, StructT):
            names += [pyfield(f) for f, _ in t.fields]
        else:
            raise g.err(it, "a preserved field list may name only user metadata fields")
    return tuple(names)


def _algo(g, node) -> str:
    code, t = g.ex(node)
    if not (isinstance(t, EnumT) and t.name == "HashAlgorithm") or not is_const(code):
        raise g.err(node, "hash algorithm must be a HashAlgorithm constant")
    return t.members[int(code)]


def _std(g, node) -> str:
    code, t, _s = g.lvalue(node)
    if not (isinstance(t, StructT) and t.name == "standard_metadata_t"):
        raise g.err(node, f"expected standard_metadata_t, got {t}")
    return code


def _u32(g, node) -> str:
    return g.ex_to(node, BitT(32))


def v1_function(calls, g, name: str, args, n, targs=None) -> list[str]:
    if name == "mark_to_drop":
        s = _std(g, args[0])
        return [f"{s}.egress_spec = 511", f"{s}.mcast_grp = 0"]
    if name == "hash":
        _c, ot, setter = g.lvalue(args[0])
        if not isinstance(ot, BitT):
            raise g.err(args[0], f"hash result must be bit<W>, got {ot}")
        algo = _algo(g, args[1])
        base = g.ex_to(args[2], ot) if isinstance(g.ex(args[2])[1], IntLitT) else g.ex(args[2])[0]
        mx_c, mx_t = g.ex(args[4])
        if not isinstance(mx_t, (BitT, IntLitT)):
            raise g.err(args[4], f"hash max must be an integer, got {mx_t}")
        h = f"_HASH[{algo!r}]({_pack(g, args[3])})"
        # BMv2 modify_field_with_hash_based_offset: result = base + hash % max
        if is_const(mx_c) and int(mx_c) == 0:
            val = f"({base} + {h})"
        else:
            val = f"({base} + ({h} % {mx_c} if {mx_c} else {h}))"
        return setter(f"({val} & {ot.mask})")
    if name in ("verify_checksum", "verify_checksum_with_payload", "update_checksum",
                "update_checksum_with_payload"):
        cond = g.ec().expect_bool(args[0])
        data = _pack(g, args[1])
        if name.endswith("with_payload"):
            data = f"({data} + _C.payload)"
        algo = _algo(g, args[3])
        if name.startswith("verify"):
            cc, ct = g.ex(args[2])
            if not isinstance(ct, BitT):
                raise g.err(args[2], f"checksum field must be bit<W>, got {ct}")
            return [f"if {cond} and (_HASH[{algo!r}]({data}) & {ct.mask}) != {cc}: _C.checksum_error = 1"]
        _c, ct, setter = g.lvalue(args[2])
        if not isinstance(ct, BitT):
            raise g.err(args[2], f"checksum field must be bit<W>, got {ct}")
        lines = setter(f"_HASH[{algo!r}]({data}) & {ct.mask}")
        return [f"if {cond}:"] + ["    " + ln for ln in lines]
    if name in ("clone", "clone_preserving_field_list"):
        tc, tt = g.ex(args[0])
        if not (isinstance(tt, EnumT) and tt.name == "CloneType"):
            raise g.err(args[0], "clone type must be CloneType.I2E or CloneType.E2E")
        fl = str(g.ec()._const_of(args[2])) if len(args) == 3 else "None"
        return [f"_C.clone = ({tc}, {_u32(g, args[1])}, {fl})"]
    if name in ("resubmit", "recirculate", "clone3"):
        names = _preserved_names(g, args[-1])
        if name == "clone3":
            tc, tt = g.ex(args[0])
            if not (isinstance(tt, EnumT) and tt.name == "CloneType"):
                raise g.err(args[0], "clone type must be CloneType.I2E or CloneType.E2E")
            return [f"_C.clone = ({tc}, {_u32(g, args[1])}, {names!r})"]
        return [f"_C.{name} = {names!r}"]
    if name == "resubmit_preserving_field_list":
        return [f"_C.resubmit = {g.ec()._const_of(args[0])}"]
    if name == "recirculate_preserving_field_list":
        return [f"_C.recirculate = {g.ec()._const_of(args[0])}"]
    if name == "random":
        _c, t, setter = g.lvalue(args[0])
        if not isinstance(t, BitT):
            raise g.err(args[0], f"random result must be bit<W>, got {t}")
        return setter(f"_rand({g.ex_to(args[1], t)}, {g.ex_to(args[2], t)})")
    if name == "digest":
        _u32(g, args[0])  # the receiver: in bit<32> (p4c checks it; BMv2 ignores its value)
        code, t = g.ex(args[1])
        if targs is not None and len(targs.children) == 1:
            want = g.d.resolve_type(targs.children[0])
            code = g.ec().convert(code, t, want, args[1])
            t = want
        if not isinstance(t, StructT):
            raise g.err(args[1], f"digest data must be a struct, got {t}")
        flat = flatten(g, code, t, args[1])
        g.prog.digests.setdefault(t.name, t)
        return [f"_C.digests.append(({t.name!r}, ({''.join(c + ', ' for c, _ in flat)})))"]
    if name == "truncate":
        return [f"_C.truncate = {_u32(g, args[0])}"]
    if name in ("assert", "assume"):
        cond = g.ec().expect_bool(args[0])
        return [f"if not {cond}: _C.trace.append('{name} failed')"]
    if name == "log_msg":
        return [] if not g.prog.trace else [f"_C.trace.append('log: ' + {g.ex(args[0])[0]})"]
    raise g.err(n, f"extern {name} is not supported")


__all__ = ["v1_function", "flatten", "field_width", "HeaderT"]

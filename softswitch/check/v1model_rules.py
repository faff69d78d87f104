"""v1model rules p4c's BMv2 back end enforces on the whole program (a pass over the syntax tree).

- The checksum controls hold only checksum calls: ``VerifyChecksum`` only ``verify_checksum`` /
  ``verify_checksum_with_payload``, ``ComputeChecksum`` only ``update_checksum`` /
  ``update_checksum_with_payload`` (blocks and empty statements aside); BMv2 has no other
  statements there (p4c: "Only calls to ... allowed").
- Those four functions are called nowhere else: BMv2 computes checksums only in its checksum
  stages, so p4c rejects them in ingress, egress and the parser.
- A user function is inlined by p4c where it is called, so a function whose body (or a
  function it calls) holds checksum calls counts as those calls: a checksum control may call it
  when the body holds nothing else, no other block may.
- A ``direct_counter`` / ``direct_meter`` belongs to at most one table.
- The parser's headers parameter is a struct of headers, header stacks and header unions, and
  the user metadata parameter is a struct (p4c: "the type should be a struct of headers...").
"""

from __future__ import annotations

from lark import Tree

from .types import HeaderT, StackT, StructT, UnionT

VERIFY = frozenset({"verify_checksum", "verify_checksum_with_payload"})
UPDATE = frozenset({"update_checksum", "update_checksum_with_payload"})


def _callee(stmt: Tree) -> str | None:
    """Name of the function a ``call_stmt`` calls, if it is a plain identifier."""
    call = stmt.children[0]
    if isinstance(call, Tree) and call.data in ("call", "tcall"):
        fn = call.children[0]
        if isinstance(fn, Tree) and fn.data == "ident":
            return str(fn.children[-1])
    return None


def _calls(tree: Tree):
    return tree.find_pred(lambda t: t.data in ("call", "tcall"))


def _only_calls(block: Tree, ok) -> bool:
    """Does ``block`` hold nothing but calls ``ok(name)`` accepts (blocks and ``;`` aside)?"""
    for st in block.children:
        if not isinstance(st, Tree) or st.data == "empty_stmt":
            continue
        if st.data == "block":
            if not _only_calls(st, ok):
                return False
        elif st.data == "annotated_block":
            if not _only_calls(st.children[-1], ok):
                return False
        elif st.data != "call_stmt" or not ok(_callee(st)):
            return False
    return True


class _Functions:
    """The checksum calls each user function makes, itself or through the functions it calls."""

    def __init__(self, functions: dict[str, Tree]):
        self.trees = functions
        self.memo: dict[str, frozenset[str]] = {}

    def checksums(self, name: str) -> frozenset[str]:
        if name not in self.trees:
            return frozenset()
        if name not in self.memo:
            self.memo[name] = frozenset()  # a recursive call (rejected elsewhere) adds nothing
            found: set[str] = set()
            for call in _calls(self.trees[name]):
                fn = call.children[0]
                if isinstance(fn, Tree) and fn.data == "ident":
                    callee = str(fn.children[-1])
                    found |= {callee} & (VERIFY | UPDATE) or self.checksums(callee)
            self.memo[name] = frozenset(found)
        return self.memo[name]

    def allowed_in(self, name: str | None, allowed: frozenset[str]) -> bool:
        """May a checksum control that allows ``allowed`` call ``name``?"""
        if name in allowed:
            return True
        if name not in self.trees or not self.checksums(name) <= allowed:
            return False
        return _only_calls(self.trees[name].children[-1], lambda f: self.allowed_in(f, allowed))


def _check_checksum_body(ctx, block: Tree, allowed: frozenset[str], control: str, fns: _Functions) -> None:
    for st in block.children:
        if not isinstance(st, Tree) or st.data == "empty_stmt":
            continue
        if st.data == "block":
            _check_checksum_body(ctx, st, allowed, control, fns)
        elif st.data == "annotated_block":
            _check_checksum_body(ctx, st.children[-1], allowed, control, fns)
        elif st.data != "call_stmt" or not fns.allowed_in(_callee(st), allowed):
            raise ctx.err(st, f"{control}: only calls to {' or '.join(sorted(allowed))} are allowed in "
                              "this checksum control (BMv2)")


def check_program(ctx, controls: dict[str, Tree], parsers: dict[str, Tree], roles: dict[str, str],
                  functions: dict[str, Tree] | None = None) -> None:
    """``roles``: v1model role -> control/parser type name (from the ``V1Switch`` instance)."""
    verify, compute = roles.get("verify"), roles.get("compute")
    fns = _Functions(functions or {})
    for name, tree in controls.items():
        if name == verify:
            _check_checksum_body(ctx, tree.children[-1], VERIFY, name, fns)
        elif name == compute:
            _check_checksum_body(ctx, tree.children[-1], UPDATE, name, fns)
        else:
            _no_checksum_calls(ctx, tree, name, fns)
    for name, tree in parsers.items():
        _no_checksum_calls(ctx, tree, name, fns)


def _no_checksum_calls(ctx, tree: Tree, block: str, fns: _Functions) -> None:
    for call in _calls(tree):
        fn = call.children[0]
        if not (isinstance(fn, Tree) and fn.data == "ident"):
            continue
        name = str(fn.children[-1])
        inner = sorted({name} & (VERIFY | UPDATE) or fns.checksums(name))
        if inner:
            where = "VerifyChecksum" if inner[0] in VERIFY else "ComputeChecksum"
            via = "" if inner[0] == name else f" (called by function {name}, which p4c inlines here)"
            raise ctx.err(call, f"{inner[0]} can only be called in the {where} control, not in {block}"
                                f"{via} (BMv2)")


def one_table_per_direct_resource(gen, sym, table: str, node: Tree) -> None:
    """``counters = dc`` / ``meters = dm``: the instance must not already belong to another table."""
    owner = getattr(sym.info, "table", None)
    if owner is not None and owner != table:
        raise gen.err(node, f"{sym.info.extern} {sym.info.name} is already used by table {owner}; "
                            "a direct resource belongs to one table")


def check_user_types(ctx, parser_params: list) -> None:
    """The v1model parser's ``out H hdr`` and ``inout M meta`` parameter types."""
    if len(parser_params) != 4:
        return  # the signature check reports this
    hdr, meta = parser_params[1], parser_params[2]
    if not isinstance(hdr.type, StructT) or isinstance(hdr.type, (HeaderT, UnionT)):
        raise ctx.err(hdr.node, f"{hdr.name}: the headers type should be a struct of headers, stacks, "
                                "or unions")
    bad = _non_header_field(hdr.type)
    if bad:
        raise ctx.err(hdr.node, f"{bad}: the headers type should be a struct of headers, stacks, or unions")
    if not isinstance(meta.type, StructT) or isinstance(meta.type, (HeaderT, UnionT)):
        raise ctx.err(meta.node, f"{meta.name}: expected the user metadata type to be a struct")


def _non_header_field(st: StructT, prefix: str = "") -> str | None:
    """First field that is not a header, stack or union; nested structs are flattened as p4c's
    mid end does (``NestedStructs``) before the check."""
    for fname, ft in st.fields:
        if isinstance(ft, StructT) and not isinstance(ft, (HeaderT, UnionT)):
            bad = _non_header_field(ft, f"{prefix}{st.name}.")
            if bad:
                return bad
        elif not isinstance(ft, (HeaderT, StackT, UnionT)):
            return f"{prefix}{st.name}.{fname}"
    return None

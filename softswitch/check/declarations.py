"""Compile-time checks p4c makes, kept apart from code generation.

Control-plane names: p4c rejects two different objects that end up with one fully qualified
control-plane name ("conflicting control plane name", e.g. two actions both ``@name(".foo")``)
and two match fields of one table with the same name (P4Info could not tell them apart).
Declarations (``declarations``): what p4c's type checker rejects in any declaration, used or
not, checked on the syntax tree before the front-end rewrites drop unused blocks and generic
functions; the rules were found by running p4c's own error test programs.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Tree

from .annotations import annotations
from .package_blocks import package_block_arguments


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


def actions_listed_first(gen, table: str, props: list, node) -> None:
    """``default_action`` names an action of the ``actions`` list, which p4c resolves in
    property order: a default action before (or without) that list has nothing to invoke; and
    entries before the key have no key type ("Could not find type for table key")."""
    kinds = [p.data for p in props]
    if "tp_entries" in kinds and "tp_key" in kinds \
            and kinds.index("tp_entries") < kinds.index("tp_key"):
        raise gen.err(props[kinds.index("tp_key")], f"{table}: Could not find type for table "
                                                    "key Key (its entries come before the key)")
    for p in props:
        if p.data == "tp_actions":
            return
        if p.data == "tp_default":
            ref = p.children[2]
            name = str(ref.children[1].children[0]) if isinstance(ref.children[1], Tree) \
                else str(ref.children[1])
            raise gen.err(node, f"{table} has no action list, so it cannot invoke '{name}()'")


def ser_enum_value_fits(ctx, node, name: str, v: int, t) -> None:
    """An untyped serializable enum value must fit the underlying type (p4c: "Serialized enum
    constant value ... is out of bounds of the underlying type")."""
    head = f"{name}: Serialized enum constant value {v} is out of bounds of the underlying type {t}"
    if not t.signed and v < 0:
        raise ctx.err(node, f"{head}; the value {v} is negative, but the underlying type {t} is "
                            "unsigned")
    need = (v.bit_length() + 1 if v >= 0 else (-v - 1).bit_length() + 1) if t.signed \
        else v.bit_length()
    if need > t.width:
        kind = "signed" if t.signed else "unsigned"
        raise ctx.err(node, f"{head}; the value {v} requires {need} bits but the underlying "
                            f"{kind} type {t} only contains {t.width} bits")


def same_directional_args(gen, action, default_args: list, listed_args: list, node,
                          what: str = "default action") -> None:
    """``default_action = a(x, ...)`` (and an entry's action) must bind ``a``'s directional
    parameters to the same expressions as the table's ``actions`` list does (p4c's
    validateActionInitializer: argument does not match)."""
    if not listed_args or len(default_args) != len(listed_args) + len(action.data_params):
        return  # the default names only the action data (the actions list binds the rest)
    from_list = [_text(a) for a in listed_args]
    given = [_text(a) for a in default_args[:len(from_list)]]
    if given != from_list:
        raise gen.err(node, f"{what} {action.local}: directional arguments "
                            f"({', '.join(given)}) do not "
                            f"match the table's actions list ({', '.join(from_list)})")


def _text(node) -> str:
    if isinstance(node, Token):
        return str(node)
    if isinstance(node, Tree):
        return "".join(_text(c) + ("." if isinstance(c, Tree) and node.data == "member" else "")
                       for c in node.children if c is not None).rstrip(".")
    return str(node)


def no_void_variables(ctx, tree: Tree) -> None:
    """A variable or constant cannot have type ``void`` (p4c: it has no values), and a variable
    cannot have type ``string`` (strings are compile-time only: extern arguments)."""
    for d in ("var_decl", "const_decl"):
        for node in tree.find_data(d):
            t = node.children[1]
            kind = t.data[2:] if isinstance(t, Tree) and t.data in ("t_void", "t_string") else None
            if kind == "void" or kind == "string" and d == "var_decl":
                raise ctx.err(node, f"{node.children[2].children[0]}: cannot declare a "
                                    f"variable of type {kind}")


def no_block_typed_params(ctx, tree: Tree) -> None:
    """A parameter's type must be a type: a control or parser *declaration* (one with a body)
    is an object, not a type, so p4c rejects ``control C()(A a)`` when ``A`` is a declared
    control (its type is the ``control A_t();`` type declaration). A control or parser
    *type* is allowed only as a directionless parameter of a block or package, never of an
    action or function. Checked before unused blocks are dropped, since p4c type-checks
    declarations that nothing instantiates."""
    blocks = {str(d.children[1].children[0]): d.data.split("_")[0] for d in tree.children
              if isinstance(d, Tree) and d.data in ("control_decl", "parser_decl")}
    btypes = {str(d.children[1].children[0]): d.data.split("_")[0] for d in tree.children
              if isinstance(d, Tree) and d.data in ("control_type_decl", "parser_type_decl")}
    for d in tree.children:
        if not isinstance(d, Tree):
            continue
        tvars = {str(v) for tp in d.find_data("type_params") for v in tp.scan_values(
            lambda v: isinstance(v, Token) and v.type in ("IDENTIFIER", "TYPE_IDENTIFIER"))}
        callable_ = {id(p) for f in (*d.find_data("action_decl"), *d.find_data("function_decl"),
                                     *d.find_data("function_proto")) for p in f.find_data("param")}
        for p in d.find_data("param"):
            t = p.children[2]
            name = str(t.children[-1]) if isinstance(t, Tree) and t.data == "type_name" else ""
            if name in tvars:  # a type variable shadows the block
                continue
            kind = blocks.get(name) or (btypes.get(name) if p.children[1] is not None
                                        or id(p) in callable_ else None)
            if kind:
                raise ctx.err(t, f"{p.children[3].children[0]}: parameter cannot have type "
                                 f"{kind} {name}")


def int_params(ctx, tree: Tree) -> None:
    """A parameter of type ``int`` (infinite precision: a compile-time value) must be
    directionless, and actions take none (p4c: "parameters with type int must be
    directionless", "actions cannot have parameters with type int")."""
    in_action = {id(p) for a in tree.find_data("action_decl") for p in a.find_data("param")}
    for p in tree.find_data("param"):
        t = p.children[2]
        if not (isinstance(t, Tree) and t.data == "t_int_inf"):
            continue
        name = p.children[3].children[0]
        if p.children[1] is not None:
            raise ctx.err(p.children[3], f"{name}: parameters with type int must be directionless")
        if id(p) in in_action:
            raise ctx.err(p.children[3], f"{name}: actions cannot have parameters with type int")


_SIZE_METHODS = {"minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"}


def constant_param_defaults(ctx, tree: Tree) -> None:
    """A parameter's default value is a compile-time constant (p4c: "expression must be a
    compile-time constant"): no calls besides the size methods p4c folds."""
    for p in tree.find_data("param"):
        default = p.children[4]
        if not isinstance(default, Tree):
            continue
        for c in default.iter_subtrees():
            f = c.children[0] if c.data == "call" else None
            if f is not None and not (isinstance(f, Tree) and f.data == "member"
                                      and str(f.children[1].children[0]) in _SIZE_METHODS):
                raise ctx.err(default, "expression must be a compile-time constant")


def no_object_tuple_fields(ctx, tree: Tree) -> None:
    """A tuple holds values: a package, parser, control or extern type as a tuple element is
    an error (p4c: "Field '0' of 'tuple<...>' cannot have type 'package f'")."""
    objects = {str(d.children[1].children[0]) for d in tree.children if isinstance(d, Tree)
               and d.data in ("package_decl", "parser_type_decl", "control_type_decl",
                              "parser_decl", "control_decl", "extern_decl")}
    for tt in tree.find_data("tuple_type"):
        for i, a in enumerate(tt.children[0].children):
            base = a.children[0] if isinstance(a, Tree) and a.data == "specialized_type" else a
            name = str(base.children[-1]) if isinstance(base, Tree) and base.data == "type_name" \
                else None
            if name in objects:
                raise ctx.err(a, f"Field '{i}' of 'tuple' cannot have type '{name}' (an object, "
                                 "not a value)")


def unique_type_params(ctx, tree: Tree) -> None:
    """Type parameters of one declaration have distinct names (p4c: duplicate declaration)."""
    for tp in tree.find_data("type_params"):
        names = [str(c.children[0]) for c in tp.children if isinstance(c, Tree)]
        dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if dup is not None:
            raise ctx.err(tp, f"duplicate type parameter {dup}")


def generic_types_specialized(ctx, tree: Tree) -> None:
    """A parameter or variable of a generic extern type names its type arguments (p4c: the
    type has type parameters but is not specialized; nothing there infers them)."""
    generic = {str(d.children[1].children[0]) for d in tree.children if isinstance(d, Tree)
               and d.data == "extern_decl" and d.children[2] is not None}
    for node in (*tree.find_data("param"), *tree.find_data("var_decl")):
        t = node.children[2] if node.data == "param" else node.children[1]
        if isinstance(t, Tree) and t.data == "type_name" and str(t.children[-1]) in generic:
            raise ctx.err(t, f"{t.children[-1]}: a generic type needs its type arguments "
                             f"({t.children[-1]}<...>)")


def no_recursive_blocks(ctx, tree: Tree) -> None:
    """A control or parser cannot instantiate itself, directly or through other blocks (p4c:
    "Self-referencing types not supported"); unchecked, the instances would nest forever."""
    blocks = {str(d.children[1].children[0]): d for d in tree.children
              if isinstance(d, Tree) and d.data in ("control_decl", "parser_decl")}
    uses: dict[str, list[tuple[str, Tree]]] = {}
    for name, d in blocks.items():
        for loc in d.children[5:]:
            if isinstance(loc, Tree) and loc.data == "instantiation":
                for t in loc.children[1].scan_values(lambda v: isinstance(v, Token)
                                                     and v.type == "TYPE_IDENTIFIER"):
                    if str(t) in blocks:
                        uses.setdefault(name, []).append((str(t), loc))
        for tm in d.find_data("type_member"):  # Sub.apply(...): an implicit instance
            used = str(tm.children[0].children[-1])
            if used in blocks:
                uses.setdefault(name, []).append((used, tm))

    def visit(name: str, path: list[str]) -> None:
        for used, node in uses.get(name, []):
            if used == path[0]:
                kind = blocks[name].data.split("_")[0]
                what = (f"'{used}' within '{kind} {name}'" if len(path) == 1 else
                        f"'{used}' within '{kind} {name}' ({' -> '.join(path + [used])})")
                raise ctx.err(node, f"Self-referencing types not supported: {what}")
            if used not in path:
                visit(used, path + [used])

    for name in blocks:
        visit(name, [name])


def _always_returns(s) -> bool:
    """Whether statement ``s`` ends in ``return``/``exit`` on every path (p4c's check is the
    same structural one: no constant folding of conditions)."""
    if not isinstance(s, Tree):
        return False
    if s.data in ("return_stmt", "exit_stmt"):
        return True
    if s.data == "block":
        return any(_always_returns(c) for c in s.children)
    if s.data == "if_stmt":
        return len(s.children) > 2 and s.children[2] is not None \
            and _always_returns(s.children[1]) and _always_returns(s.children[2])
    if s.data == "switch_stmt":
        cases = [c for c in s.children[1:] if isinstance(c, Tree) and c.data == "switch_case"]
        has_default = any(isinstance(c.children[0], Tree) and c.children[0].data == "label_default"
                          for c in cases)
        return bool(cases) and has_default and cases[-1].children[1] is not None and all(
            _always_returns(c.children[1]) for c in cases if c.children[1] is not None)
    return False


def functions_return(ctx, tree: Tree) -> None:
    """A function with a non-void result must return a value on every path (p4c: "Function
    'f' does not return a value on all paths"), also when nothing calls it."""
    for f in tree.find_data("function_decl"):
        t = f.children[1]
        if isinstance(t, Tree) and t.data == "t_void":
            continue
        if not _always_returns(f.children[5]):
            name = f.children[2]
            raise ctx.err(name, f"Function '{name.children[0]}' does not return a value on "
                                "all paths")


def no_tuple_header_fields(ctx, tree: Tree) -> None:
    """Header fields are bit/int/varbit/bool/serializable enums (or structs of these); a tuple
    is not (p4c: "Field 'f' of 'header H' cannot have type 'tuple<...>'"). Checked on the
    syntax tree, before tuple types are lowered to generated structs."""
    tuples = {str(d.children[3].children[0]) for d in tree.children
              if isinstance(d, Tree) and d.data == "typedef_decl"
              and isinstance(d.children[2], Tree) and d.children[2].data == "tuple_type"}
    for h in tree.children:
        if not (isinstance(h, Tree) and h.data == "header_decl"):
            continue
        for fld in h.children[2:]:
            t = fld.children[1]
            if isinstance(t, Tree) and (t.data == "tuple_type" or t.data == "type_name"
                                        and str(t.children[-1]) in tuples):
                raise ctx.err(fld.children[2], f"Field '{fld.children[2].children[0]}' of "
                                               f"'header {h.children[1].children[0]}' cannot "
                                               "have type tuple")


_FIELDED = {"struct_decl": "struct", "header_decl": "header", "header_union_decl": "header_union"}


def no_int_fields(ctx, tree: Tree) -> None:
    """A struct, header or union field of type ``int`` (arbitrary precision, compile time
    only) is p4c's "Field 'f' of 'struct S' cannot have type 'int'"."""
    for d in tree.children:
        if not (isinstance(d, Tree) and d.data in _FIELDED):
            continue
        for fld in d.children[2:]:
            if isinstance(fld, Tree) and isinstance(fld.children[1], Tree) \
                    and fld.children[1].data == "t_int_inf":
                raise ctx.err(fld.children[2], f"Field '{fld.children[2].children[0]}' of "
                                               f"'{_FIELDED[d.data]} {d.children[1].children[0]}' "
                                               "cannot have type 'int'")


def _type_names(tree: Tree, kinds: dict[str, str]) -> dict[str, str]:
    """Top-level type declarations of the given kinds: name -> the word p4c prints."""
    return {name: kinds[d.data] for d in tree.children if isinstance(d, Tree) and d.data in kinds
            for name in [str(next(c for c in d.children if isinstance(c, Tree)
                                  and c.data == "name").children[0])]}


def _base_name(t) -> str:
    """The declared name a type reference starts from (``register`` of ``register<bit<8>>``)."""
    if isinstance(t, Tree) and t.data == "specialized_type":
        t = t.children[0]
    return str(t.children[-1]) if isinstance(t, Tree) and t.data == "type_name" else ""


def instantiations_and_fields(ctx, tree: Tree) -> None:
    """Only externs, controls, parsers and packages are instantiated (p4c: "s1: cannot
    allocate objects of type struct s"), and no struct, header or union field holds one
    (p4c: "Field 'f' of 'struct S' cannot have type 'parser P'")."""
    data = _type_names(tree, {"struct_decl": "struct", "header_decl": "header",
                              "header_union_decl": "header_union", "enum_decl": "enum"})
    for inst in tree.find_data("instantiation"):
        kind = data.get(_base_name(inst.children[1]))
        if kind:
            name = inst.children[3]
            raise ctx.err(name, f"{name.children[0]}: cannot allocate objects of type {kind} "
                                f"{_base_name(inst.children[1])}")
    objects = _type_names(tree, {"control_decl": "control", "control_type_decl": "control",
                                 "parser_decl": "parser", "parser_type_decl": "parser",
                                 "package_decl": "package", "extern_decl": "extern"})
    owners = {"struct_decl": "struct", "header_decl": "header", "header_union_decl": "header_union"}
    for d in tree.children:
        if not (isinstance(d, Tree) and d.data in owners):
            continue
        for fld in d.children[2:]:
            kind = objects.get(_base_name(fld.children[1]))
            if kind:
                raise ctx.err(fld.children[2], f"Field '{fld.children[2].children[0]}' of "
                                               f"'{owners[d.data]} {d.children[1].children[0]}' "
                                               f"cannot have type '{kind} "
                                               f"{_base_name(fld.children[1])}'")


def package_arity(ctx, tree: Tree) -> None:
    """A package instantiation supplies one argument per parameter without a default (p4c:
    "Ingress: 1 arguments supplied while 0 are expected")."""
    packages = {str(d.children[1].children[0]): [p for p in d.children[3].children
                                                 if p is not None]
                for d in tree.children if isinstance(d, Tree) and d.data == "package_decl"}
    for inst in tree.find_data("instantiation"):
        params = packages.get(_base_name(inst.children[1]))
        if params is None:
            continue
        given = [a for a in inst.children[2].children if a is not None] \
            if inst.children[2] is not None else []
        required = sum(1 for p in params if p.children[4] is None and not (
            isinstance(p.children[0], Tree) and "optional" in p.children[0].scan_values(
                lambda v: isinstance(v, Token))))
        if not required <= len(given) <= len(params):
            raise ctx.err(inst, f"{_base_name(inst.children[1])}: {len(given)} arguments "
                                f"supplied while {len(params)} are expected")


def constant_instance_arguments(ctx, tree: Tree) -> None:
    """Instantiation arguments are evaluated at compile time: inside a control or parser they
    cannot name its run-time parameters or its variables (p4c: "z: cannot evaluate to a
    compile-time constant")."""
    for d in tree.children:
        if not (isinstance(d, Tree) and d.data in ("control_decl", "parser_decl")):
            continue
        runtime = {str(p.children[3].children[0]) for p in (d.children[3].children
                                                            if d.children[3] else [])
                   if isinstance(p, Tree)}
        runtime |= {str(v.children[2].children[0]) for v in d.children[5:]
                    if isinstance(v, Tree) and v.data == "var_decl"}
        for inst in d.children[5:]:
            if not (isinstance(inst, Tree) and inst.data == "instantiation"
                    and isinstance(inst.children[2], Tree)):
                continue
            for ident in inst.children[2].find_data("ident"):
                if str(ident.children[-1]) in runtime:
                    raise ctx.err(ident, f"{ident.children[-1]}: cannot evaluate to a "
                                         "compile-time constant")


def no_shadowed_extern_type_params(ctx, tree: Tree) -> None:
    """A method of a generic extern cannot reuse one of the extern's type parameter names (in
    p4c the name is a type there, so ``void f<D>`` of ``extern X<D>`` is a syntax error)."""
    for d in tree.children:
        if not (isinstance(d, Tree) and d.data == "extern_decl" and d.children[2] is not None):
            continue
        outer = {str(c.children[0]) for c in d.children[2].children if isinstance(c, Tree)}
        for m in d.children[3:]:
            proto = m.children[-1] if isinstance(m, Tree) and m.data == "method_proto" else None
            if proto is None or proto.children[2] is None:
                continue
            for c in proto.children[2].children:
                if isinstance(c, Tree) and str(c.children[0]) in outer:
                    raise ctx.err(c, f"syntax error, unexpected TYPE {c.children[0]}: type "
                                     f"parameter {c.children[0]} of method "
                                     f"{proto.children[1].children[0]} is already a type "
                                     f"parameter of extern {d.children[1].children[0]}")


def no_self_typed_extern_methods(ctx, tree: Tree) -> None:
    """A method of extern ``E`` cannot take or return an ``E`` (p4c: "Self-referencing types not
    supported: 'E' within 'E'"); the constructor is not a method."""
    for d in tree.children:
        if not (isinstance(d, Tree) and d.data == "extern_decl"):
            continue
        ext = str(d.children[1].children[0])
        for m in d.children[3:]:
            if not (isinstance(m, Tree) and m.data == "method_proto"):
                continue
            proto = m.children[-1]
            for t in proto.iter_subtrees_topdown():
                if t.data in ("type_name", "specialized_type"):
                    tok = (t if t.data == "type_name" else t.children[0]).children[-1]
                    if str(tok) == ext:
                        raise ctx.err(t, f"Self-referencing types not supported: '{ext}' "
                                         f"within '{ext}'")


def declarations(ctx, tree: Tree) -> None:
    """The checks p4c's type checker makes on every declaration, run on the syntax tree before
    the front-end rewrites drop what nothing uses (unused blocks, uncalled generic functions)."""
    for check in (no_block_typed_params, int_params, constant_param_defaults,
                  no_object_tuple_fields, package_arity, unique_type_params,
                  generic_types_specialized, no_recursive_blocks,
                  functions_return, no_tuple_header_fields, no_int_fields, instantiations_and_fields,
                  constant_instance_arguments,
                  no_shadowed_extern_type_params, no_self_typed_extern_methods,
                  package_block_arguments, annotations):
        check(ctx, tree)


def _nameable(e) -> bool:
    """Whether p4c's KeyNameGenerator can name key expression ``e``: names, fields, indexes,
    slices and ``&`` of such, constants, and ``h.isValid()``."""
    if not isinstance(e, Tree):
        return False
    if e.data in ("ident", "int_lit"):
        return True
    if e.data == "member":
        return _nameable(e.children[0])
    if e.data in ("index", "slice", "band"):
        return all(_nameable(c) for c in e.children if isinstance(c, Tree))
    if e.data == "call":
        f, args = e.children[0], e.children[1]
        no_args = args is None or not any(a is not None for a in args.children)
        return isinstance(f, Tree) and f.data == "member" and no_args \
            and str(f.children[1].children[0]) == "isValid" and _nameable(f.children[0])
    return False


def key_needs_name(gen, kexpr, annotations: dict, node) -> None:
    """A key expression p4c cannot name for the control plane (``a + b``, a cast, a function
    call) must carry ``@name`` (p4c: "Complex key expression requires a @name annotation")."""
    if not annotations.get("name") and not _nameable(kexpr):
        raise gen.err(node, f"{_text(kexpr)}: Complex key expression requires a @name annotation")

"""Shadowing, as p4c's ``ResolveReferences`` checks it (run with ``checkShadow`` at the start of
its front end, on the program as written).

For every namespace -- a control, parser, action, function, control/parser type, parser state,
block statement and table property list -- each declaration in it is compared with

- an earlier declaration of the same name in the same namespace (the parameters, type
  parameters and constructor parameters of a control or parser count as its own), and
- what the name means just outside the namespace: the innermost enclosing scope that declares
  it before this point (type variables and parser states count wherever they are declared),
  else a ``match_kind`` member.

Each match is ``[--Wwarn=shadow] warning: 'x' shadows 'x'``; a declaration (not a parameter)
shadowing a parameter of an enclosing block is p4c's error "declaration of 'x' shadows a
parameter 'x'".  Extern methods and their parameters are not checked (p4c skips them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lark import Token, Tree

# what p4c's node classes are, by the kinds below
_DECLARATIONS = {"var", "const", "instance", "action", "table", "state", "property", "value_set"}
_OVERLOADABLE_PREV = {"method", "extern"}  # Method, Type_Extern (P4Program never occurs here)
_OVERLOADING = {"method", "function", "control", "parser", "package"}
_TOP_KINDS = {
    "const_decl": "const", "typedef_decl": "type", "header_decl": "type", "header_union_decl": "type",
    "struct_decl": "type", "enum_decl": "type", "ser_enum_decl": "type", "extern_decl": "extern",
    "extern_func_decl": "method", "parser_type_decl": "archtype", "control_type_decl": "archtype",
    "package_decl": "package", "parser_decl": "parser", "control_decl": "control",
    "function_decl": "function", "action_decl": "action", "instantiation": "instance",
}
_LOCAL_KINDS = {"var_decl": "var", "const_decl": "const", "instantiation": "instance",
                "action_decl": "action", "table_decl": "table", "value_set_decl": "value_set",
                "parser_state": "state"}


@dataclass(frozen=True)
class Decl:
    name: str
    kind: str
    node: Tree        # the declaration's name node (p4c reports there)
    pos: tuple[int, int]


Frame = list[Decl]
Warn = Callable[[Tree, str, str], None]


def _first_name(node: Tree) -> Tree | None:
    return next((c for c in node.children if isinstance(c, Tree) and c.data == "name"), None)


def _decl(name_node, kind: str) -> Decl | None:
    if not isinstance(name_node, Tree) or name_node.meta.empty:
        return None
    return Decl(str(name_node.children[0]), kind, name_node, (name_node.meta.line, name_node.meta.column))


def _params(params) -> list[Decl]:
    out = []
    for p in (params.children if isinstance(params, Tree) else []):
        if isinstance(p, Tree) and p.data == "param":
            d = _decl(p.children[3], "param")
            if d is not None:
                out.append(d)
    return out


def _type_params(tps) -> list[Decl]:
    names = [c for c in tps.children if isinstance(c, Tree)] if isinstance(tps, Tree) else []
    return [d for d in (_decl(n, "typevar") for n in names) if d is not None]


def _local(node) -> Decl | None:
    if not isinstance(node, Tree) or node.data not in _LOCAL_KINDS:
        return None
    kind = _LOCAL_KINDS[node.data]
    nm = node.children[2] if node.data in ("var_decl", "const_decl", "parser_state") else \
        node.children[-1] if node.data in ("instantiation", "value_set_decl") else node.children[1]
    return _decl(nm, kind)


def _property(p: Tree) -> Decl | None:
    if p.data == "tp_generic":
        return _decl(p.children[1], "property")
    tok = next((c for c in p.children if isinstance(c, Token) and c.type in ("KW_KEY", "KW_ACTIONS",
                                                                            "KW_ENTRIES")), None)
    if tok is not None:
        return Decl(str(tok), "property", p, (tok.line, tok.column))
    if p.data == "tp_default" and not p.meta.empty:
        return Decl("default_action", "property", p, (p.meta.line, p.meta.column))
    return None


class Shadowing:
    def __init__(self, tree: Tree, warn: Warn, err):
        self.warn = warn
        self.err = err
        self.program: Frame = []
        self.match_kinds: Frame = []
        for node in tree.children:
            if not isinstance(node, Tree):
                continue
            if node.data == "match_kind_decl":
                self.match_kinds += [d for d in (_decl(n, "decl") for n in node.children[1:]) if d]
            elif node.data in _TOP_KINDS:
                d = _decl(_first_name(node), _TOP_KINDS[node.data])
                if d is not None:
                    self.program.append(d)
        self.tree = tree

    def run(self) -> None:
        for node in self.tree.children:
            if not isinstance(node, Tree):
                continue
            if node.data == "control_decl":
                self._control(node)
            elif node.data == "parser_decl":
                self._parser(node)
            elif node.data == "function_decl":
                _ann, _ret, _nm, tps, params, body = node.children
                frame = self.check(_type_params(tps) + _params(params), [self.program])
                self._block(body, [frame, self.program])
            elif node.data == "action_decl":
                self._action(node, [self.program])
            elif node.data in ("control_type_decl", "parser_type_decl"):
                self.check(_type_params(node.children[2]) + _params(node.children[3]), [self.program])

    # ------------------------------------------------------------ namespaces
    def check(self, decls: list[Decl], outer: list[Frame]) -> Frame:
        """p4c's ``checkShadowing`` of one namespace; returns it as a frame for inner scopes."""
        seen: dict[str, Decl] = {}
        for d in decls:
            if d.name in seen:
                self.warn(d.node, "shadow", f"'{d.name}' shadows '{d.name}'")
            elif d.kind not in ("method", "function"):
                seen[d.name] = d
            for p in self.resolve(d.name, d.pos, outer):
                if p is d or p.kind in _OVERLOADABLE_PREV and d.kind in _OVERLOADING:
                    continue
                if d.kind in _DECLARATIONS and p.kind == "param":
                    raise self.err(d.node, f"declaration of '{d.name}' shadows a parameter '{p.name}'")
                self.warn(d.node, "shadow", f"'{d.name}' shadows '{p.name}'")
        return decls

    def resolve(self, name: str, pos: tuple[int, int], outer: list[Frame]) -> list[Decl]:
        for frame in outer:
            found = [d for d in frame if d.name == name and (d.kind in ("typevar", "state") or d.pos <= pos)]
            if found:
                return found
        return [d for d in self.match_kinds if d.name == name and d.pos <= pos]

    def _control(self, node: Tree) -> None:
        _ann, _nm, tps, params, ctor, *rest = node.children
        locals_, body = rest[:-2], rest[-1]
        ctor_params = _params(ctor.children[0]) if isinstance(ctor, Tree) else []
        own = _type_params(tps) + _params(params) + ctor_params
        frame = self.check(own + [d for d in map(_local, locals_) if d is not None], [self.program])
        scopes = [frame, self.program]
        for loc in locals_:
            if isinstance(loc, Tree) and loc.data == "action_decl":
                self._action(loc, scopes)
            elif isinstance(loc, Tree) and loc.data == "table_decl":
                self.check([d for d in map(_property, loc.children[2:]) if d is not None], scopes)
        self._block(body, scopes)

    def _parser(self, node: Tree) -> None:
        _ann, _nm, tps, params, ctor, *rest = node.children
        ctor_params = _params(ctor.children[0]) if isinstance(ctor, Tree) else []
        own = _type_params(tps) + _params(params) + ctor_params
        frame = self.check(own + [d for d in map(_local, rest) if d is not None], [self.program])
        for st in rest:
            if isinstance(st, Tree) and st.data == "parser_state":
                self._statements(st.children[3:], [frame, self.program])

    def _action(self, node: Tree, outer: list[Frame]) -> None:
        frame = self.check(_params(node.children[2]), outer)
        self._block(node.children[3], [frame, *outer])

    def _block(self, block, outer: list[Frame]) -> None:
        if isinstance(block, Tree) and block.data == "block":
            self._statements(block.children, outer)

    def _statements(self, stmts, outer: list[Frame]) -> None:
        """A block statement or parser state: its declarations, then the blocks nested in it."""
        frame = self.check([d for d in map(_local, stmts) if d is not None], outer)
        for st in stmts:
            for inner in _nested_blocks(st):
                self._statements(inner.children, [frame, *outer])


def _nested_blocks(st) -> Iterator[Tree]:
    """The block statements directly inside statement ``st`` (not inside those blocks)."""
    if not isinstance(st, Tree):
        return
    if st.data == "block":
        yield st
    elif st.data == "annotated_block":
        yield from _nested_blocks(st.children[-1])
    elif st.data == "if_stmt":
        yield from _nested_blocks(st.children[1])
        yield from _nested_blocks(st.children[2])
    elif st.data == "switch_stmt":
        for case in st.children[1:]:
            if isinstance(case, Tree) and case.data == "switch_case":
                yield from _nested_blocks(case.children[1])


def check(tree: Tree, decls) -> None:
    """Record p4c's shadowing warnings (``decls.warn``); raise its parameter-shadowing error."""
    Shadowing(tree, decls.warn, decls.err).run()


__all__ = ["check"]

"""User-defined functions (top level): checks of their declarations, bodies and calls (the code
of a function is generated from the typed IR, ``softswitch/pygen`` and ``softswitch/native``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lark import Tree

from .call_args import bind_arguments
from .decls import Param, ann_dict
from .exprs import Scope, Sym
from .statements import BlockChecker
from .types import IntLitT, P4Type, StackT, StructLikeT, VoidT


@dataclass
class FuncInfo:
    name: str
    pyfn: str
    ret: P4Type
    params: list[Param]
    scalar_outs: list[int] = field(default_factory=list)


class FunctionChecker(BlockChecker):
    def __init__(self, prog, tree: Tree):
        super().__init__(prog, "", Tree("function", []), "function")
        self.ftree = tree
        self.info: FuncInfo | None = None

    def generate(self) -> FuncInfo:
        ann, ret_node, nm, tps, params_node, body = self.ftree.children
        if tps is not None:
            raise self.err(self.ftree, "generic functions are not supported")
        name = str(nm.children[0])
        ret = self.d.resolve_type(ret_node)
        params = self.d.params(params_node)
        for p in params:
            if isinstance(p.type, IntLitT):
                raise self.err(p.node, f"parameter {p.name} of function {name}: type int is only for "
                                       "compile-time constants")
        info = FuncInfo(name, f"F_{self.prog.pyident(name)}", ret, params)
        info.scalar_outs = [i for i, p in enumerate(params) if p.direction in ("out", "inout")
                            and not isinstance(p.type, (StructLikeT, StackT))]
        self.info = info
        ann_dict(ann, self.d)
        self.scope = Scope(self.prog.gscope)
        for p in params:
            writable = p.direction in ("out", "inout")
            self.scope.declare(p.name, Sym("var", p.type, f"a_{p.name}", writable, info=p))
        self.block(body)
        return info

    def _s_return_stmt(self, n):
        assert self.info is not None
        e = n.children[0]
        if isinstance(self.info.ret, VoidT):
            if e is not None:
                raise self.err(n, f"function {self.info.name} returns void")
            return
        if e is None:
            raise self.err(n, f"function {self.info.name} must return a {self.info.ret}")
        self.ex_to(e, self.info.ret)

    def _s_exit_stmt(self, n):
        raise self.err(n, "exit is not allowed in a function")


def call_function(g, info: FuncInfo, args, n, as_expr: bool):
    """Check a call of a user function: (a name for the value, its type) in expressions, no
    statements otherwise (the call is lowered to ``ir.FuncCall``, copy-in/out included)."""
    bind_arguments(g, f"function {info.name}", info.params, args, n)
    if not as_expr:
        return []
    if info.scalar_outs:  # in an expression no argument is out/inout (desugar.py hoists those calls)
        raise g.err(n, f"function {info.name} has out parameters and cannot be used in an expression")
    if isinstance(info.ret, VoidT):
        raise g.err(n, f"function {info.name} returns void")
    return f"{info.pyfn}()", info.ret

"""The argument-binding pass (p4c binds arguments to parameters before its other rewrites):
every call's named arguments put in parameter order and the parameters it leaves out given
their default values, and the named arguments of the actions a table lists made positional.
The callee is found in the scopes ``desugar.Desugar`` keeps per block (this pass is that walk,
binding only); a don't-care ``_`` becomes a temporary later, where ``desugar.py`` places the
temporaries of each statement (p4c's DontcareArgs and SideEffectOrdering)."""

from __future__ import annotations

from lark import Tree

from .desugar import Desugar
from .named_args import mk_node


class BindArguments(Desugar):
    """Binds the arguments of every call of one program's syntax tree in place."""

    def run(self) -> None:
        for d in self.tree.children:
            if not isinstance(d, Tree) or not self._scope(d):
                continue
            for node in list(d.iter_subtrees_topdown()):
                if node.data in ("call", "tcall"):
                    c = self.callee(node)
                    if c is not None:
                        args = self.bind_names(node, c)
                        if args or node.children[-1] is not None:
                            node.children[-1] = mk_node("args", args, node)
                elif node.data == "action_ref":
                    self._action_ref(node)

    def _scope(self, d: Tree) -> bool:
        """The names ``callee`` resolves inside top-level declaration ``d`` (False: none)."""
        self.local, self.objects, self.tables, self.keys = {}, {}, set(), {}
        if d.data == "function_decl":
            self._objects(d.children[4])
        elif d.data == "action_decl":
            self._objects(d.children[2])
        elif d.data == "control_decl":
            self._objects(d.children[3])
            self._locals(d.children[5:-2])
        elif d.data == "parser_decl":
            self._objects(d.children[3])
            self._locals(d.children[5:])
        else:
            return False
        return True



def bind_arguments(tree: Tree, err) -> None:
    """Run the pass on ``tree``; errors are ``err(node, message)``."""
    BindArguments(tree, err).run()


__all__ = ["BindArguments", "bind_arguments"]

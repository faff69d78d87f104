"""The checked program: the front end's pass over a parsed program (types, names, tables,
actions, externs, checks).  It holds declarations only: the target makes the run-time objects
(table runtimes, registers, counters, meters, value sets, profiles) from them when a switch is
built.  ``compiler.compile`` lowers it to the typed IR (``softswitch/ir``) from which the backends
generate code (``softswitch/pygen``, ``softswitch/native``)."""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Tree

from ..frontend.named_args import bind_named
from ..frontend.parser import ParsedProgram
from . import v1model_rules
from .calls import Calls, ExternInst
from .controls import ControlChecker
from .decls import Decls
from .exprs import GlobalScope, Scope, Sym
from .functions import FunctionChecker
from .implementation import ProfileInfo
from .parsers import ParserChecker
from .statements import ActionInfo, TableInfo
from .types import BoolT, HeaderT, SpecializedT, StructLikeT, StructT

V1_ORDER = ("parser", "verify", "ingress", "egress", "compute", "deparser")
V1_PARAMS = ("p", "vr", "ig", "eg", "ck", "dep")  # v1model.p4's names for V1_ORDER


class _TopLevelChecker(ControlChecker):
    """Generates top-level actions (e.g. NoAction); they see only their parameters."""

    def __init__(self, prog):
        super().__init__(prog, "", Tree("control_decl", []))


# parameter directions of v1model.p4's block prototypes (p4c: the package argument's type must
# equal the parameter's, directions included)
_V1_DIRECTIONS = {"parser": ("", "out", "inout", "inout"), "verify": ("inout", "inout"),
                  "ingress": ("inout",) * 3, "egress": ("inout",) * 3,
                  "compute": ("inout", "inout"), "deparser": ("", "in")}


class Program:
    """The checked program: the metadata the IR lowering, P4Info and the runtime API need."""

    def __init__(self, parsed: ParsedProgram):
        """An empty checked program of ``parsed``; ``frontend.passes.run`` runs the passes that
        fill it (this class's ``check_*`` methods are the last of them)."""
        self.decls = Decls(parsed.lines)
        # names p4c's BMv2 back end will not give a calculation (``ir/calcs.py``)
        self.identifiers = frozenset(str(t) for t in parsed.tree.scan_values(
            lambda v: isinstance(v, Token) and v.type in ("IDENTIFIER", "TYPE_IDENTIFIER")))
        self.tables: dict[str, TableInfo] = {}
        self.actions: dict[str, ActionInfo] = {}
        self.direct_actions: set[str] = set()   # actions called from an apply block
        self.extern_insts: dict[str, ExternInst] = {}
        self.profiles: dict[str, ProfileInfo] = {}   # action profiles/selectors by P4Info name
        self.digests: dict[str, StructT] = {}
        self.value_sets: dict[str, Any] = {}
        self.functions: dict = {}
        self.warnings: list[str] = []
        self._pyids: dict[str, str] = {}
        self.generated: set[str] = set()
        self.checking_unused = False

    # ------------------------------------------------------------ the checking passes
    def declare(self) -> None:
        """The core errors, the global scope, the Python names of the types and the top-level
        externs and actions."""
        d = self.decls
        for e in ("NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
                  "ParserInvalidArgument"):
            if e not in d.errors:
                d.errors.append(e)
        self.err_short = d.errors.index("PacketTooShort")
        self.err_nomatch = d.errors.index("NoMatch")
        self.err_oob = d.errors.index("StackOutOfBounds")
        self.gscope = GlobalScope(d)
        self.calls = Calls(self)
        self.externs = self.calls
        self._type_names()
        self._top_actions()

    def check_functions(self) -> None:
        """Functions, in declaration order: a function may call earlier ones."""
        for name, tree in self.decls.functions.items():
            self.functions[name] = FunctionChecker(self, tree).generate()

    def check_v1model(self) -> None:
        """Direct meters, then v1model's and BMv2's program rules."""
        self._check_direct_meters()
        v1model_rules.check_program(self.decls, self.decls.controls, self.decls.parsers, self.block_names,
                                    self.decls.functions)
        v1model_rules.check_user_types(self.decls, self.block_params["parser"])

    # ------------------------------------------------------------ helpers
    def pyident(self, name: str) -> str:
        p = re.sub(r"[^A-Za-z0-9_]", "_", name)
        while p in self._pyids.values() and self._pyids.get(name) != p:
            p += "_"
        self._pyids[name] = p
        return p

    def top_action(self, name: str, node) -> ActionInfo | None:
        return self._top.actions.get(name)

    def _check_direct_meters(self) -> None:
        """p4c's BMv2 back end (``DirectMeterMap::setTable``): a table with a direct meter needs
        an action that reads it (the read's target is the meter's result field)."""
        for info in self.tables.values():
            if info.direct_meter and not self.extern_insts[info.direct_meter].read_targets:
                raise self.decls.err(info.node, f"table {info.local} with direct meter "
                                                f"{info.direct_meter} must have at least one action "
                                                "with a read method call")

    # ------------------------------------------------------------ generation
    def _type_names(self) -> None:
        """Python class names of the header/struct types (``layout.class_source``, both backends'
        type names)."""
        for t in self.decls.header_order:
            self._type_name(t)
        self.decls.type_namer = self._type_name

    def _type_name(self, t: StructLikeT) -> None:
        t.pyname = ("H_" if isinstance(t, HeaderT) else "S_") + self.pyident(t.name)

    def _top_actions(self) -> None:
        self._top = _TopLevelChecker(self)
        self._top.scope = self.gscope
        for d in self.decls.global_externs:
            self.calls.instantiate(self._top, d)
        self._top.scope = Scope(self.gscope)  # top-level actions: their parameters, then globals
        for name, node in self.decls.actions.items():
            info = self._top.action(node, top_level=True)
            self.gscope.declare(name, Sym("action", BoolT(), info.pyfn, False, info))

    def check_pipeline(self, tree: Tree) -> None:
        """``main``: a V1Switch of six blocks, each checked in its role."""
        d = self.decls
        main = d.instances.get("main")
        if main is None:
            named = next((c for decl in tree.children if isinstance(decl, Tree)
                          for c in decl.children[:4] if isinstance(c, Tree) and c.data == "name"
                          and str(c.children[0]) == "main"), None)
            raise d.err(named, "main: is not a package instance" if named is not None
                        else "program has no 'main' package instance")
        t = d.resolve_type(main.children[1])
        tname = t.base if isinstance(t, SpecializedT) else getattr(t, "name", "")
        if tname != "V1Switch":
            raise d.err(main, f"main must be a V1Switch (v1model), not {tname}")
        arg_nodes = main.children[2].children if main.children[2] is not None else []
        args = [a for a in arg_nodes if a is not None]
        if len(args) != 6:
            raise d.err(main, f"V1Switch takes 6 arguments, got {len(args)}")
        args = self._v1switch_positional(main, args)
        self.block_params: dict[str, list] = {}
        self.block_names: dict[str, str] = {}
        for role, a in zip(V1_ORDER, args, strict=False):
            if not (isinstance(a, Tree) and a.data == "ctor_call"):
                raise d.err(a, "V1Switch arguments must be parser/control instantiations like MyIngress()")
            name = str(a.children[0].children[-1])
            if role == "parser":
                if name not in d.parsers:
                    raise d.err(a, f"{name} is not a parser")
                g = ParserChecker(self, name, d.parsers[name])
            else:
                if name not in d.controls:
                    raise d.err(a, f"{name} is not a control")
                g = ControlChecker(self, name, d.controls[name])
            g.generate()
            self.block_params[role] = g.params
            self.block_names[role] = name
        self._check_signatures()

    def _v1switch_positional(self, main: Tree, args: list) -> list:
        """``V1Switch(p = P(), ig = I(), ...)``: named arguments in any order, put in v1model's
        parameter order (``p vr ig eg ck dep``), as p4c binds them; all named or none."""
        named = [a for a in args if isinstance(a, Tree) and a.data == "named_arg"]
        if not named:
            return args
        by_name = bind_named(args, set(V1_PARAMS), self.decls.err, main, "V1Switch")
        return [by_name[k] for k in V1_PARAMS]

    def check_unused_blocks(self) -> None:
        """Type-check parsers/controls that are declared but never instantiated (as p4c does);
        their code and tables are discarded."""
        used = self.generated
        saved = (dict(self.tables), dict(self.actions), dict(self.extern_insts), dict(self.value_sets),
                 {k: (v, list(v.tables)) for k, v in self.profiles.items()})
        self.checking_unused = True
        try:
            for name, tree in self.decls.controls.items():
                if name not in used:
                    ControlChecker(self, f"__unused__.{name}", tree).generate()
            for name, tree in self.decls.parsers.items():
                if name not in used:
                    ParserChecker(self, f"__unused__.{name}", tree).generate()
        finally:
            self.tables, self.actions, self.extern_insts, self.value_sets, profs = saved
            self.profiles = {k: v for k, (v, _t) in profs.items()}
            for v, tabs in profs.values():
                v.tables[:] = tabs
            self.checking_unused = False

    def _check_signatures(self) -> None:
        d = self.decls
        want = {"parser": 4, "verify": 2, "ingress": 3, "egress": 3, "compute": 2, "deparser": 2}
        for role, n in want.items():
            ps = self.block_params[role]
            if len(ps) != n:
                raise d.err(None, f"{self.block_names[role]} has {len(ps)} parameters; v1model {role} "
                                  f"needs {n}")
        for role, dirs in _V1_DIRECTIONS.items():
            for p, want_dir in zip(self.block_params[role], dirs, strict=True):
                if p.direction != want_dir:
                    raise d.err(p.node, f"{self.block_names[role]}: parameter {p.name} is "
                                        f"'{p.direction or 'directionless'}', v1model's {role} "
                                        f"declares it '{want_dir or 'directionless'}' (direction "
                                        "mismatch)")
        hdr_t = self.block_params["parser"][1].type
        meta_t = self.block_params["parser"][2].type
        for role in ("verify", "ingress", "egress", "compute"):
            ps = self.block_params[role]
            if ps[0].type is not hdr_t or ps[1].type is not meta_t:
                raise d.err(None, f"{self.block_names[role]}: header/metadata types differ from the parser's")
        if self.block_params["deparser"][1].type is not hdr_t:
            raise d.err(None, f"{self.block_names['deparser']}: header type differs from the parser's")
        if not isinstance(hdr_t, StructT) or not isinstance(meta_t, StructT):
            raise d.err(None, "v1model headers and metadata must be structs")
        self.hdr_t, self.meta_t = hdr_t, meta_t
        self.std_t = d.types["standard_metadata_t"]


__all__ = ["Program", "V1_ORDER"]

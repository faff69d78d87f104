"""The python backend: the typed IR (``softswitch/ir``) compiled to Python source, executed once.

``build(compiled, inst)`` takes the compiled program's IR, generates one module (``pgen.py``:
classes, states, actions, tables, controls; ``pstmt.py`` statements; ``pexpr.py`` expressions)
and ``exec``s it in a namespace that holds one switch's run-time objects (``instances.py``): table
runtimes (``tables.Table``), registers/counters/meters (``externs.py``), parser value sets and
the per-packet context ``_C`` that ``pipeline.PacketFlow`` swaps in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..check.types import StructLikeT
from ..ir import nodes as ir
from ..target.externs import hash_functions, pack_bits
from ..target.instances import PacketCtx
from ..target.profiles import selector_hash
from . import rtlib
from .pgen import PyGen

ROLES = ("parser", "verify", "ingress", "egress", "compute", "deparser")


@dataclass
class PyCode:
    """The executed module of one program: its source, namespace and role entry points."""

    source: str
    ns: dict[str, Any]
    ir: ir.Program
    entries: dict[str, str]  # v1model role -> function name

    def fn(self, role: str):
        return self.ns[self.entries[role]]

    def cls(self, t: StructLikeT):
        return self.ns[t.pyname]


def build(compiled, inst, trace: bool = False) -> PyCode:
    """Compile ``compiled``'s typed IR (a ``compiler.CompiledProgram``) to Python whose
    namespace holds one switch's run-time objects ``inst`` (``instances.Instances``)."""
    irp = compiled.ir
    gen = PyGen(irp, trace)
    source = gen.generate()
    ns = _namespace(inst, irp, gen)
    try:
        code = compile(source, "<p4-generated>", "exec")
    except SyntaxError as e:  # a bug in the generator, not in the program
        raise RuntimeError(f"internal error in generated code line {e.lineno}: {e.text}") from e
    exec(code, ns)
    entries = {}
    for role in ROLES:
        b = irp.blocks[irp.roles[role]]
        entries[role] = f"{'P' if b.kind == 'parser' else 'C'}_{gen.cid(b.name)}"
    return PyCode(source, ns, irp, entries)


def _namespace(inst, irp: ir.Program, gen: PyGen) -> dict[str, Any]:
    errors = irp.errors
    ns: dict[str, Any] = {
        "_Exit": rtlib.Exit, "_Locals": rtlib.Locals, "_Reject": rtlib.Reject, "_Stack": rtlib.Stack,
        "_mk": rtlib.mk, "_mkstack": rtlib.mkstack, "_eq": rtlib.eq, "_fresh": rtlib.fresh,
        "_OOR": rtlib.IndexOutOfRange,
        "_pack": pack_bits, "_SELH": selector_hash, "_HASH": hash_functions(inst.state),
        "_CRC": inst.state.crcs,
        "_look": rtlib.look, "_lookh": rtlib.lookh,
        "_adv": rtlib.adv, "_REJECT": rtlib.reject_state, "_ST": inst.state, "_C": PacketCtx(),
        "_rand": inst.state.rng.randint,
        "_ERR_HDR_TOO_LONG": errors.index("HeaderTooShort"),
        "_ERR_INVALID_ARG": errors.index("ParserInvalidArgument"),
    }
    for name in irp.tables:
        ns[f"TB_{gen.cid(name)}"] = inst.tables[name]
    for name in irp.externs:
        ns[gen.obj(name)] = inst.externs[name]
    for i, name in enumerate(irp.value_sets):
        ns[f"VS_{i}"] = inst.value_sets[name]
    return ns


__all__ = ["PyCode", "build"]

"""C helpers for compound values (headers, structs, header unions, stacks): assignment and
equality with the semantics p4c + BMv2 give them.

- assignment: BMv2's ``assign_header`` (an invalid source only invalidates the destination,
  whose fields stay), ``assign_union`` / ``assign_header_stack`` member by member, structs field
  by field (p4c copies structs field by field);
- ``==``: p4c's ``RemoveComplexComparisons``: two headers are equal when both are invalid, or
  both valid with equal fields; structs and unions member by member; stacks element by element.
"""

from __future__ import annotations

from ..check.fields import pyfield, struct_varbits, vbl_name
from ..check.types import HeaderT
from ..ir import nodes as ir
from ..ir.common import irtype
from .cexpr import ctype


class CompoundFns:
    """Registers the compound types that need a C assignment or equality function and emits
    them (prototypes first, so the order of definitions does not matter)."""

    def __init__(self) -> None:
        self.asg: dict[str, ir.Comp | ir.Stack] = {}
        self.eq: dict[str, ir.Comp | ir.Stack] = {}

    def asg_fn(self, t: ir.Comp | ir.Stack) -> str:
        return self._register(self.asg, "asg_", t)

    def eq_fn(self, t: ir.Comp | ir.Stack) -> str:
        return self._register(self.eq, "eq_", t)

    def _register(self, table: dict, prefix: str, t) -> str:
        name = prefix + ctype(t)
        if name not in table:
            table[name] = t
            for sub in _components(t):
                self._register(table, prefix, sub)
        return name

    def prototypes(self) -> list[str]:
        out = [f"static void {n}({ctype(t)} *d, const {ctype(t)} *s);" for n, t in self.asg.items()]
        out += [f"static int {n}(const {ctype(t)} *a, const {ctype(t)} *b);" for n, t in self.eq.items()]
        return out

    def definitions(self) -> list[str]:
        out: list[str] = []
        for n, t in self.asg.items():
            out += _asg_def(n, t)
        for n, t in self.eq.items():
            out += _eq_def(n, t)
        return out


def _components(t) -> list:
    if isinstance(t, ir.Stack):
        return [ir.Comp(t.elem)]
    return [it for _f, ft in t.t.fields if isinstance(it := irtype(ft), (ir.Comp, ir.Stack))]


def _asg_def(name: str, t) -> list[str]:
    ct = ctype(t)
    out = [f"static void {name}({ct} *d, const {ct} *s) {{"]
    if isinstance(t, ir.Stack):
        out.append(f"    d->n = s->n; for (int i = 0; i < {t.size}; i++) asg_{ctype(ir.Comp(t.elem))}"
                   "(&d->h[i], &s->h[i]);")
    elif isinstance(t.t, HeaderT):
        out.append("    if (!s->_v) { d->_v = 0; return; }")
        out.append("    *d = *s;")
    else:
        for f, ft in t.t.fields:
            it = irtype(ft)
            fc = f"f_{pyfield(f)}"
            if isinstance(it, (ir.Comp, ir.Stack)):
                out.append(f"    asg_{ctype(it)}(&d->{fc}, &s->{fc});")
            else:
                out.append(f"    d->{fc} = s->{fc};")
        out += [f"    d->{n} = s->{n};" for n in (vbl_name(t.t, f) for f in struct_varbits(t.t))]
        out.append("    (void)d; (void)s;")
    out.append("}")
    return out


def _eq_def(name: str, t) -> list[str]:
    ct = ctype(t)
    out = [f"static int {name}(const {ct} *a, const {ct} *b) {{"]
    if isinstance(t, ir.Stack):
        el = ctype(ir.Comp(t.elem))
        out.append(f"    for (int i = 0; i < {t.size}; i++) if (!eq_{el}(&a->h[i], &b->h[i])) return 0;")
        out.append("    return 1;")
        out.append("}")
        return out
    conds = []
    for f, ft in t.t.fields:
        it = irtype(ft)
        fc = f"f_{pyfield(f)}"
        if isinstance(it, (ir.Comp, ir.Stack)):
            conds.append(f"eq_{ctype(it)}(&a->{fc}, &b->{fc})")
        elif isinstance(it, ir.Bits) and it.width > 128:  # a wide varbit: a byte array
            conds.append(f"!memcmp(&a->{fc}, &b->{fc}, sizeof a->{fc})")
        else:
            conds.append(f"a->{fc} == b->{fc}")
    if isinstance(t.t, HeaderT):
        out.append("    if (a->_v != b->_v) return 0;")
        out.append("    if (!a->_v) return 1;")
    out.append(f"    return {' && '.join(conds) or '1'};")
    out.append("}")
    return out

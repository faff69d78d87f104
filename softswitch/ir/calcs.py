"""Names of hash and checksum calculations as p4c's BMv2 back end gives them in its JSON.

Every ``hash`` call and every ``verify_checksum``/``update_checksum`` (``_with_payload`` too)
becomes one BMv2 *calculation*, named by p4c's ``refMap->newName("calc_")``: ``calc``, then
``calc_0``, ``calc_1``..., skipping names the program itself uses.  BMv2 keeps one CRC
configuration per calculation, and ``set_crc16_parameters <calc> ...`` / ``set_crc32_parameters``
name it, so a ``crc16_custom``/``crc32_custom`` call site is configured by that name.

p4c converts in this order (``SimpleSwitchBackend::convert``): the parser, every action (after
its mid end: the actions of the pipeline controls in declaration order, an inlined control
instance's where its instance was declared, then the actions it synthesises from the apply
body's statements, in order), then the compute-checksum control, then the verify-checksum one.
p4c inlines functions and directly called actions at each call, so a calculation inside one
reached from several places has a name per call: here the second and later calls get a copy of
the function or action (``name#2``...) whose calculations are named where the copy is reached.
p4c inlines the apply body of a control instance at each of its apply sites too: a second and
later site whose instance holds calculations runs a copy of the body (``inst#2``..., an
``ir.Block`` whose ``frame`` is the instance's: the instance's variables stay one per instance),
named where that site is reached.
"""

from __future__ import annotations

import copy
import dataclasses

from . import nodes as ir
from .walk import nodes_of

CALC_CALLS = frozenset({"hash", "verify_checksum", "update_checksum", "verify_checksum_with_payload",
                        "update_checksum_with_payload"})


class _Namer:
    """p4c's ``ReferenceMap::newName`` for the base ``calc``: ``calc``, then ``calc_<n>`` with n
    counting up from 0 past the names already used."""

    def __init__(self, taken: set[str]):
        self.taken = set(taken)
        self.counter = 0

    def fresh(self) -> str:
        name = "calc"
        while name in self.taken:
            name = f"calc_{self.counter}"
            self.counter += 1
        self.taken.add(name)
        return name


def _clone(x):
    """A copy of IR statements and expressions (types and other objects shared); copied
    calculation calls lose their names."""
    if isinstance(x, list):
        return [_clone(y) for y in x]
    if isinstance(x, tuple):
        return tuple(_clone(y) for y in x)
    if isinstance(x, dict):
        return {k: _clone(v) for k, v in x.items()}
    if isinstance(x, (ir.Expr, ir.Stmt)):
        y = copy.copy(x)
        for f in dataclasses.fields(x):
            setattr(y, f.name, _clone(getattr(x, f.name)))
        if isinstance(y, ir.ExternCall):
            y.extra.pop("calc", None)
        return y
    return x


class _Walk:
    def __init__(self, p: ir.Program, taken: set[str]):
        self.p = p
        self.namer = _Namer(taken)
        self.calcs: dict[str, str] = {}   # name -> algorithm, in p4c's order
        self.seen: set[int] = set()       # functions and actions already walked
        self.copies = True                # a second call of a function/action gets a copy
        self._calc_memo: dict[int, bool] = {}

    def visit(self, x) -> None:
        for node in nodes_of(x, (ir.ExternCall, ir.ActionCall, ir.FuncCall, ir.CallF, ir.ControlApply)):
            if isinstance(node, ir.ExternCall):
                if node.name in CALC_CALLS and "calc" not in node.extra:
                    node.extra["calc"] = name = self.namer.fresh()
                    self.calcs[name] = node.extra["algo"]
            elif isinstance(node, ir.ActionCall):
                node.action = self._site(self.p.actions, node.action)
            elif isinstance(node, (ir.FuncCall, ir.CallF)):
                node.func = self._site(self.p.functions, node.func)
            else:
                code = self._block_site(node.control)
                if self.copies:  # the last sweep (no copies) keeps what the sites were given
                    node.code = code

    def _once(self, obj) -> None:
        if obj is not None and id(obj) not in self.seen:
            self.seen.add(id(obj))
            self.visit(obj.body)

    def _site(self, table: dict, name: str) -> str:
        """The function or action a call reaches: itself the first time, a copy of it on a
        later call when it holds calculations (p4c inlines each call)."""
        obj = table.get(name)
        if obj is None:
            return name
        if id(obj) in self.seen and self.copies and self._has_calc(obj):
            n = 2
            while f"{name}#{n}" in table:
                n += 1
            obj = dataclasses.replace(obj, name=f"{name}#{n}", body=_clone(obj.body))
            table[obj.name] = obj
        self._once(obj)
        return obj.name

    def _block_site(self, name: str) -> str:
        """The code an apply site of instance ``name`` runs: "" (the instance's own) the first
        time, a copy of its apply body on a later site when it holds calculations."""
        blk = self.p.blocks.get(name)
        if blk is None:
            return ""
        code = ""
        if id(blk) in self.seen and self.copies and self._has_calc(blk):
            n = 2
            while f"{name}#{n}" in self.p.blocks:
                n += 1
            code = f"{name}#{n}"
            blk = dataclasses.replace(blk, name=code, init=_clone(blk.init), body=_clone(blk.body),
                                      frame=name)
            self.p.blocks[code] = blk
        if id(blk) not in self.seen:
            self.seen.add(id(blk))
            self.visit(list(blk.init) + list(blk.body))
        return code

    def _has_calc(self, obj) -> bool:
        if obj is None:
            return False
        if id(obj) not in self._calc_memo:
            self._calc_memo[id(obj)] = False  # no recursion in P4; a guard all the same
            body = list(obj.init) + list(obj.body) if isinstance(obj, ir.Block) else obj.body
            kinds = (ir.ExternCall, ir.ActionCall, ir.FuncCall, ir.CallF, ir.ControlApply)
            self._calc_memo[id(obj)] = any(
                n.name in CALC_CALLS if isinstance(n, ir.ExternCall)
                else self._has_calc(self.p.actions.get(n.action)) if isinstance(n, ir.ActionCall)
                else self._has_calc(self.p.blocks.get(n.control)) if isinstance(n, ir.ControlApply)
                else self._has_calc(self.p.functions.get(n.func)) for n in nodes_of(body, kinds))
        return self._calc_memo[id(obj)]


def _family(p: ir.Program, root: str) -> list[str]:
    """``root`` and the control instances it applies, transitively."""
    out, todo = [], [root]
    while todo:
        b = todo.pop(0)
        if b in out or b not in p.blocks:
            continue
        out.append(b)
        blk = p.blocks[b]
        todo += [ca.control for ca in nodes_of(list(blk.init) + list(blk.body), ir.ControlApply)]
    return out


def name_calculations(p: ir.Program, taken: set[str], control_order: list[str]) -> dict[str, str]:
    """Give every calculation call of ``p`` its BMv2 name (``ExternCall.extra['calc']``); returns
    name -> algorithm in p4c's order.  ``taken``: identifiers of the program; ``control_order``:
    control names in declaration order (decides whether ingress or egress comes first)."""
    w = _Walk(p, taken)
    w.visit([s.body for s in p.blocks[p.roles["parser"]].states])
    pipes = sorted((p.roles["ingress"], p.roles["egress"]),
                   key=lambda b: control_order.index(b) if b in control_order else len(control_order))
    for root in pipes:
        fam = _family(p, root)
        tabled = {a for t in p.tables.values() if t.control in fam for a in t.actions}
        for a in list(p.actions.values()):
            if a.name in tabled and (a.control is None or a.control in fam):
                w._once(a)
        w.visit(list(p.blocks[root].init) + list(p.blocks[root].body))
    for role in ("compute", "verify"):
        w.visit(p.blocks[p.roles[role]].body)
    # what p4c would drop as unused still needs a name to run here (no copies for it)
    w.copies = False
    w.visit([[a.body for a in p.actions.values()], [f.body for f in p.functions.values()],
             [list(b.init) + list(b.body) + [s.body for s in b.states] for b in p.blocks.values()]])
    return w.calcs


__all__ = ["CALC_CALLS", "name_calculations"]
